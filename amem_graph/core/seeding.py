"""How recall ranks its direct candidates before the graph expansion, and picks its seeds.

One rule in one place: the retriever applies it, and a server store that runs the search and
the first expansion hop in one query applies its Cypher copy on the server, then checks the
seeds it chose against this rule (and redoes the hop when they differ).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: relative tolerance under which two scores count as a tie
TIE_REL = 1e-5
#: BM25's best hit "stands out" when it scores TEXT_PEAK x the mean of the next
#: TEXT_PEAK_NEXT (a logistic step of width TEXT_PEAK_WIDTH): then ``text_boost`` applies
TEXT_PEAK = 2.0
TEXT_PEAK_WIDTH = 0.3
TEXT_PEAK_NEXT = 5
#: the least mean of the next scores a peak is measured against (no division by zero)
PEAK_FLOOR = 1e-12


def text_confidence(scores: Sequence[float]) -> float:
    """0-1: how far BM25's best score stands above the mean of the next few, best first.

    A query whose rare name or term one memory matches gives a lone peak; one whose words are
    common (a speaker's name, "dog") gives a flat top. Rank fusion cannot tell the two apart,
    so a fixed weight is either too timid for the first or too loud for the second.
    """
    if not scores or scores[0] <= 0:
        return 0.0
    rest = scores[1 : 1 + TEXT_PEAK_NEXT]
    if not rest:
        return 1.0
    peak = scores[0] / max(sum(rest) / len(rest), PEAK_FLOOR)
    z = (peak - TEXT_PEAK) / TEXT_PEAK_WIDTH
    return 1.0 / (1.0 + math.exp(-z)) if z > -50 else 0.0


def boosted_text_weight(weight: float, boost: float, peak: float) -> float:
    """BM25's weight in the fusion for a text list whose best hit stands out by ``peak``
    (``text_confidence``): raised by ``boost`` x ``peak``, unless the text signal is off. The
    retriever's fusion and the fetch's ranking (and its Cypher copy) must agree on it."""
    return weight + boost * peak if weight > 0 else weight


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


def settled(pairs: Sequence[tuple[str, float]], n: int) -> list[tuple[str, tuple[float, int]]]:
    """A search list as (id, (score, tie-aware rank)), less the tie group its cut at ``n``
    may have split.

    A store cuts its top n inside a group of equal scores by its own float noise (float32 or
    float64 cosines, Lucene's floats), so which members made the list differs between stores
    even when every score agrees; the group at the end of a full list is dropped, unless it
    is the whole list. Those members are the weakest of the list; they may still come back
    through another path.
    """
    ranked = list(zip((mid for mid, _ in pairs), tie_ranks([s for _, s in pairs]), strict=True))
    if n <= 0 or len(ranked) < n:
        return ranked  # not cut: every match is here
    last = ranked[-1][1][1]
    return ranked[: last - 1] if last > 1 else ranked


def prior_ranks(
    fields: Mapping[str, tuple[float, float]], now: float, half_life: float
) -> dict[str, list[tuple[str, tuple[float, int]]]]:
    """The fusion's two priors for ids with (created_at, importance): signal -> (id,
    (value, tie-aware rank)), best first, ties by id. Recency is a half-life decay of the age
    at ``now`` (seconds), importance the memory's own.

    Runs twice a recall over every candidate: the ids are sorted once, then each signal by a
    stable sort on its float alone (the order of sorting (value, id) pairs, at ~2/3 the cost).
    """
    by_id = sorted(fields)
    negated: dict[str, dict[str, float]] = {"recency": {}, "importance": {}}
    recency, importance = negated["recency"], negated["importance"]
    for mid, (created, weight) in fields.items():  # a plain loop: every candidate
        age = now - created
        recency[mid] = -math.pow(0.5, (age if age > 0.0 else 0.0) / half_life)
        importance[mid] = -weight
    out: dict[str, list[tuple[str, tuple[float, int]]]] = {}
    for signal, values in negated.items():
        order = sorted(by_id, key=values.__getitem__)  # best first, ties by id
        ranks = tie_ranks([-values[mid] for mid in order])
        out[signal] = list(zip(order, ranks, strict=True))
    return out


@dataclass(frozen=True, slots=True)
class Priors:
    """The fusion's recency and importance priors at recall's ``now``: the fetch is ranked
    with them, as the fusion will rank the likely hits."""

    recency_weight: float
    importance_weight: float
    half_life: float  #: seconds
    now: float  #: seconds since the epoch


@dataclass(frozen=True, slots=True)
class SeedPlan:
    """The expansion's start: the search hits ranked by weighted reciprocal rank fusion of
    their tie-aware ranks in the vector and text lists (best first, ties by id); the top
    ``seeds`` are expanded, and each seed keeps at most ``limit`` siblings per hub type. The
    top ``fetch`` are read whole (the likely hits), ranked as the fusion will rank them
    (``fetch_ranking``): the text weight raised by ``text_boost`` x ``text_confidence`` of
    the text list, and the ``priors``."""

    vector_weight: float
    text_weight: float
    rrf_k: int
    seeds: int
    fetch: int
    limit: int
    text_boost: float = 0.0
    priors: Priors | None = None

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

    def fetch_text_weight(self, text: Sequence[tuple[str, float]]) -> float:
        """The text weight the fetch is ranked with: the fusion's for this text list."""
        if not self.text_boost or not text:
            return self.text_weight
        peak = text_confidence([s for _, s in text])
        return boosted_text_weight(self.text_weight, self.text_boost, peak)

    def choose(
        self,
        vector: Sequence[tuple[str, float]],
        text: Sequence[tuple[str, float]],
        fields: Mapping[str, tuple[float, float]] | None = None,
        depths: tuple[int, int] = (0, 0),
    ) -> tuple[list[str], list[str]]:
        """(seeds, fetch) for the two search lists, asked for ``depths`` (vector, text) hits;
        ``fields`` are the hits' (created_at, importance) for the fetch's priors."""
        scores = self.scores(vector, text)
        ranked = sorted(scores, key=lambda m: (-scores[m], m))
        fetch = self.fetch_ranking(vector, text, fields or {}, depths)
        return ranked[: self.seeds], fetch[: self.fetch]

    def fetch_ranking(
        self,
        vector: Sequence[tuple[str, float]],
        text: Sequence[tuple[str, float]],
        fields: Mapping[str, tuple[float, float]],
        depths: tuple[int, int] = (0, 0),
    ) -> list[str]:
        """The hits ranked as the fusion will rank them, bar the graph and confidence: each
        list ``settled`` at its depth, the text weight the fusion will give this list, and
        the priors (with ``priors``, over the hits in ``fields``). BM25 gives one score to
        many memories of the same words and length: the fusion leaves out such a group that
        ends a full list, and orders the others by the recency prior; a fetch that kept the
        first and cut the others by id missed likely hits in a quarter of the bench store's
        recalls (a read after the hop)."""
        weight = self.fetch_text_weight(text)
        out: dict[str, float] = {}
        for w, pairs, n in ((self.vector_weight, vector, depths[0]), (weight, text, depths[1])):
            for mid, (_, rank) in settled(pairs, n):
                out[mid] = out.get(mid, 0.0) + w / (self.rrf_k + rank)
        if self.priors is not None:
            known = {mid: fields[mid] for mid in out if mid in fields}
            ranked = prior_ranks(known, self.priors.now, self.priors.half_life)
            weights = (self.priors.recency_weight, self.priors.importance_weight)
            for signal, w in zip(("recency", "importance"), weights, strict=True):
                for mid, (_, rank) in ranked[signal]:
                    out[mid] += w / (self.rrf_k + rank)
        return sorted(out, key=lambda m: (-out[m], m))
