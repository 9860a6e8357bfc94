"""The audit log: append-only events for retract, restore and forget, queryable by filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from poisoning import World, build

from amem_graph import MemoryGraph, NotFoundError, ValidationError
from amem_graph.core.models import content_hash
from amem_graph.core.schema import AUDIT_EVENT
from amem_graph.provenance.audit import event_write, new_event
from amem_graph.stores.base import WriteBatch


@pytest.fixture
def world(mg: MemoryGraph) -> World:
    return build(mg)


def test_retract_and_restore_are_logged(mg: MemoryGraph, world: World) -> None:
    report = mg.retract(world.poison, reason="poisoned", by="analyst")
    mg.restore(report.id, by="lead", reason="false alarm")
    retract, restore = mg.audit()
    assert (retract.kind, restore.kind) == ("retract", "restore")
    assert retract.retraction_id == restore.retraction_id == report.id
    assert (retract.actor, retract.reason) == ("analyst", "poisoned")
    assert (restore.actor, restore.reason) == ("lead", "false alarm")
    assert set(retract.memory_ids) == set(report.memory_ids) == set(restore.memory_ids)
    assert set(retract.agent_ids) == {"mallory", "bob", "carol", "dave"}
    assert retract.at == report.at and restore.at > retract.at


def test_forget_erases_and_keeps_only_the_hash(mg: MemoryGraph, world: World) -> None:
    content = mg.get(world.clean).content
    before = mg.store.counts()
    event = mg.forget(world.clean, reason="erasure request", by="dpo")
    with pytest.raises(NotFoundError):
        mg.get(world.clean)
    assert world.clean not in {h.memory.id for h in mg.recall(content)}
    assert mg.store.counts()["Memory"] == before["Memory"] - 1
    assert mg.store.edges([world.clean_reader], ["READ"], "out") == []
    assert event.kind == "forget"
    assert event.memory_ids == [world.clean] and event.agent_ids == ["bob"]
    assert event.content_hashes == [content_hash(content)]
    assert mg.audit(memory=world.clean) == [event]
    stored = [repr(n.props) for n in mg.store.iter_nodes()]
    assert not any("copper meadow lantern" in s for s in stored)


def test_forget_unknown_memory(mg: MemoryGraph) -> None:
    with pytest.raises(NotFoundError, match="ghost"):
        mg.forget("ghost")
    assert mg.audit() == []


def test_filters(mg: MemoryGraph, world: World) -> None:
    first = mg.retract(world.clean, reason="one", cascade=False, by="analyst")
    second = mg.retract(world.poison, reason="two")
    gone = mg.forget(world.written2, reason="erase")
    events = mg.audit()
    assert [e.kind for e in events] == ["retract", "retract", "forget"]
    assert [e.retraction_id for e in mg.audit(memory=world.clean)] == [first.id]
    assert [e.kind for e in mg.audit(memory=world.written2)] == ["retract", "forget"]
    assert [e.retraction_id for e in mg.audit(agent="mallory")] == [second.id]
    assert [e.retraction_id for e in mg.audit(agent="analyst")] == [first.id]
    assert mg.audit(kind="forget") == [gone]
    assert mg.audit(since=events[1].at) == events[1:]
    assert mg.audit(until=events[1].at) == events[:1]
    assert mg.audit(since=events[2].at + timedelta(seconds=1)) == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"since": datetime(2026, 1, 1)}, "timezone"),
        ({"kind": "explode"}, "kind"),
        ({"memory": "bad id!"}, "memory"),
    ],
)
def test_bad_filters(mg: MemoryGraph, kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        mg.audit(**kwargs)  # type: ignore[arg-type]


def test_events_are_append_only(mg: MemoryGraph) -> None:
    at = datetime(2026, 5, 1, tzinfo=UTC)
    event = new_event("forget", at, actor="a", reason="original", memory_ids=["m"])
    mg.store.apply(WriteBatch(nodes=[event_write(event)]))
    forged = event.model_copy(update={"reason": "rewritten", "actor": "mallory"})
    mg.store.apply(WriteBatch(nodes=[event_write(forged)]))
    assert mg.audit() == [event]
    assert mg.store.counts()[AUDIT_EVENT] == 1


def test_event_ids_are_unique_and_time_ordered() -> None:
    at = datetime(2026, 5, 1, tzinfo=UTC)
    ids = [new_event("retract", at, actor=None, reason="", memory_ids=[]).id for _ in range(50)]
    later = new_event(
        "retract", at + timedelta(microseconds=1), actor=None, reason="", memory_ids=[]
    )
    assert len(set(ids)) == 50
    assert all(i < later.id for i in ids)
