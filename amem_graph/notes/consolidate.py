"""Consolidation: distil the memories of an episode or a task into ``insight`` memories.

Each insight is DERIVED_FROM the memories it rests on, so retracting a source takes the insight
down with it (a summary never keeps a retracted fact alive). A model writes the insights and
names their sources by id (checked; unknown ids dropped and counted); offline, one extractive
summary is made of the most central sentences: those whose terms recur most across the
sources. Consolidating the same sources again gives the same insight (offline) or replaces the
previous one (a model's new wording supersedes the old insight; an earlier wording that comes
back is written anew and supersedes the later one).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from amem_graph.core.errors import NotFoundError, ValidationError
from amem_graph.core.models import Memory
from amem_graph.core.schema import EPISODE, TASK
from amem_graph.core.text import analyze
from amem_graph.notes.llm import NoteLLM
from amem_graph.notes.prompts import CONSOLIDATE_SYSTEM, ConsolidationAnswer, consolidate_prompt
from amem_graph.stores.base import GraphStore, MemoryFilter

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
#: sentences an offline summary keeps, and its length bound
SUMMARY_SENTENCES = 3
SUMMARY_CHARS = 600


@dataclass(frozen=True)
class Insight:
    """One insight to write: its text and the source ids it rests on."""

    content: str
    sources: tuple[str, ...]


def sources_of(store: GraphStore, episode: str | None, task: str | None) -> list[Memory]:
    """The active, non-insight memories of an episode or a task, oldest first."""
    if (episode is None) == (task is None):
        raise ValidationError("consolidate takes exactly one of episode or task")
    label, hub, via = (EPISODE, episode, "GENERATED_IN") if episode else (TASK, task, "FOR_TASK")
    assert hub is not None
    if hub not in store.get_nodes(label, [hub]):
        raise NotFoundError(f"no {label.lower()} {hub!r}")
    ids = sorted({e.src for e in store.edges([hub], [via], "in")})
    found = store.get_memories(ids, embeddings=False)
    live = [m for m in found.values() if m.status == "active" and m.kind != "insight"]
    return sorted(live, key=lambda m: (m.created_at, m.id))


def offline_insight(memories: Sequence[Memory]) -> Insight:
    """An extractive summary: the most central sentences (their terms recur across the most
    sources), in the order they were written. Reads only the sources, so it is the same
    however the store around them changed."""
    sentences = [
        (i, s.strip())
        for i, s in enumerate(s for m in memories for s in _SENTENCE.split(m.content))
        if s.strip()
    ]
    spread: Counter[str] = Counter()
    for m in memories:
        spread.update(set(analyze(m.content)))
    scored = []
    for i, text in sentences:
        terms = set(analyze(text))
        weight = sum(spread[t] - 1 for t in terms) / (1.0 + len(terms)) ** 0.5
        scored.append((weight, i, text))
    best = sorted(scored, key=lambda x: (-x[0], x[1]))[:SUMMARY_SENTENCES]
    summary = " ".join(text for _, _, text in sorted(best, key=lambda x: x[1]))
    if len(summary) > SUMMARY_CHARS:
        summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
    return Insight(summary, tuple(m.id for m in memories))


def model_insights(memories: Sequence[Memory], llm: NoteLLM) -> list[Insight] | None:
    """The model's insights with checked sources; None when it fell back."""
    answer = llm.ask(
        "consolidate", ConsolidationAnswer, CONSOLIDATE_SYSTEM, consolidate_prompt(list(memories))
    )
    if answer is None:
        return None
    real = {m.id for m in memories}
    out = []
    for item in answer.insights:
        kept = tuple(dict.fromkeys(s for s in item.sources if s in real))
        llm.usage.add("consolidate", "dropped_ids", len(item.sources) - len(kept))
        if kept:
            out.append(Insight(" ".join(item.content.split()), kept))
    return out or None


def insight_id(insight: Insight, after: str | None = None) -> str:
    """Same text from the same sources, same id: consolidating twice writes nothing new.
    ``after``: the id the same text had when a later wording superseded it."""
    key = "\n".join([insight.content, *sorted(insight.sources), *([after] if after else [])])
    return "insight-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def fresh_id(store: GraphStore, insight: Insight) -> str:
    """The insight's id, past those the same text had that a later wording superseded: a
    wording that comes back is a new insight superseding the later one, not the superseded
    one handed back while the later one stays current (nor a supersession cycle)."""
    mid = insight_id(insight)
    while store.statuses([mid]).get(mid) == "superseded":
        mid = insight_id(insight, after=mid)
    return mid


def previous_insights(store: GraphStore, sources: Sequence[str], origin: str) -> list[Memory]:
    """Active insights an earlier consolidation of ``origin`` made from these sources."""
    ids = sorted({e.src for e in store.edges(list(sources), ["DERIVED_FROM"], "in")})
    found = store.filter_ids(ids, MemoryFilter(statuses=("active",)))
    memories = store.get_memories(sorted(found), embeddings=False)
    return [m for m in memories.values() if m.kind == "insight" and m.context == origin]
