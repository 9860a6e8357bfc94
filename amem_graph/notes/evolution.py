"""Evolution: a new note may rewrite the notes it links to, and every rewrite is a version.

Before a note changes, its state is stored as a ``MemoryVersion`` (with the state after, so the
change can be undone as a delta) ``HAS_VERSION`` from the memory and ``CAUSED_BY`` the memory
whose arrival caused it. A model may rewrite a neighbour's context and tags; offline, a
neighbour only gains the new note's keywords that occur in its own text. The caller's own
keywords, tags and context are never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from amem_graph.core.errors import NotFoundError, ValidationError
from amem_graph.core.models import Memory
from amem_graph.core.schema import MEMORY_VERSION
from amem_graph.core.text import analyze, stem
from amem_graph.core.versions import NoteState, NoteVersion, VersionKind, version_id
from amem_graph.notes.links import terms
from amem_graph.notes.prompts import NeighbourUpdate
from amem_graph.stores.base import EdgeWrite, GraphStore, MemoryUpdate, NodeWrite, WriteBatch


def offline_evolution(new: Memory, neighbour: Memory, state: NoteState) -> NoteState:
    """``state`` plus the new note's keywords found in the neighbour's own text."""
    text = set(analyze(neighbour.content))
    have = {
        *terms(neighbour),
        *(" ".join(stem(w) for w in k.lower().split()) for k in state.keywords),
    }
    gained = [
        surface
        for key, surface in terms(new).items()
        if key not in have and all(part in text for part in key.split())
    ]
    if not gained:
        return state
    return state.model_copy(update={"keywords": [*state.keywords, *gained]})


def llm_evolution(update: NeighbourUpdate, neighbour: Memory, state: NoteState) -> NoteState:
    """``state`` with the context and tags the model wrote (the caller's tags left out)."""
    changes: dict[str, object] = {}
    if update.context is not None and " ".join(update.context.split()):
        changes["context"] = " ".join(update.context.split())
    if update.tags is not None:
        given = {t.lower() for t in neighbour.tags}
        tags = [t.strip() for t in update.tags if t.strip() and t.strip().lower() not in given]
        changes["tags"] = list(dict.fromkeys(tags))
    return state.model_copy(update=changes) if changes else state


class Notebook:
    """The notes a write is changing, as they stand mid-batch: one neighbour can evolve more
    than once in a batch, each change a version on top of the last."""

    def __init__(self) -> None:
        self._state: dict[str, tuple[NoteState, int]] = {}

    def state(self, memory: Memory) -> NoteState:
        """The memory's note as this batch has left it so far."""
        return self._state.get(memory.id, (NoteState.of(memory), memory.version))[0]

    def change(
        self,
        batch: WriteBatch,
        memory: Memory,
        after: NoteState,
        *,
        kind: VersionKind,
        at: datetime,
        caused_by: str | None,
        reason: str,
    ) -> NoteVersion | None:
        """Store the note's current state as a version and set it to ``after`` (no-op when
        nothing changes)."""
        before, version = self._state.get(memory.id, (NoteState.of(memory), memory.version))
        if after == before:
            return None
        record = NoteVersion(
            id=version_id(memory.id, version),
            memory=memory.id,
            version=version,
            kind=kind,
            at=at,
            before=before,
            after=after,
            caused_by=caused_by,
            reason=reason,
        )
        batch.nodes.append(NodeWrite(MEMORY_VERSION, record.id, on_create=record.props()))
        batch.edges.append(EdgeWrite("HAS_VERSION", memory.id, record.id))
        if caused_by is not None:
            batch.edges.append(EdgeWrite("CAUSED_BY", record.id, caused_by))
        batch.memory_updates.append(
            MemoryUpdate(memory.id, changes=after.changes(), increments={"version": 1})
        )
        self._state[memory.id] = (after, version + 1)
        return record


def history(store: GraphStore, memory_id: str) -> list[NoteVersion]:
    """A memory's stored versions, oldest first."""
    ids = [e.dst for e in store.edges([memory_id], ["HAS_VERSION"], "out")]
    nodes = store.get_nodes(MEMORY_VERSION, ids)
    versions = [NoteVersion.from_node(n.id, n.props) for n in nodes.values()]
    return sorted(versions, key=lambda v: v.version)


def find_version(
    versions: Sequence[NoteVersion], memory_id: str, version: int | str
) -> NoteVersion:
    """The version asked for, by number or id."""
    for v in versions:
        if version in (v.version, v.id):
            return v
    known = [v.version for v in versions]
    raise NotFoundError(f"memory {memory_id!r} has no version {version!r}; it has {known}")


def plan_revert(
    memory: Memory, versions: Sequence[NoteVersion], version: int | str, at: datetime, reason: str
) -> tuple[WriteBatch, NoteVersion | None]:
    """The batch that puts the note of ``memory`` back to the state it had at ``version``
    (itself a new version, so a revert can be reverted); nothing when it already has it."""
    if isinstance(version, bool) or not isinstance(version, int | str):
        raise ValidationError(f"version must be a number or a version id, got {version!r}")
    target = find_version(versions, memory.id, version)
    batch = WriteBatch()
    record = Notebook().change(
        batch, memory, target.before, kind="revert", at=at, caused_by=None, reason=reason
    )
    return batch, record
