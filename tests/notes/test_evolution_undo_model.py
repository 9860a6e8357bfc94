"""Retractions undo note evolution and restores redo it, in any order: a round trip is exact.

Hypothesis draws a few notes from a small vocabulary (so the offline note layer links them and
evolves the older ones), some of them derived from or superseding earlier ones, with reverts of
notes to earlier versions between them (later changes a retraction's undo must keep), then a series
of retractions (random targets, with or without cascade) and restores in a random order, each
retraction restored at some point. Whatever the order, once every retraction is restored each
memory is exactly what it was before the first one (note fields, version numbers, status), and
so is every note version's ``undone`` flag. Each example writes in a scope of its own. It found
two restores that did not give the state back: an old version left current beside the new one
(``test_retraction.py``, "taken_down"), a later revert undone by a second retraction's
restore (``test_evolution.py``, "later_revert_survives"), and, in a hunt of 4,000 examples,
the retraction of a later change restored before that of an earlier one re-applying them out of
order (``test_evolution.py``, "later_change_first": a restore now rebuilds the note from its
versions in version order; 20,000 examples since).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hunting import model_settings
from hypothesis import given
from hypothesis import strategies as st

from amem_graph import MemoryGraph
from amem_graph.stores.base import MemoryFilter
from notes.fakes import MakeGraph

WORDS = ["vault", "password", "staging", "rotate", "monday", "database", "audit", "oncall"]

#: a note: its words, the indices of earlier notes it derives from, whether it supersedes the
#: one before it, and maybe a revert after it (index of a note, a version it had)
_note = st.tuples(
    st.lists(st.sampled_from(WORDS), min_size=3, max_size=6),
    st.lists(st.integers(0, 10), max_size=2),
    st.booleans(),
    st.one_of(st.none(), st.tuples(st.integers(0, 10), st.integers(0, 5))),
)
#: a retraction's targets (indices) and cascade
_retraction = st.tuples(st.lists(st.integers(0, 10), min_size=1, max_size=2), st.booleans())
world = st.tuples(
    st.lists(_note, min_size=2, max_size=6),
    st.lists(_retraction, min_size=1, max_size=4),
    st.randoms(use_true_random=False),
)


def state(mg: MemoryGraph, scope: str) -> tuple[dict[str, dict[str, Any]], dict[str, list[bool]]]:
    """Every memory of the scope, fully, and the undone flags of each one's note versions."""
    found = mg.store.find_memories(MemoryFilter(scopes=(scope,), statuses=None))
    undone = {m.id: [v.undone for v in mg.history(m.id)] for m in found}
    return {m.id: m.model_dump() for m in found}, undone


def write(mg: MemoryGraph, scope: str, notes: list[Any]) -> list[str]:
    """Write the notes (the note layer links and evolves them), with reverts between."""
    ids: list[str] = []
    for n, (words, parents, supersedes, revert) in enumerate(notes):
        mid = f"{scope}-n{n}"
        old = ids[-1] if supersedes and ids else None
        if old is not None and mg.get(old).status != "active":
            old = None
        lineage = sorted({ids[i % len(ids)] for i in parents} - {old}) if ids else []
        text = f"note {n}: " + " ".join(words)
        mg.remember(text, id=mid, scope=scope, derived_from=lineage, supersedes=old)
        ids.append(mid)
        history = [] if revert is None else mg.history(ids[revert[0] % len(ids)])
        if history:  # back to one of the versions it has
            version = history[revert[1] % len(history)]
            mg.revert(ids[revert[0] % len(ids)], version.version, reason="model")
    return ids


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_restoring_every_retraction_in_any_order_gives_back_the_notes_exactly(
    make_graph: MakeGraph,
) -> None:
    mg = make_graph(link_threshold=0.3)  # links, so evolution, in about a quarter of examples

    @model_settings(25)
    @given(world)
    def run(drawn: tuple[list[Any], list[Any], Any]) -> None:
        notes, retractions, rng = drawn
        scope = f"s{uuid.uuid4().hex[:8]}"
        ids = write(mg, scope, notes)
        before = state(mg, scope)
        pending: list[str] = []
        for targets, cascade in retractions:
            chosen = sorted({ids[i % len(ids)] for i in targets})
            pending.append(mg.retract(chosen, reason="model", cascade=cascade).id)
            if rng.random() < 0.4:  # restore one of those still down, now
                mg.restore(pending.pop(rng.randrange(len(pending))))
        rng.shuffle(pending)
        for rid in pending:
            mg.restore(rid)
        assert state(mg, scope) == before

    run()
