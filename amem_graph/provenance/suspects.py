"""Failure suspects: the memories (or authors) most implicated in failed outcomes.

A memory is a suspect once a failed outcome charged it (a ``CREDITED`` edge from a failed
outcome: it was used, or presumed used, in an episode that failed). Suspects are ranked by
suspicion ``1 - bound``, where ``bound`` is the optimistic bound recall ranks on
(``recall/confidence.py``): the memory whose record, read as kindly as recall reads it, is
worst comes first. Two failures and no success (0.56) outrank one (0.43); a memory that failed
once among many successes barely registers. An author's suspicion is the same over the credit
all its memories received, so failures spread over many memories of one author add up; among
memories of equal suspicion, the one whose author is more suspicious comes first (a poisoner
whose memories each fail once, then sink in recall, is caught through its author).

The same ranking as ``cypher/failure_suspects.cypher`` (memories) on Neo4j.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from amem_graph.core.beta import bound, posterior
from amem_graph.core.models import Memory
from amem_graph.core.schema import EPISODE, OUTCOME
from amem_graph.stores.base import GraphStore, MemoryFilter

SuspectKind = Literal["memory", "agent"]


class Suspect(BaseModel, defer_build=True):
    """A memory or an agent implicated in failures, with the evidence."""

    kind: SuspectKind
    id: str
    #: 1 - the optimistic bound of its outcome record: higher is more suspicious
    suspicion: float
    #: posterior mean of its outcome record (an agent's: its trust)
    confidence: float
    successes: float
    failures: float
    #: failed episodes whose outcome charged it (an agent: charged one of its memories)
    failed_episodes: list[str] = Field(default_factory=list)
    #: a memory's author and the author's suspicion; an agent's charged memories
    agent: str | None = None
    author_suspicion: float | None = None
    memory_ids: list[str] = Field(default_factory=list)
    status: str | None = None
    content: str | None = None


def _rank(suspects: list[Suspect], limit: int) -> list[Suspect]:
    suspects.sort(key=lambda s: (-s.suspicion, -(s.author_suspicion or 0.0), -s.failures, s.id))
    return suspects[:limit]


def _suspect(kind: SuspectKind, sid: str, s: float, f: float, z: float) -> dict[str, object]:
    return {
        "kind": kind,
        "id": sid,
        "suspicion": 1.0 - bound(s, f, z),
        "confidence": posterior(s, f)[0],
        "successes": s,
        "failures": f,
    }


def charged(store: GraphStore) -> dict[str, set[str]]:
    """Memory id -> the failed episodes whose outcome charged it."""
    failed = store.find_nodes(OUTCOME, {"success": False})
    episode = {o.id: str(o.props["episode"]) for o in failed}
    out: dict[str, set[str]] = {}
    for e in store.edges(sorted(episode), ["CREDITED"], "out"):
        if float(e.props.get("credit", 0.0)) > 0:
            out.setdefault(e.dst, set()).add(episode[e.src])
    return out


def failure_suspects(
    store: GraphStore,
    *,
    by: SuspectKind = "memory",
    limit: int = 20,
    scope: str | None = None,
    statuses: tuple[str, ...] | None = ("active",),
    z: float = 1.0,
) -> list[Suspect]:
    """The most suspicious memories (``by="memory"``) or authors (``by="agent"``), first first.

    Memories are those in ``scope`` (any, if None) with one of ``statuses`` (any, if None):
    by default what is still active, so a retracted suspect is not proposed again. With a
    scope, nothing of another scope counts: an author's suspicion sums only its memories in
    the scope, and only the scope's failed episodes are listed.
    """
    episodes = charged(store)
    scopes = None if scope is None else (scope,)
    flt = MemoryFilter(scopes=scopes, statuses=statuses)
    memories = [
        m for m in store.get_memories(sorted(episodes), embeddings=False).values() if flt.admits(m)
    ]
    if scope is not None:
        _keep_episodes_of(store, scope, episodes)
    authors = sorted({m.agent for m in memories if m.agent is not None})
    totals: dict[str, tuple[float, float]] = {a: (0.0, 0.0) for a in authors}
    if authors:
        everything = MemoryFilter(scopes=scopes, statuses=None, agents=tuple(authors))
        for w in store.find_memories(everything):
            s, f = totals[w.agent or ""]
            totals[w.agent or ""] = (s + w.successes, f + w.failures)
    if by == "memory":
        return _rank([_memory_suspect(m, episodes[m.id], totals, z) for m in memories], limit)
    suspects = []
    for agent in authors:
        mine = [m for m in memories if m.agent == agent]
        s, f = totals[agent]
        suspects.append(
            Suspect.model_validate(
                _suspect("agent", agent, s, f, z)
                | {
                    "failed_episodes": sorted(set().union(*(episodes[m.id] for m in mine))),
                    "memory_ids": sorted(m.id for m in mine),
                }
            )
        )
    return _rank(suspects, limit)


def _memory_suspect(
    m: Memory, failed: set[str], authors: dict[str, tuple[float, float]], z: float
) -> Suspect:
    author = None if m.agent is None else 1.0 - bound(*authors[m.agent], z)
    return Suspect.model_validate(
        _suspect("memory", m.id, m.successes, m.failures, z)
        | {
            "failed_episodes": sorted(failed),
            "agent": m.agent,
            "author_suspicion": author,
            "status": m.status,
            "content": m.content,
        }
    )


def _keep_episodes_of(store: GraphStore, scope: str, episodes: dict[str, set[str]]) -> None:
    """Drop, in place, the failed episodes of other scopes from each memory's list."""
    ids = sorted(set().union(*episodes.values())) if episodes else []
    nodes = store.get_nodes(EPISODE, ids)
    ours = {i for i, n in nodes.items() if n.props.get("scope") == scope}
    for memory_id, found in episodes.items():
        episodes[memory_id] = found & ours
