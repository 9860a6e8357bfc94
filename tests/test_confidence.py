"""Confidence in recall: outcome records scale relevance, with uncertainty, on both stores."""

from __future__ import annotations

import pytest

from amem_graph import MemoryGraph
from amem_graph.core.config import RetrievalConfig
from amem_graph.recall.confidence import factor
from amem_graph.stores.base import MemoryUpdate, WriteBatch

DEFAULTS = RetrievalConfig()


def ids(mg: MemoryGraph, query: str, k: int = 5, **options: object) -> list[str]:
    return [h.memory.id for h in mg.recall(query, k=k, **options)]


def credit(mg: MemoryGraph, mid: str, successes: float = 0.0, failures: float = 0.0) -> None:
    inc = {"successes": successes, "failures": failures}
    mg.store.apply(WriteBatch(memory_updates=[MemoryUpdate(mid, increments=inc)]))


def act(mg: MemoryGraph, query: str, mid: str, success: bool, n: int, tag: str) -> None:
    """``n`` episodes that recall ``query`` and act on ``mid`` (wherever it ranks)."""
    for i in range(n):
        with mg.episode(agent="ops", id=f"ep-{tag}-{i}") as ep:
            assert mid in [h.memory.id for h in ep.recall(query, k=5)]
            ep.outcome(success=success, used=[mid])


def test_factor_is_exactly_one_without_outcomes_and_moves_with_the_sign() -> None:
    assert factor(0.0, 0.0, DEFAULTS) == 1.0
    failing = [factor(0.0, f, DEFAULTS) for f in (1, 2, 3, 5)]
    assert failing == sorted(failing, reverse=True) and failing[0] < 1.0
    assert failing[2] == pytest.approx(0.46, abs=0.01)
    succeeding = [factor(s, 0.0, DEFAULTS) for s in (1, 3, 1000)]
    assert succeeding == sorted(succeeding) and succeeding[0] > 1.0
    assert succeeding[-1] < 1.28, "no record lifts a memory without bound"
    assert factor(2.0, 1.0, DEFAULTS) > 1.0, "one failure among successes costs nothing much"
    assert factor(0.0, 3.0, RetrievalConfig(confidence_weight=0)) == 1.0


def test_uncertainty_keeps_a_new_memory_above_a_middling_old_one() -> None:
    """A posterior mean would rank 12 successes and 8 failures (0.59) above no record (0.5);
    the optimistic bound does not."""
    assert (
        factor(12.0, 8.0, DEFAULTS) < 1.0 < factor(12.0, 8.0, RetrievalConfig(confidence_bound=0))
    )


def seed(mg: MemoryGraph) -> None:
    mg.remember("Restart the ingest worker to clear the stuck queue", id="old")
    mg.remember("Restart the ingest worker to clear a stuck queue", id="new")
    mg.remember("Quarterly planning notes for the design team", id="far")


def test_outcomes_elsewhere_leave_recall_exactly_as_it_was(mg: MemoryGraph) -> None:
    seed(mg)
    mg.remember("violet sonnet about autumn rain", id="poem")
    before = mg.recall("restart worker queue", k=3, explain=True)
    credit(mg, "poem", failures=5)
    after = mg.recall("restart worker queue", k=3, explain=True)
    assert [(h.memory.id, h.score) for h in after] == [(h.memory.id, h.score) for h in before]
    assert all(h.explanation and h.explanation.confidence for h in after)
    assert {h.explanation.confidence.factor for h in after if h.explanation} == {1.0}


def test_a_failing_memory_gives_way_to_a_comparable_one_not_to_anything(mg: MemoryGraph) -> None:
    seed(mg)
    top, second = ids(mg, "restart the ingest worker to clear the stuck queue", k=2)
    assert {top, second} == {"old", "new"}
    credit(mg, top, failures=1)
    assert ids(mg, "restart the ingest worker to clear the stuck queue", k=2) == [second, top]
    mg.remember("Restart everything", id="weak")
    credit(mg, top, failures=2)  # three failures: still far more relevant than the rest
    ranked = ids(mg, "restart the ingest worker to clear the stuck queue", k=4)
    assert ranked[:2] == [second, top], ranked


@pytest.mark.parametrize("mode", ["rrf", "weighted"])
def test_a_memory_that_starts_succeeding_again_comes_back(mg: MemoryGraph, mode: str) -> None:
    seed(mg)
    query = "restart the ingest worker to clear the stuck queue"
    top = ids(mg, query, k=1, mode=mode)[0]
    act(mg, query, top, False, 3, "down")
    assert ids(mg, query, k=1, mode=mode) != [top]
    act(mg, query, top, True, 8, "up")
    assert ids(mg, query, k=1, mode=mode) == [top]


def test_a_new_memory_is_not_buried_under_an_old_middling_one(mg: MemoryGraph) -> None:
    seed(mg)
    query = "restart the ingest worker to clear the stuck queue"
    first, second = ids(mg, query, k=2)
    credit(mg, first, successes=12, failures=8)  # mean 0.59: better than nothing, on average
    assert ids(mg, query, k=2) == [second, first]
    credit(mg, first, successes=30)  # now clearly good: it leads again
    assert ids(mg, query, k=2) == [first, second]


def test_confidence_weight_zero_ignores_outcomes(mg: MemoryGraph) -> None:
    seed(mg)
    query = "restart the ingest worker to clear the stuck queue"
    plain = mg.recall(query, k=3)
    credit(mg, plain[0].memory.id, failures=5)
    again = mg.recall(query, k=3, confidence_weight=0)
    assert [(h.memory.id, h.score) for h in again] == [(h.memory.id, h.score) for h in plain]
