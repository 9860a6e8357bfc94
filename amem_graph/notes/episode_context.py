"""A memory's vector carries a little of the memory before it in its episode.

A chat turn often means what it means beside the turn it answers: "a beagle, two months old"
after "what did you get?", "me too!" after a plan. A sentence model embeds each turn alone, so
the question "what breed is Maya's dog?" finds the turn only through its own few words. When
the library embeds a memory written into an episode, it adds ``weight`` times the vector of the
episode's memory just before it (same scope, latest ``created_at`` at or before its time, the
batch's own items included) and normalises. That vector already carries its own predecessor,
so older context fades as ``weight ** distance``.

Measured on the dev sets (``python bench/quality/run.py --episode-context W``, bench/quality/
README.md): see the figures there. Caller-given vectors are never changed: they are the
caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial

import numpy as np

from amem_graph.stores.base import GraphStore

#: (scope, episode)
EpisodeKey = tuple[str, str]
#: the earliest time each chain of a batch starts at -> the vector before it, where known
Predecessors = Callable[[dict[EpisodeKey, datetime]], dict[EpisodeKey, np.ndarray]]


def with_episode_context(
    store: GraphStore | Predecessors,
    vectors: np.ndarray,
    scopes: Sequence[str],
    episodes: Sequence[str | None],
    times: Sequence[datetime],
    weight: float,
) -> np.ndarray:
    """``vectors`` (one row per item, in batch order) with each row in an episode blended with
    its predecessor's vector (``weight`` of it), renormalised; float64 rows.

    A predecessor is the item of the same (scope, episode) just before it in time (ties: the
    earlier in the batch), or for the earliest, the memory of that episode and scope latest at
    or before its time in ``store`` (or as a ``Predecessors`` function answers).
    """
    out = np.asarray(vectors, dtype=np.float64).copy()
    if weight <= 0 or not any(episodes):
        return out
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
                blended = out[i] + weight * prev
                norm = float(np.linalg.norm(blended))
                if norm > 0:
                    out[i] = blended / norm
            prev = out[i]
    return out


class EpisodeTails:
    """``Predecessors`` for a stream of batches written in time order within each episode
    (an export being re-embedded): the last vector of each episode seen so far, as the
    store would answer once its edges are written."""

    def __init__(self) -> None:
        self._last: dict[EpisodeKey, tuple[datetime, np.ndarray]] = {}

    def __call__(self, first: dict[EpisodeKey, datetime]) -> dict[EpisodeKey, np.ndarray]:
        return {
            key: tail[1]
            for key, at in first.items()
            if (tail := self._last.get(key)) is not None and tail[0] <= at
        }

    def saw(
        self,
        vectors: np.ndarray,
        scopes: Sequence[str],
        episodes: Sequence[str | None],
        times: Sequence[datetime],
    ) -> None:
        """Remember each episode's latest row of a batch just blended."""
        for i, (scope, episode) in enumerate(zip(scopes, episodes, strict=True)):
            if episode:
                key = (scope, episode)
                tail = self._last.get(key)
                if tail is None or tail[0] <= times[i]:
                    self._last[key] = (times[i], vectors[i])


def _stored_predecessors(
    store: GraphStore, first: dict[EpisodeKey, datetime]
) -> dict[EpisodeKey, np.ndarray]:
    """(scope, episode) -> the vector of the stored memory of that episode and scope latest at
    or before ``first[key]`` (``GraphStore.episode_tails``: one read for every episode)."""
    if not first:
        return {}
    tails = store.episode_tails(first)
    return {key: np.asarray(vector, dtype=np.float64) for key, vector in tails.items()}
