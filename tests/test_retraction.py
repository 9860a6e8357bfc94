"""retract / restore: policy, selectors, one transaction, exact undo, composition, dry runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from poisoning import EVIL_SOURCE, World, build, dump, statuses

from amem_graph import MemoryGraph, NotFoundError, ValidationError
from amem_graph.provenance.retraction import RetractionPolicy
from amem_graph.stores.base import MemoryUpdate, WriteBatch

HELD = {"retracted", "quarantined"}


@pytest.fixture
def world(mg: MemoryGraph) -> World:
    return build(mg)


def recalled(mg: MemoryGraph, query: str, **options: Any) -> set[str]:
    return {h.memory.id for h in mg.recall(query, k=20, **options)}


# -- the end-to-end scenario --------------------------------------------------------


def test_poisoned_memory_is_traced_retracted_and_restored(mg: MemoryGraph, world: World) -> None:
    assert mg.get(world.poison).confidence < 0.5
    assert mg.agent("mallory").trust < 0.5
    assert mg.agent("erin").trust == 0.5  # wrote only after a successful episode: no credit
    impact = mg.impact(world.poison)
    assert set(impact.memory_ids) == world.affected
    before = dump(mg)

    report = mg.retract(world.poison, reason="poisoned rotation advice", by="analyst")

    assert set(report.retracted) == {world.poison, world.derived1, world.derived2}
    assert set(report.quarantined) == {world.written1, world.written2}
    assert set(report.memory_ids) == world.affected | {world.poison}
    everything = " ".join(m["content"] for m in before.values())
    assert recalled(mg, everything).isdisjoint(report.memory_ids)
    assert recalled(mg, everything) == set(before) - set(report.memory_ids)

    mg.restore(report.id, by="analyst")
    assert dump(mg) == before


def test_report_matches_the_stored_retraction(mg: MemoryGraph, world: World) -> None:
    report = mg.retract(world.poison, reason="poison")
    stored = mg.retraction(report.id)
    assert stored == report
    counts = mg.store.counts()
    assert counts["Retraction"] == 1
    assert counts["RETRACTED"] == len(report.memory_ids)
    edges = {e.dst: e.props for e in mg.store.edges([report.id], ["RETRACTED"], "out")}
    assert edges[world.poison]["effect"] == "retracted"
    assert edges[world.written1]["effect"] == "quarantined"
    assert edges[world.written1]["previous_status"] == "active"
    assert report.reverted_versions == [] and report.unsuperseded == []


def test_retract_is_one_transaction(
    mg: MemoryGraph, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[WriteBatch] = []
    apply = mg.store.apply

    def counting_apply(batch: WriteBatch) -> None:
        calls.append(batch)
        apply(batch)

    monkeypatch.setattr(mg.store, "apply", counting_apply)
    report = mg.retract(world.poison, reason="poison")
    assert len(calls) == 1
    mg.restore(report.id)
    assert len(calls) == 2


# -- what recall can see ---------------------------------------------------------------------


def test_no_retrieval_path_returns_held_memories(mg: MemoryGraph, world: World) -> None:
    text_only = {"mode": "weighted", "vector_weight": 0.0, "graph_weight": 0.0}
    vector_only = {"text_weight": 0.0, "graph_weight": 0.0}
    graph_from_text = {"mode": "weighted", "vector_weight": 0.0}
    assert world.poison in recalled(mg, "zebra quartz protocol", **text_only)
    assert world.poison in recalled(mg, "zebra quartz protocol", **vector_only)
    assert world.poison in recalled(mg, "marmalade violin harbour", **graph_from_text)

    mg.retract(world.poison, reason="poison", cascade=False)

    assert world.poison not in recalled(mg, "zebra quartz protocol", **text_only)
    assert world.poison not in recalled(mg, "zebra quartz protocol", **vector_only)
    assert world.poison not in recalled(mg, "marmalade violin harbour", **graph_from_text)
    with mg.episode(id="ep-after") as ep:
        assert world.poison not in {h.memory.id for h in ep.recall("zebra quartz protocol")}


def test_quarantined_memories_leave_recall_too(mg: MemoryGraph, world: World) -> None:
    assert world.written1 in recalled(mg, "tundra falcon ribbon")
    mg.retract(world.poison, reason="poison")
    assert mg.get(world.written1).status == "quarantined"
    assert world.written1 not in recalled(mg, "tundra falcon ribbon")
    assert world.written1 in recalled(mg, "tundra falcon ribbon", include=["quarantined"])


# -- policy ------------------------------------------------------------------------------------


def test_policy_can_quarantine_derived_and_spare_readers(mg: MemoryGraph, world: World) -> None:
    policy = RetractionPolicy(derived="quarantine", readers="none")
    report = mg.retract(world.poison, reason="poison", policy=policy)
    assert report.retracted == [world.poison]
    assert report.quarantined == sorted([world.derived1, world.derived2])
    now = statuses(mg)
    assert now[world.derived1] == "quarantined"
    assert now[world.written1] == "active"


def test_policy_from_the_graph_default(mg: MemoryGraph, world: World) -> None:
    mg.retraction_policy = RetractionPolicy(readers="retract")
    report = mg.retract(world.poison, reason="poison")
    assert report.quarantined == []
    assert set(report.retracted) == world.affected | {world.poison}


def test_policy_none_for_derived_stops_at_the_target(mg: MemoryGraph, world: World) -> None:
    report = mg.retract(world.poison, reason="poison", policy={"derived": "none"})
    assert report.retracted == [world.poison]
    assert report.quarantined == [world.written1]  # only the poison's own reader


def test_without_cascade_only_the_target_changes(mg: MemoryGraph, world: World) -> None:
    before = statuses(mg)
    report = mg.retract(world.poison, reason="poison", cascade=False)
    after = statuses(mg)
    assert report.retracted == [world.poison] and report.quarantined == []
    assert {m for m in after if after[m] != before[m]} == {world.poison}


# -- selectors -------------------------------------------------------------------------------


def test_retract_by_agent_since(mg: MemoryGraph) -> None:
    cutoff = datetime(2026, 1, 1, tzinfo=UTC)
    mg.remember("old harmless note", agent="eve", id="old", timestamp=cutoff - timedelta(days=3))
    mg.remember("new bad note", agent="eve", id="new", timestamp=cutoff + timedelta(days=1))
    mg.remember("child of bad", agent="bob", id="child", derived_from=["new"])
    mg.remember("someone else's", agent="bob", id="other", timestamp=cutoff + timedelta(days=2))
    report = mg.retract(agent="eve", since=cutoff, reason="eve was compromised")
    assert report.targets == ["new"]
    assert report.retracted == ["child", "new"]
    assert report.selector.startswith("agent:eve")
    assert statuses(mg) == {
        "old": "active",
        "new": "retracted",
        "child": "retracted",
        "other": "active",
    }


def test_retract_by_agent_without_since_takes_all(mg: MemoryGraph) -> None:
    mg.remember("first", agent="eve", id="a1")
    mg.remember("second", agent="eve", id="a2")
    mg.remember("third", agent="bob", id="b1")
    report = mg.retract(agent="eve", reason="compromised")
    assert report.targets == ["a1", "a2"]
    assert statuses(mg)["b1"] == "active"


def test_retract_by_source(mg: MemoryGraph, world: World) -> None:
    report = mg.retract(source=EVIL_SOURCE, reason="source is a known troll wiki")
    assert report.targets == [world.poison]
    assert set(report.memory_ids) == world.affected | {world.poison}


def test_retract_by_episode(mg: MemoryGraph, world: World) -> None:
    report = mg.retract(episode=world.reader1, reason="episode ran with bad tools", cascade=False)
    assert report.targets == sorted([world.before_read, world.written1])
    assert statuses(mg)[world.poison] == "active"


def test_retract_several_ids(mg: MemoryGraph, world: World) -> None:
    report = mg.retract([world.clean, world.written2], reason="bulk", cascade=False)
    assert report.retracted == sorted([world.clean, world.written2])


# -- validation: nothing is written on bad input -----------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"id": "ghost"}, NotFoundError, "ghost"),
        ({"id": ["poison", "ghost"]}, NotFoundError, "ghost"),
        ({"agent": "nobody"}, NotFoundError, "nobody"),
        ({"source": "https://nowhere.example"}, NotFoundError, "nowhere"),
        ({"episode": "ep-none"}, NotFoundError, "ep-none"),
        ({}, ValidationError, "exactly one"),
        ({"id": "poison", "agent": "mallory"}, ValidationError, "exactly one"),
        ({"id": "poison", "since": datetime(2026, 1, 1, tzinfo=UTC)}, ValidationError, "since"),
        ({"agent": "mallory", "since": datetime(2026, 1, 1)}, ValidationError, "timezone"),
        ({"id": "poison", "policy": {"derived": "explode"}}, ValidationError, "policy"),
        ({"id": "poison", "policy": {"typo": "retract"}}, ValidationError, "policy"),
        ({"id": "poison", "reason": "  "}, ValidationError, "reason"),
        ({"id": []}, ValidationError, "empty"),
    ],
)
def test_bad_input_writes_nothing(
    mg: MemoryGraph, world: World, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    before = mg.store.counts()
    kwargs.setdefault("reason", "test")
    with pytest.raises(error, match=match):
        mg.retract(**kwargs)
    assert mg.store.counts() == before


def test_dry_run_changes_nothing(mg: MemoryGraph, world: World) -> None:
    counts, memories = mg.store.counts(), dump(mg)
    preview = mg.retract(world.poison, reason="poison", dry_run=True)
    assert mg.store.counts() == counts
    assert dump(mg) == memories
    assert mg.audit() == []
    real = mg.retract(world.poison, reason="poison")
    assert preview.dry_run and not real.dry_run
    assert (preview.retracted, preview.quarantined) == (real.retracted, real.quarantined)
    with pytest.raises(NotFoundError):
        mg.restore(preview.id)


# -- restore and composition -----------------------------------------------------------------


def test_restore_twice_is_a_no_op(mg: MemoryGraph, world: World) -> None:
    report = mg.retract(world.poison, reason="poison")
    first = mg.restore(report.id)
    assert set(first.restored) == set(report.memory_ids) and first.held == []
    counts, memories = mg.store.counts(), dump(mg)
    again = mg.restore(report.id)
    assert again.already_restored and again.restored_at == first.restored_at
    assert (mg.store.counts(), dump(mg)) == (counts, memories)
    assert mg.retraction(report.id).restored_at == first.restored_at


def test_restore_unknown_retraction(mg: MemoryGraph) -> None:
    with pytest.raises(NotFoundError, match="retraction-nope"):
        mg.restore("retraction-nope")


@pytest.mark.parametrize("restore_first", ["wide", "narrow"])
def test_overlapping_retractions_compose(mg: MemoryGraph, world: World, restore_first: str) -> None:
    before = dump(mg)
    wide = mg.retract(world.poison, reason="poison")
    narrow = mg.retract(world.derived1, reason="also wrong on its own", cascade=False)
    first, second = (wide, narrow) if restore_first == "wide" else (narrow, wide)

    report = mg.restore(first.id)
    now = statuses(mg)
    assert now[world.derived1] == "retracted"  # still held by the other retraction
    assert world.derived1 in report.held
    if first is wide:
        assert now[world.poison] == "active" and now[world.written1] == "active"
    else:
        assert now[world.poison] == "retracted"

    mg.restore(second.id)
    assert dump(mg) == before


def test_stronger_effect_wins_and_weaker_remains(mg: MemoryGraph, world: World) -> None:
    wide = mg.retract(world.poison, reason="poison")  # quarantines written1
    direct = mg.retract(world.written1, reason="wrong itself", cascade=False)
    assert mg.get(world.written1).status == "retracted"
    mg.restore(direct.id)
    assert mg.get(world.written1).status == "quarantined"
    mg.restore(wide.id)
    assert mg.get(world.written1).status == "active"


def test_restore_returns_a_memory_to_its_own_base_status(mg: MemoryGraph, world: World) -> None:
    first = mg.retract(world.derived2, reason="one", cascade=False)
    second = mg.retract(world.derived2, reason="two", cascade=False)
    mg.restore(first.id)
    third = mg.retract(world.derived2, reason="three", cascade=False)
    mg.restore(second.id)
    assert mg.get(world.derived2).status == "retracted"
    mg.restore(third.id)
    assert mg.get(world.derived2).status == "active"


def test_forgotten_memory_does_not_break_restore(mg: MemoryGraph, world: World) -> None:
    report = mg.retract(world.poison, reason="poison")
    mg.forget(world.written2, reason="erasure request")
    result = mg.restore(report.id)
    assert world.written2 not in result.restored
    assert mg.get(world.written1).status == "active"


def _versions(mg: MemoryGraph) -> dict[str, str]:
    """v1, superseded by v2 (the current version); their statuses from now on."""
    mg.remember("the vpn is ops-eu", id="v1", scope="erasure")
    mg.remember("the vpn is ops-us", id="v2", scope="erasure", supersedes="v1")
    return mg.store.statuses(["v1", "v2"])


def test_erasing_the_new_version_while_the_old_is_retracted_restores_the_old_as_current(
    mg: MemoryGraph,
) -> None:
    """Found by the retraction model test: the hold kept "superseded" as the status to
    restore, and the restore put v1 back as superseded by a memory that no longer exists."""
    assert _versions(mg) == {"v1": "superseded", "v2": "active"}
    report = mg.retract("v1", reason="wrong too", cascade=False)
    mg.forget("v2", reason="erasure request")
    mg.restore(report.id)
    assert mg.store.statuses(["v1", "v2"]) == {"v1": "active"}


def test_erasing_a_retracted_new_version_leaves_the_old_current_after_the_restore(
    mg: MemoryGraph,
) -> None:
    """Retracting v2 put v1 back; the restore re-superseded v1 even once v2 was erased."""
    _versions(mg)
    report = mg.retract("v2", reason="wrong", cascade=False)
    assert report.unsuperseded == ["v1"]
    mg.forget("v2", reason="erasure request")
    mg.restore(report.id)
    assert mg.store.statuses(["v1", "v2"]) == {"v1": "active"}
    assert [h.memory.id for h in mg.recall("vpn", scope="erasure")] == ["v1"]


def test_the_old_version_taken_down_after_the_new_one_comes_back_superseded(
    mg: MemoryGraph,
) -> None:
    """Found by the evolution round-trip test: retracting v2 put v1 back, a second retraction
    took v1 (and v2) down; restoring the first, then the second, left v1 current beside v2,
    because the second's hold on v1 recorded v1 as current."""
    _versions(mg)
    first = mg.retract("v2", reason="wrong", cascade=False)
    second = mg.retract(["v1", "v2"], reason="both wrong", cascade=False)
    mg.restore(first.id)
    assert mg.store.statuses(["v1", "v2"]) == {"v1": "retracted", "v2": "retracted"}
    mg.restore(second.id)
    assert mg.store.statuses(["v1", "v2"]) == {"v1": "superseded", "v2": "active"}


