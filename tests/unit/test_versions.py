"""Note versions as deltas, and a note rebuilt from its versions (``core.versions``)."""

from __future__ import annotations

from datetime import UTC, datetime

from amem_graph.core.versions import (
    ERASED,
    NoteState,
    NoteVersion,
    redo_state,
    replayed,
    undo_state,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)


def note(*keywords: str, context: str = "") -> NoteState:
    return NoteState(keywords=list(keywords), context=context)


def change(version: int, before: NoteState, after: NoteState, reason: str = "") -> NoteVersion:
    return NoteVersion(
        id=f"m@{version}",
        memory="m",
        version=version,
        kind="evolve",
        at=AT,
        before=before,
        after=after,
        reason=reason,
    )


#: three changes of one note: b added, then c and context "x", then d (a later reorder kept)
S0, S1, S2, S3 = (
    note("a"),
    note("a", "b"),
    note("b", "a", "c", context="x"),
    note("d", "b", "a", "c", context="x"),
)
V1, V2, V3 = change(1, S0, S1), change(2, S1, S2), change(3, S2, S3)


def test_a_step_from_the_state_it_started_from_gives_its_end_exactly() -> None:
    # a delta would keep "a" first; the exact step keeps the change's own order
    assert redo_state(S1, V2) == S2
    assert undo_state(S3, V3) == S2


def test_a_step_over_another_state_moves_only_what_it_changed() -> None:
    assert redo_state(S0, V2) == note("a", "c", context="x")  # S0 kept V2's context before
    assert redo_state(note("a", context="y"), V2) == note("a", "c", context="y")  # rewritten
    assert undo_state(note("z", "b", "c", context="x"), V2) == note("z", "b", context="")


def test_every_change_in_force_gives_the_last_state() -> None:
    assert replayed([V3, V1, V2], {"m@1", "m@2", "m@3"}) == S3


def test_the_note_does_not_depend_on_the_order_changes_came_back() -> None:
    # the later change in force first, then the earlier: the same note as in version order
    later_only = replayed([V1, V2, V3], {"m@3"})
    assert later_only == note("a", "d", context="")
    assert replayed([V1, V2, V3], {"m@1", "m@3"}) == note("a", "b", "d")
    assert replayed([V1, V2, V3], {"m@3", "m@2", "m@1"}) == S3


def test_nothing_in_force_gives_the_first_state() -> None:
    assert replayed([V2, V1], set()) == S0


def test_no_rebuild_without_versions_or_from_erased_words() -> None:
    assert replayed([], set()) is None
    blank = change(1, NoteState(), NoteState(), reason=ERASED)
    assert replayed([blank, V2], {"m@2"}) is None
