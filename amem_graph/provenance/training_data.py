"""Labelled retrieval data, a side effect of read tracking: one row per recall in an episode.

The READ edges one ``EpisodeSession.recall`` writes share an edge ``key``; a row gathers them.

Row schema (``TrainingRow``; ``write_jsonl`` writes one JSON object per line, times in ISO 8601):

==================  ============================  ==============================================
field               type                          meaning
==================  ============================  ==============================================
episode_id          str                           the episode that recalled
recall_id           str                           the READ edges' shared key (one per recall)
query               str                           the query text
at                  datetime | null               when the recall happened
agent               str | null                    the episode's agent
task                str | null                    the episode's task
scope               str | null                    the episode's scope
retrieved           list of objects, by rank      ``memory_id``, ``rank``, ``score``, ``status``
                                                  (the memory's status now)
outcome             "success" | "failure" | null  the episode's outcome; null while unknown
outcome_score       float | null                  the outcome's score, if one was given
retracted_ids       list[str]                     retrieved memories retracted or quarantined
                                                  since (by an active retraction)
retracted_in_play   bool                          whether ``retracted_ids`` is non-empty
==================  ============================  ==============================================

Rows are ordered by episode start, then recall time. A forgotten memory's READ edges are erased
with it, so it never appears in a row.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from amem_graph.core.schema import EPISODE, OUTCOME
from amem_graph.provenance.retraction import current_statuses
from amem_graph.stores.base import Edge, GraphStore, Node

_CHUNK = 500
_HELD = ("retracted", "quarantined")


class Retrieved(BaseModel, defer_build=True):
    """One memory a recall returned."""

    memory_id: str
    rank: int
    score: float
    status: str


class TrainingRow(BaseModel, defer_build=True):
    """One recall: the query, what came back, and how the episode ended."""

    episode_id: str
    recall_id: str
    query: str
    at: datetime | None = None
    agent: str | None = None
    task: str | None = None
    scope: str | None = None
    retrieved: list[Retrieved] = Field(default_factory=list)
    outcome: Literal["success", "failure"] | None = None
    outcome_score: float | None = None
    retracted_ids: list[str] = Field(default_factory=list)
    retracted_in_play: bool = False


def training_rows(
    store: GraphStore, *, scope: str | None = None, agent: str | None = None
) -> Iterator[TrainingRow]:
    """Rows for every recall, optionally only in episodes of one scope or agent.

    Episodes are read in chunks so memory stays bounded on large stores.
    """
    where: dict[str, Any] = {}
    if scope is not None:
        where["scope"] = scope
    if agent is not None:
        where["agent"] = agent
    episodes = sorted(store.find_nodes(EPISODE, where), key=_started)
    for start in range(0, len(episodes), _CHUNK):
        yield from _chunk_rows(store, episodes[start : start + _CHUNK])


def _started(node: Node) -> tuple[str, str]:
    started = node.props.get("started_at")
    return (started.isoformat() if isinstance(started, datetime) else "", node.id)


def _chunk_rows(store: GraphStore, episodes: Sequence[Node]) -> Iterator[TrainingRow]:
    ids = [n.id for n in episodes]
    reads = store.edges(ids, ["READ"], "out")
    outcomes = _outcomes(store, ids)
    statuses = current_statuses(store, sorted({e.dst for e in reads}))
    recalls: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for e in reads:
        recalls[(e.src, e.key)].append(e)
    by_episode: dict[str, list[list[Edge]]] = defaultdict(list)
    for (episode_id, _key), edges in recalls.items():
        by_episode[episode_id].append(sorted(edges, key=lambda e: int(e.props.get("rank", 0))))
    for node in episodes:
        for edges in sorted(by_episode[node.id], key=_recall_order):
            yield _row(node, edges, outcomes.get(node.id), statuses)


def _recall_order(edges: list[Edge]) -> tuple[str, str]:
    at = edges[0].props.get("at")
    return (at.isoformat() if isinstance(at, datetime) else "", edges[0].key)


def _outcomes(store: GraphStore, episode_ids: Sequence[str]) -> dict[str, Node]:
    links = store.edges(episode_ids, ["RESULTED_IN"], "out")
    nodes = store.get_nodes(OUTCOME, [e.dst for e in links])
    return {e.src: nodes[e.dst] for e in links if e.dst in nodes}


def _row(
    episode: Node, edges: list[Edge], outcome: Node | None, statuses: dict[str, str]
) -> TrainingRow:
    first = edges[0]
    retrieved = [
        Retrieved(
            memory_id=e.dst,
            rank=int(e.props.get("rank", 0)),
            score=float(e.props.get("score", 0.0)),
            status=statuses.get(e.dst, "active"),
        )
        for e in edges
    ]
    held = sorted({r.memory_id for r in retrieved if r.status in _HELD})
    success = None if outcome is None else outcome.props.get("success")
    return TrainingRow(
        episode_id=episode.id,
        recall_id=first.key,
        query=str(first.props.get("query", "")),
        at=first.props.get("at"),
        agent=episode.props.get("agent"),
        task=episode.props.get("task"),
        scope=episode.props.get("scope"),
        retrieved=retrieved,
        outcome=None if success is None else ("success" if success else "failure"),
        outcome_score=None if outcome is None else outcome.props.get("score"),
        retracted_ids=held,
        retracted_in_play=bool(held),
    )


def write_jsonl(rows: Iterable[TrainingRow], path: str | os.PathLike[str]) -> int:
    """Write rows as JSON Lines (UTF-8); returns how many were written."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n")
            count += 1
    return count
