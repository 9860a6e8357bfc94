"""Recall's seed rule: tie-aware ranks and the weighted RRF that picks the expansion seeds."""

from __future__ import annotations

import pytest

from amem_graph.core.seeding import SeedPlan, tie_ranks


def test_equal_values_share_the_better_rank_and_the_next_one_skips() -> None:
    assert tie_ranks([0.9, 0.9, 0.5, 0.4, 0.4]) == [
        (0.9, 1),
        (0.9, 1),
        (0.5, 3),
        (0.4, 4),
        (0.4, 4),
    ]
    assert tie_ranks([]) == []


def test_ties_are_relative_above_one_and_absolute_below() -> None:
    # float noise between stores is a tie; a real difference is not
    assert [r for _, r in tie_ranks([1000.0, 1000.0 * (1 - 1e-6), 999.0])] == [1, 1, 3]
    assert [r for _, r in tie_ranks([0.5, 0.5 - 1e-6, 0.5 - 1e-4])] == [1, 1, 3]
    # a tie chain does not reach back: each value is compared with the one before it
    chain = [1.0, 1.0 - 8e-6, 1.0 - 16e-6]
    assert [r for _, r in tie_ranks(chain)] == [1, 1, 1]


PLAN = SeedPlan(vector_weight=1.0, text_weight=0.2, rrf_k=30, seeds=2, fetch=3, limit=5)


def test_scores_add_each_lists_weighted_reciprocal_rank() -> None:
    scores = PLAN.scores([("a", 0.9), ("b", 0.8)], [("b", 7.0), ("c", 7.0), ("d", 1.0)])
    assert scores["a"] == pytest.approx(1.0 / 31)
    assert scores["b"] == pytest.approx(1.0 / 32 + 0.2 / 31)
    assert scores["c"] == pytest.approx(0.2 / 31)  # tied with "b" in the text list
    assert scores["d"] == pytest.approx(0.2 / 33)


def test_the_seeds_and_fetch_are_the_top_of_the_fused_ranking_ties_by_id() -> None:
    vector = [("z", 0.9), ("y", 0.8), ("x", 0.7)]
    text = [("x", 5.0), ("w", 4.0)]
    seeds, fetch = PLAN.choose(vector, text)
    # x, third on vector but first on text (1/33 + 0.2/31), leads z (1/31) and y (1/32)
    assert seeds == ["x", "z"] and fetch == ["x", "z", "y"]
    same = [("b", 0.5), ("a", 0.5)]
    assert PLAN.choose(same, [])[0] == ["a", "b"]  # equal scores: id order
    assert PLAN.choose([], []) == ([], [])


def test_a_signal_with_no_weight_cannot_change_the_seeds() -> None:
    plan = SeedPlan(vector_weight=1.0, text_weight=0.0, rrf_k=30, seeds=2, fetch=2, limit=5)
    vector = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    assert plan.choose(vector, [("c", 9.0), ("d", 8.0)])[0] == ["a", "b"]
