"""Confidence in recall: a memory's outcome record scales its relevance.

Each memory's record is a Beta(1 + successes, 1 + failures) posterior over "acting on it
works". Recall reads it optimistically, as the posterior mean plus ``confidence_bound``
standard deviations, and compares that bound with the bound of no record at all (0.79): the
memory's relevance in every path (cosine similarity, BM25 score, expansion score; a negative
cosine is left alone) is multiplied by ``(bound / 0.79) ** confidence_weight``, and each path
is re-ranked before fusion. Relevance, not the fused score, is scaled because reciprocal-rank
scores keep no margins: in them an exact match and a loose one are 3% apart, so any factor
would let a failing memory fall behind anything. Scaled relevance moves a memory past
others of comparable relevance only. With the defaults (1 sd, weight 1):

- a store without outcomes ranks exactly as it would without this module (every factor is 1
  and nothing is re-ranked);
- a memory with clear evidence of failure sinks within a few failures: one failure scales its
  relevance by 0.72, three by 0.46, five by 0.34;
- one failure among successes costs little (2 successes and 1 failure: 1.01), and a memory
  that starts succeeding again climbs back (after 3 failures, 7 successes bring it past 1);
- a new memory is not buried under old ones: success lifts a memory by 1.14 the first time
  and never by more than 1.27, and a middling record (10 and 10: 0.77) is worth less than
  none, where a posterior mean would rank every record above 0.5 over every new memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from amem_graph.core.beta import bound, posterior
from amem_graph.core.config import RetrievalConfig
from amem_graph.core.models import ConfidenceShift, Explanation, Signal
from amem_graph.core.seeding import tie_ranks
from amem_graph.stores.base import RankFields

#: the relevance signals confidence scales (recency and importance are not relevance)
RESCALED = ("vector", "text", "graph")


def factor(successes: float, failures: float, cfg: RetrievalConfig) -> float:
    """What a memory's relevance is multiplied by; exactly 1.0 without outcomes."""
    if cfg.confidence_weight == 0 or (successes == 0 and failures == 0):
        return 1.0
    z = cfg.confidence_bound
    ratio = bound(successes, failures, z) / bound(0.0, 0.0, z)
    return float(ratio**cfg.confidence_weight)


def _scaled(value: float, f: float) -> float:
    """A relevance value scaled by ``f``; a negative cosine (no relevance) is left as it is."""
    return f * value if value > 0 else value


@dataclass(frozen=True, slots=True)
class Moved:
    """What confidence did to one recall: the factor of every candidate whose factor is not 1."""

    factors: dict[str, float]

    def explain(
        self,
        mid: str,
        exp: Explanation,
        m: RankFields,
        before: Mapping[str, float],
        cfg: RetrievalConfig,
    ) -> Explanation:
        """``exp`` with the confidence signal (its factor) and how it moved hit ``mid``;
        ``before`` is every candidate's fused score without confidence."""
        f = self.factors.get(mid, 1.0)
        mine = before[mid]
        rank_without = 1 + sum(1 for o, v in before.items() if v > mine or (v == mine and o < mid))
        mean, _ = posterior(m.successes, m.failures)
        exp.signals["confidence"] = Signal(value=f)
        exp.confidence = ConfidenceShift(
            successes=m.successes,
            failures=m.failures,
            mean=mean,
            bound=bound(m.successes, m.failures, cfg.confidence_bound),
            factor=f,
            unadjusted=mine,
            rank_without=rank_without,
        )
        return exp


def rescale(
    signals: Mapping[str, dict[str, tuple[float, int]]],
    fields: Mapping[str, RankFields],
    cfg: RetrievalConfig,
) -> Moved:
    """Scale each candidate's relevance values (signal -> (value, rank)) by its factor and
    re-rank the paths it is in, in place; nothing changes when every factor is 1."""
    factors: dict[str, float] = {}
    for mid in signals:  # a plain loop: this runs over every candidate
        m = fields[mid]
        f = factor(m.successes, m.failures, cfg)
        if f != 1.0:
            factors[mid] = f
    for signal in RESCALED:
        path = [(mid, sig[signal][0]) for mid, sig in signals.items() if signal in sig]
        if not any(mid in factors for mid, _ in path):
            continue
        scaled = [(mid, _scaled(v, factors.get(mid, 1.0))) for mid, v in path]
        scaled.sort(key=lambda pair: (-pair[1], pair[0]))
        for (mid, _), ranked in zip(scaled, tie_ranks([v for _, v in scaled]), strict=True):
            signals[mid][signal] = ranked
    return Moved(factors)
