"""Evolution: versioned neighbour rewrites, history, revert, and their undo by retraction."""

from __future__ import annotations

from typing import Any

import pytest

from amem_graph import MemoryGraph, NotFoundError, ValidationError
from amem_graph.stores.base import MemoryFilter
from notes.fakes import MakeGraph, note, scripted

NEIGHBOUR = (
    "The staging database password rotates every Monday morning; the vault CLI stores it and "
    "the oncall engineer checks the audit dashboard"
)
NEWCOMER = "Use the vault to rotate the staging database password on Monday"


def dump(mg: MemoryGraph) -> dict[str, dict[str, Any]]:
    return {m.id: m.model_dump() for m in mg.store.find_memories(MemoryFilter(statuses=None))}


def evolved(make_graph: MakeGraph) -> MemoryGraph:
    mg = make_graph()
    mg.remember(NEIGHBOUR, id="n", agent="ops")
    mg.remember(NEWCOMER, id="m", agent="eve")
    return mg


def test_offline_evolution_adds_shared_keywords_as_a_version(make_graph: MakeGraph) -> None:
    mg = evolved(make_graph)
    n = mg.get("n")
    assert n.note_keywords[-1] == "vault" and n.version == 2
    assert n.keywords == [] and n.tags == []  # the caller's fields are untouched
    [v] = mg.history("n")
    assert (v.id, v.version, v.kind, v.caused_by, v.undone) == ("n@1", 1, "evolve", "m", False)
    assert "vault" not in v.before.keywords and v.after.keywords == n.note_keywords
    assert {(e.type, e.src, e.dst) for e in mg.store.edges(["n@1"], None, "both")} == {
        ("HAS_VERSION", "n", "n@1"),
        ("CAUSED_BY", "n@1", "m"),
    }


def test_no_evolution_when_switched_off(make_graph: MakeGraph) -> None:
    mg = make_graph(evolve=False)
    mg.remember(NEIGHBOUR, id="n")
    mg.remember(NEWCOMER, id="m")
    assert mg.history("n") == [] and mg.get("n").version == 1


def test_model_rewrites_context_and_tags_of_a_real_neighbour(make_graph: MakeGraph) -> None:
    model = scripted(
        note(["password", "rotation"], ["security"], "When the staging password rotates."),
        note(["vault"], ["howto"], "How to rotate it."),
        {
            "links": [{"id": "n", "reason": "same procedure", "weight": 0.8}],
            "evolve": [
                {
                    "id": "n",
                    "context": "Rotation schedule; see the vault how-to.",
                    "tags": ["security", "runbook"],
                }
            ],
        },
    )
    mg = make_graph(llm=model, adjudicate=False)
    mg.remember(NEIGHBOUR, id="n", tags=["ops"])
    mg.remember(NEWCOMER, id="m")
    n = mg.get("n")
    assert n.note_context == "Rotation schedule; see the vault how-to."
    assert n.note_tags == ["security", "runbook"] and n.tags == ["ops"]
    [v] = mg.history("n")
    assert v.before.context == "When the staging password rotates." and v.caused_by == "m"


def test_revert_restores_a_version_and_is_audited(make_graph: MakeGraph) -> None:
    mg = evolved(make_graph)
    before = mg.history("n")[0].before
    reverted = mg.revert("n", 1, reason="keyword was noise", by="curator")
    assert reverted.note_keywords == before.keywords and reverted.version == 3
    versions = mg.history("n")
    assert [(v.version, v.kind) for v in versions] == [(1, "evolve"), (2, "revert")]
    [event] = mg.audit(memory="n", kind="revert")
    assert (event.actor, event.reason) == ("curator", "keyword was noise")
    assert mg.revert("n", "n@1").version == 3  # already there: nothing written
    again = mg.revert("n", 2)  # a revert can be reverted
    assert "vault" in again.note_keywords


def test_revert_bad_input(make_graph: MakeGraph) -> None:
    mg = evolved(make_graph)
    with pytest.raises(NotFoundError, match="no version 7"):
        mg.revert("n", 7)
    with pytest.raises(ValidationError):
        mg.revert("n", True)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        mg.history("ghost")


def test_retracting_the_cause_undoes_the_evolution_and_restore_redoes_it(
    make_graph: MakeGraph,
) -> None:
    mg = evolved(make_graph)
    before = dump(mg)
    report = mg.retract("m", reason="poisoned")
    assert report.reverted_versions == ["n@1"]
    n = mg.get("n")
    assert "vault" not in n.note_keywords and n.status == "active"
    assert mg.history("n")[0].undone
    assert mg.retraction(report.id).reverted_versions == ["n@1"]
    assert "n" in mg.audit(kind="retract")[0].memory_ids

    mg.restore(report.id)
    assert dump(mg) == before  # exactly, version numbers included
    assert not mg.history("n")[0].undone


def test_undo_keeps_later_changes_by_others(make_graph: MakeGraph) -> None:
    mg = evolved(make_graph)
    mg.revert("n", 1)  # a later change: back to the note before m
    mg.revert("n", 2)  # and forward again: vault is back, by a revert
    report = mg.retract("m", reason="poisoned")
    assert "vault" not in mg.get("n").note_keywords
    mg.restore(report.id)
    assert "vault" in mg.get("n").note_keywords


def test_a_later_revert_survives_two_retractions_of_the_cause_restored_in_turn(
    make_graph: MakeGraph,
) -> None:
    """Found by the evolution round-trip test: the first restore handed the undo record to the
    retraction still holding m without the exact notes it held, so the second restore re-applied
    m's change as a delta, over the later revert that had taken it out."""
    mg = evolved(make_graph)
    mg.revert("n", 1)  # a later change: vault taken out again
    before = dump(mg)
    first = mg.retract("m", reason="poisoned")
    second = mg.retract("m", reason="poisoned, again")
    mg.restore(first.id)
    mg.restore(second.id)
    assert "vault" not in mg.get("n").note_keywords
    assert dump(mg) == before


def test_restoring_the_later_change_first_gives_the_note_back_exactly(
    make_graph: MakeGraph,
) -> None:
    """Found by the evolution round-trip test (about one example in 4,000): m1 is evolved by
    m2 then by m3; both are retracted, and the later change's retraction is restored first."""
    mg = make_graph(link_threshold=0.3)
    texts = [
        "vault vault vault",
        "password rotate monday database audit staging",
        "vault vault password",
        "vault password staging",
    ]
    for n, text in enumerate(texts):
        mg.remember(f"note {n}: {text}", id=f"m{n}")
    assert [v.caused_by for v in mg.history("m1")] == ["m2", "m3"]
    before = dump(mg)
    later = mg.retract("m3", reason="wrong", cascade=False)
    earlier = mg.retract("m2", reason="wrong", cascade=False)
    mg.restore(later.id)
    mg.restore(earlier.id)
    assert dump(mg) == before


def test_dry_run_reports_versions_and_writes_nothing(make_graph: MakeGraph) -> None:
    mg = evolved(make_graph)
    before = dump(mg)
    report = mg.retract("m", reason="check", dry_run=True)
    assert report.reverted_versions == ["n@1"]
    assert dump(mg) == before


def test_overlapping_retractions_compose(make_graph: MakeGraph) -> None:
    mg = evolved(make_graph)
    before = dump(mg)
    first = mg.retract("m", reason="one")
    second = mg.retract(agent="eve", reason="two")  # holds m down too
    assert second.reverted_versions == []  # already undone by the first
    mg.restore(first.id)
    assert "vault" not in mg.get("n").note_keywords  # m is still held by the second
    mg.restore(second.id)
    assert dump(mg) == before
