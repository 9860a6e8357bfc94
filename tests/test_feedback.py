"""Outcome credit: sign, credit to what was used, bystanders, score scaling, validation,
once per episode (also under races), and agent trust."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from amem_graph import ConflictError, HashingEmbedder, MemoryGraph, NotFoundError, ValidationError
from amem_graph.provenance.credit import CreditPolicy
from amem_graph.stores.local.store import LocalStore


def seed(mg: MemoryGraph) -> None:
    mg.remember("granite ferry timetable", id="ferry", agent="good")
    mg.remember("granite ferry delays", id="delays", agent="good")
    mg.remember("granite quarry permits", id="quarry", agent="bad")
    mg.remember("unrelated violet poem", id="poem", agent="good")


def counts(mg: MemoryGraph, mid: str) -> tuple[float, float]:
    m = mg.get(mid)
    return m.successes, m.failures


def credited(mg: MemoryGraph, episode: str) -> dict[str, dict[str, Any]]:
    """The CREDITED edges of the episode's outcome: memory id -> props."""
    return {e.dst: e.props for e in mg.store.edges([f"outcome-{episode}"], ["CREDITED"])}


def test_success_raises_and_failure_lowers_confidence(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep-win") as ep:
        assert ep.recall("granite ferry timetable", k=1)[0].memory.id == "ferry"
        ep.outcome(success=True)
    with mg.episode(id="ep-loss") as ep:
        assert ep.recall("granite quarry permits", k=1)[0].memory.id == "quarry"
        ep.outcome(success=False)
    assert counts(mg, "ferry") == (1.0, 0.0)
    assert counts(mg, "quarry") == (0.0, 1.0)
    assert mg.get("ferry").confidence > 0.5 > mg.get("quarry").confidence
    assert mg.get("poem").confidence == 0.5


def test_without_used_the_top_hit_takes_the_credit_and_bystanders_none(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        hits = ep.recall("granite ferry", k=3)
        outcome = ep.outcome(success=False)
    assert [h.rank for h in hits] == [1, 2, 3] and outcome.used is None
    top, *rest = (h.memory.id for h in hits)
    assert counts(mg, top) == (0.0, 1.0)
    assert all(counts(mg, mid) == (0.0, 0.0) for mid in rest), "a bystander was charged"
    assert credited(mg, "ep") == {top: {"credit": 1.0, "basis": "top"}}


def test_used_gets_full_credit_and_what_was_only_read_none(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        hits = [h.memory.id for h in ep.recall("granite ferry", k=3)]
        outcome = ep.outcome(success=True, used=[hits[2], hits[1], hits[2]])
    assert outcome.used == sorted({hits[1], hits[2]})
    assert counts(mg, hits[0]) == (0.0, 0.0), "read at rank 1 but not acted on"
    assert counts(mg, hits[1]) == counts(mg, hits[2]) == (1.0, 0.0)
    assert set(credited(mg, "ep")) == {hits[1], hits[2]}
    assert {p["basis"] for p in credited(mg, "ep").values()} == {"used"}


def test_used_empty_records_the_outcome_and_credits_nothing(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry", k=3)
        assert ep.outcome(success=False, used=[]).used == []
    assert all(counts(mg, m) == (0.0, 0.0) for m in ("ferry", "delays", "quarry"))
    assert mg.store.counts()["Outcome"] == 1


def test_credit_policy_is_configurable(mg: MemoryGraph) -> None:
    seed(mg)
    mg.credit_policy = CreditPolicy(unused_weight=0.25, presumed_used=2)
    with mg.episode(id="ep") as ep:
        hits = [h.memory.id for h in ep.recall("granite ferry", k=3)]
        ep.outcome(success=False)
    assert [counts(mg, mid)[1] for mid in hits] == [1.0, 1.0, 0.25]
    assert credited(mg, "ep")[hits[2]] == {"credit": 0.25, "basis": "read"}
    with mg.episode(id="ep-2") as ep:
        ep.recall("granite ferry", k=3)
        ep.outcome(success=True, used=[hits[0]])
    assert [counts(mg, mid)[0] for mid in hits] == [1.0, 0.25, 0.25]
    with pytest.raises(ValueError):
        CreditPolicy(used_weight=0.0)


def test_score_scales_credit(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry timetable", k=1)
        ep.outcome(success=True, score=0.5)
    assert mg.get("ferry").successes == pytest.approx(0.5)


def test_a_memory_read_twice_is_credited_once(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ranks = [
            {h.memory.id: h.rank for h in ep.recall(q, k=3)}
            for q in ("granite ferry delays", "granite ferry timetable")
        ]
        ep.outcome(success=True, used=["ferry"])
    assert {r.get("ferry") for r in ranks} == {1, 2}  # read twice at different ranks
    assert counts(mg, "ferry") == (1.0, 0.0)


def test_record_outcome_is_idempotent(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry timetable", k=1)
    first = mg.record_outcome("ep", success=True, score=0.9, used=["ferry"])
    again = mg.record_outcome("ep", success=True, score=0.9, used=["ferry"])
    assert again == first
    assert mg.get("ferry").successes == pytest.approx(0.9)
    assert mg.store.counts()["Outcome"] == 1


@pytest.mark.parametrize(
    "repeat",
    [{"success": False}, {"success": True, "score": 0.5}, {"success": True, "used": []}],
)
def test_differing_repeat_conflicts_and_changes_nothing(
    mg: MemoryGraph, repeat: dict[str, Any]
) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry timetable", k=1)
        ep.outcome(success=True)
    with pytest.raises(ConflictError, match="already has an outcome"):
        mg.record_outcome("ep", **repeat)
    assert counts(mg, "ferry") == (1.0, 0.0)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"success": "no"}, "success must be True or False"),
        ({"success": None}, "success must be True or False"),
        ({"success": 1}, "success must be True or False"),
        ({"success": True, "detail": 123}, "detail must be a string"),
        ({"success": True, "score": 1.5}, "score"),
        ({"success": True, "score": float("nan")}, "score"),
        ({"success": True, "score": "0.5"}, "score"),
        ({"success": True, "score": True}, "score"),
        ({"success": True, "used": "ferry"}, "list of memory ids"),
        ({"success": True, "used": ["no such id!"]}, "used memory id"),
        ({"success": True, "used": ["poem"]}, r"\['poem'\] were not read in episode 'ep'"),
        ({"success": True, "at": "yesterday"}, "at"),
    ],
)
def test_bad_outcomes_are_rejected_and_nothing_is_written(
    mg: MemoryGraph, arguments: dict[str, Any], message: str
) -> None:
    seed(mg)
    with mg.episode(id="ep") as ep:
        ep.recall("granite ferry timetable", k=1)
    with pytest.raises(ValidationError, match=message):
        mg.record_outcome("ep", **arguments)
    assert "Outcome" not in mg.store.counts()
    assert counts(mg, "ferry") == (0.0, 0.0)


def test_an_unknown_episode_is_not_found(mg: MemoryGraph) -> None:
    with pytest.raises(NotFoundError, match="ep-none"):
        mg.record_outcome("ep-none", success=True)


def race(calls: list[Any]) -> list[object]:
    """Run the calls at once, one thread each; what each returned or raised."""
    results: list[object] = [None] * len(calls)
    gate = threading.Barrier(len(calls))

    def run(i: int) -> None:
        gate.wait()
        try:
            results[i] = calls[i]()
        except ConflictError as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_racing_outcomes_credit_once(mg: MemoryGraph) -> None:
    """Four threads report one episode's outcome at once: one credits, the others are no-ops
    (or ConflictErrors), never a second credit."""
    seed(mg)
    for round_ in range(3):
        episode = f"ep-{round_}"
        with mg.episode(id=episode) as ep:
            ep.recall("granite ferry timetable", k=1)
        results = race(
            [lambda e=episode: mg.record_outcome(e, success=True, used=["ferry"])] * 4  # type: ignore[misc]
        )
        outcomes = [r for r in results if not isinstance(r, ConflictError)]
        assert outcomes, results
        assert all(o == outcomes[0] for o in outcomes)
    assert counts(mg, "ferry") == (3.0, 0.0)
    assert mg.store.counts()["Outcome"] == 3


def test_racing_outcomes_from_separate_connections_credit_once(tmp_path: Path) -> None:
    """The same on one embedded store file opened four times (as four processes would)."""
    path = tmp_path / "shared.db"
    graphs = [MemoryGraph(LocalStore(path), HashingEmbedder()) for _ in range(4)]
    try:
        seed(graphs[0])
        with graphs[0].episode(id="ep") as ep:
            ep.recall("granite ferry timetable", k=1)
        results = race([lambda g=g: g.record_outcome("ep", success=False) for g in graphs])
        assert all(not isinstance(r, ConflictError) for r in results), results
        assert counts(graphs[3], "ferry") == (0.0, 1.0)
    finally:
        for g in graphs:
            g.close()


def test_agent_trust_follows_what_was_used(mg: MemoryGraph) -> None:
    """The poisoner's memory is used and fails; the honest neighbour's is read beside it
    every time but not used: the poisoner's trust falls, the neighbour's does not."""
    seed(mg)
    assert mg.agent("good").trust == mg.agent("bad").trust == 0.5
    for i in range(3):
        with mg.episode(id=f"ep-good-{i}") as ep:
            ep.recall("granite ferry timetable", k=1)
            ep.outcome(success=True)
        with mg.episode(id=f"ep-bad-{i}") as ep:
            hits = [h.memory.id for h in ep.recall("granite quarry permits", k=3)]
            assert "quarry" in hits and len(hits) == 3
            ep.outcome(success=False, used=["quarry"])
    good, bad = mg.agent("good"), mg.agent("bad")
    assert (bad.successes, bad.failures) == (0.0, 3.0)
    assert (good.successes, good.failures) == (3.0, 0.0)
    assert bad.trust == pytest.approx(0.2) and good.trust == pytest.approx(0.8)
    assert (good.memory_count, bad.memory_count) == (3, 1)
