"""A memory carries a little of the memory before it in its episode.

A chat turn often means what it means beside the turn it answers: "a beagle, two months old"
after "what did you get at the shelter?", "me too!" after a plan. A sentence model embeds each
turn alone and BM25 indexes its own words, so "what breed is Maya's dog?" finds the turn only
through the few words it has. When the library writes a memory into an episode it looks at the
episode's memory just before it (same scope, latest ``created_at`` at or before its time, the
batch's own items included) and

* adds ``weight`` times that memory's vector to the new one's and normalises (that vector
  carries its own predecessor, so older context fades as ``weight ** distance``);
* keeps the last ``lead_words`` words of its text as the new memory's ``lead_in``, which BM25
  searches with the memory's own words (not shown as its content).

Measured on the dev sets (``python bench/quality/run.py --episode-context W --lead-in N``):
bench/quality/README.md. Vectors a caller gives are never changed: they are the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

import numpy as np

from amem_graph.core.config import MemoryGraphConfig
from amem_graph.stores.base import GraphStore

#: (scope, episode)
EpisodeKey = tuple[str, str]


@dataclass(frozen=True)
class Before:
    """What a memory takes from the one before it: its vector (None: none kept) and text."""

    vector: np.ndarray | None
    content: str


@dataclass(frozen=True)
class EpisodeContext:
    """How much a new memory takes from the one before it: ``weight`` of its vector and its
    last ``lead_words`` words (``MemoryGraphConfig.episode_context``/``episode_lead_in``)."""

    weight: float = 0.0
    lead_words: int = 0


#: each memory on its own
NO_CONTEXT = EpisodeContext()


def episode_settings(config: MemoryGraphConfig) -> EpisodeContext:
    """A graph's episode context, from its config."""
    return EpisodeContext(config.episode_context, config.episode_lead_in)


#: the earliest time each chain of a batch starts at -> the memory before it, where known
Predecessors = Callable[[dict[EpisodeKey, datetime]], dict[EpisodeKey, Before]]


def lead_in(content: str, words: int) -> str:
    """The last ``words`` words of ``content`` (a question usually ends the turn it is in)."""
    return " ".join(content.split()[-words:]) if words > 0 else ""


def with_episode_context(
    store: GraphStore | Predecessors,
    vectors: np.ndarray | None,
    contents: Sequence[str],
    scopes: Sequence[str],
    episodes: Sequence[str | None],
    times: Sequence[datetime],
    weight: float,
    lead_words: int,
) -> tuple[np.ndarray | None, list[str]]:
    """(``vectors`` with each row in an episode blended with its predecessor's, ``weight`` of
    it, renormalised, as float64; each row's lead-in, "" for none). ``vectors=None`` (the
    caller's own, or none to blend) come back None.

    A predecessor is the item of the same (scope, episode) just before it in time (ties: the
    earlier in the batch), or for the earliest, the memory of that episode and scope latest at
    or before its time in ``store`` (or as a ``Predecessors`` function answers).
    """
    out = None if vectors is None else np.array(vectors, dtype=np.float64)  # a copy
    lead_ins = [""] * len(contents)
    blend = out is not None and weight > 0
    if not (blend or lead_words > 0) or not any(episodes):
        return out, lead_ins
    chains: dict[EpisodeKey, list[int]] = {}
    for i, (scope, episode) in enumerate(zip(scopes, episodes, strict=True)):
        if episode:
            chains.setdefault((scope, episode), []).append(i)
    for chain in chains.values():
        chain.sort(key=lambda i: (times[i], i))
    lookup = store if callable(store) else partial(_stored_predecessors, store)
    before = lookup({key: times[chain[0]] for key, chain in chains.items()})
    for key, chain in chains.items():
        prev = before.get(key)
        for i in chain:
            if prev is not None:
                lead_ins[i] = lead_in(prev.content, lead_words)
                if blend and out is not None and prev.vector is not None:
                    blended = out[i] + weight * prev.vector
                    norm = float(np.linalg.norm(blended))
                    if norm > 0:
                        out[i] = blended / norm
            prev = Before(None if out is None else out[i], contents[i])
    return out, lead_ins


class EpisodeTails:
    """``Predecessors`` for a stream of batches written in time order within each episode
    (an export being re-embedded): the last memory of each episode seen so far, as the store
    would answer once its edges are written."""

    def __init__(self) -> None:
        self._last: dict[EpisodeKey, tuple[datetime, Before]] = {}

    def __call__(self, first: dict[EpisodeKey, datetime]) -> dict[EpisodeKey, Before]:
        return {
            key: tail[1]
            for key, at in first.items()
            if (tail := self._last.get(key)) is not None and tail[0] <= at
        }

    def saw(
        self,
        vectors: np.ndarray,
        contents: Sequence[str],
        scopes: Sequence[str],
        episodes: Sequence[str | None],
        times: Sequence[datetime],
    ) -> None:
        """Remember each episode's latest row of a batch just written."""
        for i, (scope, episode) in enumerate(zip(scopes, episodes, strict=True)):
            if episode:
                key = (scope, episode)
                tail = self._last.get(key)
                if tail is None or tail[0] <= times[i]:
                    self._last[key] = (times[i], Before(vectors[i], contents[i]))


def _stored_predecessors(
    store: GraphStore, first: dict[EpisodeKey, datetime]
) -> dict[EpisodeKey, Before]:
    """(scope, episode) -> the stored memory of that episode and scope latest at or before
    ``first[key]`` (``GraphStore.episode_tails``: one read for every episode)."""
    if not first:
        return {}
    return {
        key: Before(
            None if m.embedding is None else np.asarray(m.embedding, dtype=np.float64),
            m.content,
        )
        for key, m in store.episode_tails(first).items()
    }
