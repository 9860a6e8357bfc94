"""update / supersede: the new memory replaces the old; retracting it puts the old back."""

from __future__ import annotations

import pytest

from amem_graph import ConflictError, MemoryGraph, NotFoundError, ValidationError


def recalled(mg: MemoryGraph, query: str) -> list[str]:
    return [h.memory.id for h in mg.recall(query, k=10)]


def test_update_supersedes_and_inherits(mg: MemoryGraph) -> None:
    old = mg.remember(
        "The staging DB password rotates on Mondays",
        id="pw",
        agent="ops",
        tags=["db"],
        task="rotation",
        importance=0.8,
    )
    new = mg.update("pw", "The staging DB password rotates on Fridays", reason="policy changed")

    assert new.id != old.id
    assert (new.tags, new.task, new.importance, new.scope) == (["db"], "rotation", 0.8, old.scope)
    assert new.agent is None  # the writer's own, not inherited
    assert mg.get("pw").status == "superseded"
    assert mg.get(new.id).status == "active"
    edges = mg.store.edges([new.id], ["SUPERSEDES"], "out")
    assert [(e.dst, e.props["reason"], e.props["previous_status"]) for e in edges] == [
        ("pw", "policy changed", "active")
    ]
    hits = recalled(mg, "staging DB password rotates")
    assert new.id in hits and "pw" not in hits
    assert mg.current("pw").id == new.id
    assert [m.id for m in mg.supersession_chain(new.id)] == ["pw", new.id]
    events = mg.audit(memory="pw", kind="supersede")
    assert len(events) == 1 and set(events[0].memory_ids) == {"pw", new.id}


def test_update_twice_chains_and_current_follows(mg: MemoryGraph) -> None:
    mg.remember("Build server is ci-1", id="ci")
    v2 = mg.update("ci", "Build server is ci-2", id="ci-v2")
    v3 = mg.update(v2.id, "Build server is ci-3", id="ci-v3")
    assert mg.current("ci").id == v3.id
    assert [m.id for m in mg.supersession_chain("ci-v2")] == ["ci", "ci-v2", "ci-v3"]
    with pytest.raises(ConflictError, match="ci-v3"):
        mg.update("ci", "Build server is ci-4")  # not the head: says which one is


def test_update_with_same_content_is_a_no_op(mg: MemoryGraph) -> None:
    old = mg.remember("Logs live in /var/log/app", id="logs")
    assert mg.update("logs", "Logs live in /var/log/app").id == old.id
    assert mg.store.counts().get("SUPERSEDES", 0) == 0


def test_supersede_by_existing_replacement(mg: MemoryGraph) -> None:
    mg.remember("Office opens at 9", id="a")
    mg.remember("Office opens at 8 since March", id="b")
    new = mg.supersede("a", replacement="b", reason="new hours")
    assert new.id == "b"
    assert mg.get("a").status == "superseded"


def test_bad_supersessions_write_nothing(mg: MemoryGraph) -> None:
    mg.remember("x is 1", id="x")
    mg.remember("y is 2", id="y", scope="other")
    before = mg.store.counts()
    with pytest.raises(NotFoundError):
        mg.update("nope", "x is 2")
    with pytest.raises(ValidationError, match="scope"):
        mg.supersede("x", replacement="y")
    with pytest.raises(ValidationError, match="either content or replacement"):
        mg.supersede("x")
    with pytest.raises(ValidationError, match="itself"):
        mg.supersede("x", "x is 3", id="x")
    mg.retract("x", reason="bad")
    with pytest.raises(ConflictError, match="retracted"):
        mg.update("x", "x is 4")
    after = mg.store.counts()
    assert after.get("SUPERSEDES", 0) == 0 and after["Memory"] == before["Memory"]


def test_retracting_the_newer_unsupersedes_the_older(mg: MemoryGraph) -> None:
    mg.remember("The API token lives in vault path ops/api", id="tok")
    new = mg.update("tok", "The API token lives in vault path ops/api-v2")

    report = mg.retract(new.id, reason="wrong path")
    assert report.unsuperseded == ["tok"]
    assert mg.get("tok").status == "active"
    assert "tok" in recalled(mg, "API token vault path")
    assert mg.retraction(report.id).unsuperseded == ["tok"]

    mg.restore(report.id)
    assert mg.get("tok").status == "superseded"
    assert mg.get(new.id).status == "active"


def test_unsupersede_respects_another_live_replacement(mg: MemoryGraph) -> None:
    mg.remember("Lunch is at noon", id="old")
    first = mg.supersede("old", "Lunch is at one", id="n1")
    mg.remember("Lunch is at half past twelve", id="n2")
    mg.store.apply(_second_superseder("n2", "old"))
    report = mg.retract(first.id, reason="wrong")
    assert report.unsuperseded == []
    assert mg.get("old").status == "superseded"


def test_dry_run_reports_unsupersede_without_writing(mg: MemoryGraph) -> None:
    mg.remember("Queue is rabbit", id="q")
    new = mg.update("q", "Queue is kafka")
    report = mg.retract(new.id, reason="check", dry_run=True)
    assert report.unsuperseded == ["q"] and report.dry_run
    assert mg.get("q").status == "superseded"


def test_unsupersede_of_a_held_memory_rebases_it(mg: MemoryGraph) -> None:
    mg.remember("Region is eu-west-1", id="r")
    new = mg.update("r", "Region is eu-central-1")
    held = mg.retract("r", reason="also suspicious")  # superseded, now held down
    assert mg.get("r").status == "retracted"
    report = mg.retract(new.id, reason="wrong region")
    assert report.unsuperseded == ["r"]
    mg.restore(held.id)
    assert mg.get("r").status == "active"  # its base is no longer superseded
    mg.restore(report.id)
    assert mg.get("r").status == "superseded"


def _second_superseder(src: str, dst: str):  # type: ignore[no-untyped-def]
    from amem_graph.stores.base import EdgeWrite, MemoryUpdate, WriteBatch

    return WriteBatch(
        edges=[EdgeWrite("SUPERSEDES", src, dst, {"previous_status": "active"})],
        memory_updates=[MemoryUpdate(dst, changes={"status": "superseded"})],
    )
