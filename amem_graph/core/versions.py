"""A memory's note state and its stored versions: the format the note layer writes and the
retraction undoes.

Every change to a note (an evolution caused by another memory, a revert) first stores a
``MemoryVersion`` node holding the state before *and* after the change. Keeping
both makes the change a delta: undoing it later removes what it added and puts back what it
removed, leaving alone what other changes did since (``undo_state`` / ``redo_state``).
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from amem_graph.core.models import Memory

VersionKind = Literal["evolve", "revert"]
_FIELDS = ("keywords", "tags", "context")
#: the reason an erasure leaves on the versions whose words it blanked
ERASED = "erased"


class NoteState(BaseModel):
    """The part of a memory the note layer may rewrite."""

    model_config = ConfigDict(frozen=True)

    keywords: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    context: str = ""

    @classmethod
    def of(cls, memory: Memory) -> NoteState:
        """The memory's current note."""
        return cls(
            keywords=list(memory.note_keywords),
            tags=list(memory.note_tags),
            context=memory.note_context,
        )

    def changes(self) -> dict[str, Any]:
        """``MemoryUpdate.changes`` that set a memory's note to this state."""
        return {
            "note_keywords": list(self.keywords),
            "note_tags": list(self.tags),
            "note_context": self.context,
        }

    def props(self, prefix: str) -> dict[str, Any]:
        """Node properties ``<prefix>_keywords`` etc."""
        return {f"{prefix}_{name}": getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_props(cls, props: dict[str, Any], prefix: str) -> NoteState:
        """The state stored by ``props`` (absent lists and text read as empty)."""
        return cls(
            keywords=list(props.get(f"{prefix}_keywords") or []),
            tags=list(props.get(f"{prefix}_tags") or []),
            context=str(props.get(f"{prefix}_context") or ""),
        )


class NoteVersion(BaseModel):
    """One stored change of a memory's note: the state it had at ``version`` and the state the
    change left; ``caused_by`` is the memory whose arrival caused an evolution."""

    model_config = ConfigDict(frozen=True)

    id: str
    memory: str
    version: int
    kind: VersionKind
    at: datetime
    before: NoteState
    after: NoteState
    caused_by: str | None = None
    reason: str = ""
    #: an evolution undone by a retraction still in force
    undone: bool = False

    def props(self) -> dict[str, Any]:
        """What the MemoryVersion node stores."""
        return {
            "memory": self.memory,
            "version": self.version,
            "kind": self.kind,
            "at": self.at,
            "caused_by": self.caused_by,
            "reason": self.reason,
            "undone": self.undone,
            **self.before.props("before"),
            **self.after.props("after"),
        }

    @classmethod
    def from_node(cls, node_id: str, props: dict[str, Any]) -> NoteVersion:
        """A version read back from its node."""
        return cls(
            id=node_id,
            memory=str(props["memory"]),
            version=int(props["version"]),
            kind=props["kind"],
            at=props["at"],
            before=NoteState.from_props(props, "before"),
            after=NoteState.from_props(props, "after"),
            caused_by=props.get("caused_by"),
            reason=str(props.get("reason") or ""),
            undone=bool(props.get("undone", False)),
        )


def version_id(memory_id: str, version: int) -> str:
    """Stable id of the version holding memory ``memory_id``'s note at ``version``."""
    return f"{memory_id}@{version}"


def _shift(current: list[str], drop: list[str], add: list[str]) -> list[str]:
    gone = set(drop)
    kept = [x for x in current if x not in gone]
    return kept + [x for x in add if x not in kept]


def undo_state(current: NoteState, change: NoteVersion) -> NoteState:
    """``current`` without ``change``: its additions removed, its removals put back, and its
    context rolled back if nothing rewrote the context since."""
    return _replay(current, change.after, change.before)


def redo_state(current: NoteState, change: NoteVersion) -> NoteState:
    """``current`` with ``change`` applied again (the inverse of ``undo_state``)."""
    return _replay(current, change.before, change.after)


def replayed(versions: Sequence[NoteVersion], applied: Set[str]) -> NoteState | None:
    """The note its versions give when only those in ``applied`` are in force: the first
    version's state before, moved by each applied change in version order. Restores that come
    in any order then agree on one note (re-applying the changes as deltas in the order the
    restores come put a later change's keywords before an earlier one's). None when an erasure
    blanked a version: its words are gone, so the note cannot be rebuilt from them."""
    ordered = sorted(versions, key=lambda v: v.version)
    if not ordered or any(v.reason == ERASED for v in ordered):
        return None
    state = ordered[0].before
    for v in ordered:
        if v.id in applied:
            state = redo_state(state, v)
    return state


def _replay(current: NoteState, src: NoteState, dst: NoteState) -> NoteState:
    """``current`` moved by the step from ``src`` to ``dst``: ``dst`` itself when ``current``
    is ``src``; else what ``dst`` has over ``src`` added, what it lacks removed, and the
    context set to ``dst``'s if ``current`` still has ``src``'s (a later rewrite of the
    context is kept)."""
    if current == src:
        return dst
    out: dict[str, Any] = {}
    for name in ("keywords", "tags"):
        s, d = getattr(src, name), getattr(dst, name)
        gained = [x for x in d if x not in s]
        lost = [x for x in s if x not in d]
        out[name] = _shift(getattr(current, name), lost, gained)
    out["context"] = dst.context if current.context == src.context else current.context
    return NoteState(**out)
