"""Retrieval metrics for evidence-annotated questions (pure functions, stdlib only).

For a question with evidence set E and a ranked list of retrieved turn ids R
(duplicates are dropped, keeping the first occurrence):

* ``recall@k``  = |E ∩ R[:k]| / |E|  -- partial credit for multi-evidence questions;
* ``hit@k``     = 1 if E ∩ R[:k] is non-empty else 0  -- "found anything useful";
* ``MRR``       = 1 / rank of the first evidence id in R (1-based), 0 if none is
  retrieved. The ranking is not truncated, so pass the full ranking for true MRR
  or a top-k list for MRR@k.

Each is computed per question and then averaged (macro over questions) within
each category and over all questions ("overall"). Averaging per question keeps
multi-hop questions (2-3 evidence turns) from outweighing single-hop ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

DEFAULT_KS = (1, 5, 10)


class Judged(Protocol):
    """What scoring needs from a question (``dataset.Question`` satisfies it)."""

    @property
    def id(self) -> str: ...

    @property
    def category(self) -> str: ...

    @property
    def evidence(self) -> Sequence[str]: ...


def _dedupe(ranked: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for r in ranked:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


def recall_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    ev = set(evidence)
    if not ev:
        raise ValueError("evidence must not be empty")
    return len(ev.intersection(_dedupe(ranked)[:k])) / len(ev)


def hit_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    ev = set(evidence)
    if not ev:
        raise ValueError("evidence must not be empty")
    return 1.0 if ev.intersection(_dedupe(ranked)[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], evidence: Iterable[str]) -> float:
    ev = set(evidence)
    if not ev:
        raise ValueError("evidence must not be empty")
    for i, r in enumerate(_dedupe(ranked), 1):
        if r in ev:
            return 1.0 / i
    return 0.0


@dataclass
class Scores:
    """Averaged metrics over a group of questions."""

    n: int = 0
    recall: dict[int, float] = field(default_factory=dict)
    hit: dict[int, float] = field(default_factory=dict)
    mrr: float = 0.0


def _average(
    rows: list[tuple[dict[int, float], dict[int, float], float]], ks: Sequence[int]
) -> Scores:
    n = len(rows)
    if n == 0:
        return Scores(0, {k: 0.0 for k in ks}, {k: 0.0 for k in ks}, 0.0)
    return Scores(
        n,
        {k: sum(r[0][k] for r in rows) / n for k in ks},
        {k: sum(r[1][k] for r in rows) / n for k in ks},
        sum(r[2] for r in rows) / n,
    )


def evaluate(
    questions: Iterable[Judged],
    rankings: Mapping[str, Sequence[str]],
    ks: Sequence[int] = DEFAULT_KS,
) -> dict[str, Scores]:
    """Score rankings (question id -> ranked turn ids) per category and overall.

    Every question must have a ranking (an empty list is allowed and scores 0);
    a missing one raises ValueError so a harness bug cannot pass as a low score.
    Categories appear in first-seen order, followed by "overall".
    """
    per_cat: dict[str, list[tuple[dict[int, float], dict[int, float], float]]] = {}
    everything = []
    for q in questions:
        if q.id not in rankings:
            raise ValueError(f"no ranking for question {q.id!r}")
        ranked = rankings[q.id]
        row = (
            {k: recall_at_k(ranked, q.evidence, k) for k in ks},
            {k: hit_at_k(ranked, q.evidence, k) for k in ks},
            reciprocal_rank(ranked, q.evidence),
        )
        per_cat.setdefault(q.category, []).append(row)
        everything.append(row)
    report = {cat: _average(rows, ks) for cat, rows in per_cat.items()}
    report["overall"] = _average(everything, ks)
    return report


def format_report(report: Mapping[str, Scores], ks: Sequence[int] = DEFAULT_KS) -> str:
    """Plain-text table of an ``evaluate`` result."""
    head = ["category", "n"] + [f"R@{k}" for k in ks] + [f"hit@{k}" for k in ks] + ["MRR"]
    rows = [head]
    for cat, s in report.items():
        rows.append(
            [cat, str(s.n)]
            + [f"{s.recall[k]:.3f}" for k in ks]
            + [f"{s.hit[k]:.3f}" for k in ks]
            + [f"{s.mrr:.3f}"]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    )
