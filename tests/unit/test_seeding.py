"""Recall's seed rule: tie-aware ranks and the weighted RRF that picks the expansion seeds."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from amem_graph.core.seeding import Priors, SeedPlan, prior_ranks, text_confidence, tie_ranks


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


def test_the_fetch_is_ranked_with_the_text_weight_the_fusion_will_give_a_lone_peak() -> None:
    """The seeds keep the plan's weights; the memories read whole are the likely hits, so
    they are ranked as the fusion will rank them: a text list whose best hit stands out
    weighs more there (``text_boost``), and its text-only hits with it."""
    boosted = SeedPlan(1.0, 0.2, 30, seeds=2, fetch=3, limit=5, text_boost=2.0)
    vector = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)]
    peak = [("z", 9.0), ("y", 2.0), ("x", 2.0)]  # z stands out: text_confidence ~1
    assert text_confidence([s for _, s in peak]) > 0.99
    assert PLAN.choose(vector, peak) == (["a", "b"], ["a", "b", "c"])
    weight = boosted.fetch_text_weight(peak)
    assert weight == pytest.approx(0.2 + 2.0 * text_confidence([9.0, 2.0, 2.0]))
    seeds, fetch = boosted.choose(vector, peak)
    assert seeds == ["a", "b"]  # the seed rule is the plan's, boost or not
    assert fetch == ["z", "x", "y"]  # z 2.2/31, then x and y 2.2/32 (tied: by id), a 1/31
    flat = [("z", 2.0), ("y", 2.0), ("x", 2.0)]  # no peak: hardly any boost
    assert 0.2 < boosted.fetch_text_weight(flat) < 0.3
    assert boosted.choose(vector, flat) == PLAN.choose(vector, flat)
    assert boosted.fetch_text_weight([]) == 0.2
    assert boosted.fetch_text_weight([("z", 3.0)]) == pytest.approx(2.2)  # a lone match


def test_the_fetch_is_ranked_with_the_priors_the_fusion_will_add() -> None:
    """Many memories share a BM25 score; the fusion's recency prior lifts the newest of
    them, so the fetch cut through such a tie keeps those the fusion will rank first."""
    day = 86_400.0
    plan = replace(PLAN, priors=Priors(0.05, 0.05, half_life=30 * day, now=100 * day))
    text = [("a", 5.0), ("b", 5.0), ("c", 5.0), ("d", 5.0)]
    fields = {"a": (1 * day, 0.5), "b": (4 * day, 0.5), "c": (3 * day, 0.5), "d": (2 * day, 0.5)}
    assert PLAN.choose([], text, fields) == (["a", "b"], ["a", "b", "c"])  # no priors: by id
    assert plan.choose([], text, fields) == (["a", "b"], ["b", "c", "d"])  # the seeds: as ever
    # written moments apart: a tie on recency too, as in the fusion, so by id
    close = {m: (50 * day + i * 1e-3, 0.5) for i, m in enumerate("abcd")}
    assert plan.choose([], text, close)[1] == ["a", "b", "c"]
    assert plan.choose([], text, {**close, "d": (50 * day, 0.9)})[1] == ["d", "a", "b"]
    assert plan.choose([], text, {"c": (99 * day, 0.5)})[1] == ["c", "a", "b"]  # fields known
    # the priors are the fusion's: the same ranks the retriever gives its candidates
    ranked = prior_ranks(fields, 100 * day, 30 * day)
    assert [mid for mid, _ in ranked["recency"]] == ["b", "c", "d", "a"]
    assert {rank for _, (_, rank) in ranked["importance"]} == {1}


def test_the_fetch_leaves_out_the_tie_group_that_ends_a_full_list() -> None:
    """The fusion drops a full list's last tie group (``settled``), so the fetch does too;
    the seed rule keeps it, as ever."""
    text = [("a", 9.0), ("b", 5.0), ("c", 5.0)]
    assert PLAN.fetch_ranking([], text, {}, (0, 3)) == ["a"]
    assert PLAN.fetch_ranking([], text, {}, (0, 4)) == ["a", "b", "c"]  # not full: all kept
    assert PLAN.choose([("b", 0.9)], text, None, (1, 3)) == (["b", "a"], ["b", "a"])


def test_prior_ranks_order_by_value_then_id_with_tie_aware_ranks() -> None:
    """The fast sort (ids once, then a stable sort on each value) must give the order of
    sorting (negated value, id) pairs, future dates counting as now, equal values sharing
    the better rank."""
    rng = random.Random(7)
    day, now = 86_400.0, 1_000 * 86_400.0
    for _ in range(200):
        ids = rng.sample([f"m{i}" for i in range(60)], rng.randint(0, 40))
        fields = {
            mid: (now - rng.choice([0.0, -day, 1.0, 3 * day, rng.random() * 90 * day]),
                  rng.choice([0.1, 0.5, 0.5, 0.9]))
            for mid in ids
        }  # fmt: skip
        ranked = prior_ranks(fields, now, 30 * day)
        for signal, value in (
            ("recency", lambda c, i: 0.5 ** (max(0.0, now - c) / (30 * day))),
            ("importance", lambda c, i: i),
        ):
            want = sorted(fields, key=lambda m, v=value: (-v(*fields[m]), m))  # type: ignore[misc]
            assert [mid for mid, _ in ranked[signal]] == want
            values = [v for _, (v, _) in ranked[signal]]
            assert [r for _, (_, r) in ranked[signal]] == [r for _, r in tie_ranks(values)]
