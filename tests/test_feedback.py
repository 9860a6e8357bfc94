"""Outcome credit: sign, rank weighting, score scaling, idempotency, conflicts, agent trust."""

from __future__ import annotations

import pytest

from amem_graph import ConflictError, MemoryGraph, NotFoundError, ValidationError


def seed(mg: MemoryGraph) -> None:
    mg.remember("granite ferry timetable", id="ferry", agent="good")
    mg.remember("granite ferry delays", id="delays", agent="good")
    mg.remember("granite quarry permits", id="quarry", agent="bad")
    mg.remember("unrelated violet poem", id="poem", agent="good")


def test_success_raises_and_failure_lowers_confidence(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep-win") as ep:
        assert ep.recall("granite ferry timetable", k=1)[0].memory.id == "ferry"
        ep.outcome(success=True)
    with mg.episode(id="ep-loss") as ep:
        assert ep.recall("granite quarry permits", k=1)[0].memory.id == "quarry"
        ep.outcome(success=False)
    ferry, quarry = mg.get("ferry"), mg.get("quarry")
    assert (ferry.successes, ferry.failures) == (1.0, 0.0)
    assert (quarry.successes, quarry.failures) == (0.0, 1.0)
    assert ferry.confidence > 0.5 > quarry.confidence
    assert mg.get("poem").confidence == 0.5


def test_credit_is_weighted_by_rank(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        hits = ep.recall("granite ferry", k=3)
        ep.outcome(success=False)
    assert [h.rank for h in hits] == [1, 2, 3]
    for hit in hits:
        assert mg.get(hit.memory.id).failures == pytest.approx(1.0 / hit.rank)
    confidences = [mg.get(h.memory.id).confidence for h in hits]
    assert confidences == sorted(confidences)  # rank 1 lost most


def test_score_scales_credit(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry timetable", k=1)
        ep.outcome(success=True, score=0.5)
    assert mg.get("ferry").successes == pytest.approx(0.5)


def test_best_rank_counts_once(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ranks = [
            {h.memory.id: h.rank for h in ep.recall(q, k=3)}
            for q in ("granite ferry delays", "granite ferry timetable")
        ]
        ep.outcome(success=True)
    best = min(r["ferry"] for r in ranks if "ferry" in r)
    assert {r.get("ferry") for r in ranks} == {1, 2}  # read twice at different ranks
    assert mg.get("ferry").successes == pytest.approx(1.0 / best)


def test_record_outcome_is_idempotent(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry timetable", k=1)
    first = mg.record_outcome("ep", success=True, score=0.9)
    again = mg.record_outcome("ep", success=True, score=0.9)
    assert again == first
    assert mg.get("ferry").successes == pytest.approx(0.9)
    assert mg.store.counts()["Outcome"] == 1


def test_differing_repeat_conflicts_and_changes_nothing(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry timetable", k=1)
        ep.outcome(success=True)
    with pytest.raises(ConflictError, match="already has an outcome"):
        mg.record_outcome("ep", success=False)
    ferry = mg.get("ferry")
    assert (ferry.successes, ferry.failures) == (1.0, 0.0)


def test_agent_trust_follows_its_memories(mg: MemoryGraph) -> None:
    seed(mg)
    assert mg.agent("good").trust == mg.agent("bad").trust == 0.5
    for i in range(3):
        with mg.episode(id=f"ep-good-{i}") as ep:
            ep.recall("granite ferry timetable", k=1)
            ep.outcome(success=True)
        with mg.episode(id=f"ep-bad-{i}") as ep:
            ep.recall("granite quarry permits", k=1)
            ep.outcome(success=False)
    good, bad = mg.agent("good"), mg.agent("bad")
    assert good.trust > 0.5 > bad.trust
    assert (good.memory_count, bad.memory_count) == (3, 1)


def test_bad_outcomes_are_rejected(mg: MemoryGraph) -> None:
    seed(mg)
    with pytest.raises(NotFoundError, match="ep-none"):
        mg.record_outcome("ep-none", success=True)
    with mg.episode(id="ep"):
        pass
    with pytest.raises(ValidationError, match="score"):
        mg.record_outcome("ep", success=True, score=1.5)
    assert "Outcome" not in mg.store.counts()