def test_a_version_written_while_the_restored_one_was_down_is_reported_beside_it(
    mg: MemoryGraph,
) -> None:
    """v2 retracted puts v1 back; an agent then supersedes v1 with v3. Restoring v2 brings it
    back current beside v3 (a restore puts back what was, it does not rank versions): the
    report names the fork so the analyst can supersede one."""
    _versions(mg)
    report = mg.retract("v2", reason="wrong", cascade=False)
    mg.remember("the vpn is ops-ap", id="v3", scope="erasure", supersedes="v1")
    back = mg.restore(report.id)
    assert mg.store.statuses(["v1", "v2", "v3"]) == {
        "v1": "superseded",
        "v2": "active",
        "v3": "active",
    }
    assert back.forked == {"v2": ["v3"]}
    mg.remember("the vpn is ops-ap, really", id="v4", scope="erasure", supersedes="v2")
    again = mg.retract("v4", reason="check", cascade=False)
    assert mg.restore(again.id).forked == {}  # v4 supersedes v2 alone: no fork


def test_a_plain_restore_reports_no_fork(mg: MemoryGraph) -> None:
    _versions(mg)
    report = mg.retract("v2", reason="wrong", cascade=False)
    assert mg.restore(report.id).forked == {}


def test_restore_keeps_a_superseded_memory_superseded(mg: MemoryGraph, world: World) -> None:
    mg.store.apply(WriteBatch(memory_updates=[MemoryUpdate(world.clean, {"status": "superseded"})]))
    report = mg.retract(world.clean, reason="wrong too", cascade=False)
    edge = mg.store.edges([report.id], ["RETRACTED"], "out")[0]
    assert (edge.props["previous_status"], edge.props["base_status"]) == (
        "superseded",
        "superseded",
    )
    assert mg.get(world.clean).status == "retracted"
    mg.restore(report.id)
    assert mg.get(world.clean).status == "superseded"
