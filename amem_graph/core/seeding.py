"""How recall ranks its direct candidates before the graph expansion, and picks its seeds.

One rule in one place: the retriever applies it, and a server store that runs the search and
the first expansion hop in one query applies its Cypher copy on the server, then checks the
seeds it chose against this rule (and redoes the hop when they differ).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: relative tolerance under which two scores count as a tie
TIE_REL = 1e-5


def tie_ranks(values: Sequence[float], rel: float = TIE_REL) -> list[tuple[float, int]]:
    """(value, rank) for values sorted best first, equal values sharing the better rank.

    Equal evidence then favours nobody, and float noise between stores (float32 dot products
    here, float64 cosines or Lucene's floats there) cannot reorder what is really a tie.
    """
    out: list[tuple[float, int]] = []
    last, rank = math.nan, 0  # nan: the first value never ties
    for position, value in enumerate(values, start=1):
        size = abs(value)
        if not abs(last - value) <= rel * (size if size > 1.0 else 1.0):
            rank = position
        out.append((value, rank))
        last = value
    return out


@dataclass(frozen=True, slots=True)
class SeedPlan:
    """The expansion's start: the search hits ranked by weighted reciprocal rank fusion of
    their tie-aware ranks in the vector and text lists (best first, ties by id); the top
    ``seeds`` are expanded, the top ``fetch`` read whole (the likely hits), and each seed
    keeps at most ``limit`` siblings per hub type."""

    vector_weight: float
    text_weight: float
    rrf_k: int
    seeds: int
    fetch: int
    limit: int

    def scores(
        self, vector: Sequence[tuple[str, float]], text: Sequence[tuple[str, float]]
    ) -> dict[str, float]:
        """Each hit's fused score (vector part first, so sums match the retriever's fusion)."""
        out: dict[str, float] = {}
        for weight, pairs in ((self.vector_weight, vector), (self.text_weight, text)):
            ranks = tie_ranks([score for _, score in pairs])
            for (mid, _), (_, rank) in zip(pairs, ranks, strict=True):
                out[mid] = out.get(mid, 0.0) + weight / (self.rrf_k + rank)
        return out

    def pick(self, scores: dict[str, float]) -> tuple[list[str], list[str]]:
        """(seeds, fetch): the first ``seeds`` and ``fetch`` ids of the ranking by ``scores``."""
        ranked = sorted(scores, key=lambda m: (-scores[m], m))
        return ranked[: self.seeds], ranked[: self.fetch]

    def choose(
        self, vector: Sequence[tuple[str, float]], text: Sequence[tuple[str, float]]
    ) -> tuple[list[str], list[str]]:
        """(seeds, fetch) for the two search lists."""
        return self.pick(self.scores(vector, text))
