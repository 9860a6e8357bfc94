"""The note layer's public calls, mixed into ``MemoryGraph``: writing with notes, supersession,
versions, consolidation and forgetting.

Kept apart from ``graph.py`` so the facade stays small; each call validates, plans one
``WriteBatch`` with ``amem_graph.notes`` and applies it in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from amem_graph.core.errors import NotFoundError, ValidationError
from amem_graph.core.models import Memory, MemoryInput, utcnow, valid_name
from amem_graph.core.versions import NoteVersion
from amem_graph.memory.writes import build_remember_batch, parse_inputs
from amem_graph.notes import evolution, supersession
from amem_graph.provenance.audit import authors, event_write, new_event
from amem_graph.stores.base import WriteBatch

if TYPE_CHECKING:
    from amem_graph.core.config import MemoryGraphConfig
    from amem_graph.embeddings import Embedder
    from amem_graph.notes.pipeline import NoteLayer
    from amem_graph.stores.base import GraphStore

#: fields ``update`` carries over from the memory it replaces, unless given
INHERITED = ("scope", "kind", "task", "tags", "keywords", "context", "importance", "valid_to")


class IngestReport(BaseModel):
    """What a write did: the memories in input order, and which were new."""

    memories: list[Memory]
    written: list[str] = Field(default_factory=list, description="ids stored by this write")
    already_present: list[str] = Field(
        default_factory=list, description="ids that existed with the same content"
    )
    merged: dict[int, str] = Field(
        default_factory=dict, description="input index -> the memory it was merged into"
    )


def _actor(value: str | None) -> str | None:
    return None if value is None else valid_name(value, "by")


class NoteMethods:
    """Public note-layer methods of ``MemoryGraph`` (see the module docstring)."""

    store: GraphStore
    embedder: Embedder
    config: MemoryGraphConfig
    note_layer: NoteLayer

    # -- writing --------------------------------------------------------------------------

    def ingest(self, items: Sequence[Mapping[str, Any] | MemoryInput]) -> IngestReport:
        """``remember_many`` with its report: which memories were written, which were
        already present (same id and content) and which merged into an existing memory."""
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise ValidationError("remember_many takes a list of items")
        prepared = []
        for item in items:
            if isinstance(item, Mapping) and item.get("scope") is None:
                item = {**item, "scope": self.config.default_scope}
            prepared.append(item)
        inputs = parse_inputs(prepared, self.config.max_content_length)
        if not inputs:
            return IngestReport(memories=[])
        batch, report = self._plan_write(inputs)
        self.store.apply(batch)
        return report

    def _plan_write(
        self, inputs: Sequence[MemoryInput], *, exclude: Sequence[str] = ()
    ) -> tuple[WriteBatch, IngestReport]:
        now = utcnow()
        layer = self.note_layer if self.config.notes.enabled else None
        planned = build_remember_batch(
            self.store, self.embedder, inputs, now, layer, exclude=frozenset(exclude)
        )
        batch, memories = planned.batch, planned.memories
        for old, new_id, reason in planned.superseded:
            agents = authors(self.store, [old.id])
            event = new_event(
                "supersede",
                now,
                actor=None,
                reason=reason,
                memory_ids=[new_id, old.id],
                agent_ids=agents,
            )
            batch.nodes.append(event_write(event))
        fresh = {m.id for m in batch.memories}
        return batch, IngestReport(
            memories=memories,
            written=[m.id for m in memories if m.id in fresh],
            already_present=[
                m.id
                for i, m in enumerate(memories)
                if m.id not in fresh and i not in planned.merged
            ],
            merged=planned.merged,
        )

    # -- supersession ---------------------------------------------------------------------

    def supersede(
        self,
        old_id: str,
        content: str | None = None,
        *,
        replacement: str | None = None,
        reason: str = "",
        by: str | None = None,
        **fields: Any,
    ) -> Memory:
        """Replace memory ``old_id``: write ``content`` as a new memory (``remember``'s
        keyword arguments in ``fields``; its scope is the old one's), or name an existing
        ``replacement``. The new memory SUPERSEDES the old, which leaves active recall
        (status ``superseded``); retracting the new one puts the old one back. Returns the
        new memory.
        """
        old = self._require(old_id)
        if (content is None) == (replacement is None):
            raise ValidationError("supersede takes either content or replacement, not both")
        actor = _actor(by)
        at = utcnow()
        if replacement is not None:
            if fields:
                raise ValidationError(f"supersede by replacement takes no {sorted(fields)}")
            new = self._require(replacement)
            supersession.check_supersedable(self.store, old, new.scope)
            batch = WriteBatch()
        else:
            fields.setdefault("scope", old.scope)
            supersession.check_supersedable(self.store, old, str(fields["scope"]))
            if fields.get("id") == old.id:
                raise ValidationError(f"memory {old.id!r} cannot supersede itself")
            inputs = parse_inputs([{"content": content, **fields}], self.config.max_content_length)
            batch, report = self._plan_write(inputs, exclude=[old.id])
            new = report.memories[0]
        supersession.supersede_into(batch, old, new.id, reason=reason, by=actor, at=at)
        event = new_event(
            "supersede",
            at,
            actor=actor,
            reason=reason,
            memory_ids=[new.id, old.id],
            agent_ids=authors(self.store, [old.id]) | ({new.agent} if new.agent else set()),
        )
        batch.nodes.append(event_write(event))
        self.store.apply(batch)
        return new

    def update(
        self,
        memory_id: str,
        content: str,
        *,
        reason: str = "",
        by: str | None = None,
        **fields: Any,
    ) -> Memory:
        """A new version of memory ``memory_id`` with new ``content``: it supersedes the old
        one and inherits its scope, kind, task, tags, keywords, context, importance and
        ``valid_to`` unless given (the agent, episode and source are the writer's own).
        Updating with the same content returns the memory unchanged.
        """
        old = self._require(memory_id)
        if content == old.content and not fields:
            return old
        for name in INHERITED:
            fields.setdefault(name, getattr(old, name))
        return self.supersede(old.id, content, reason=reason, by=by, **fields)

    def current(self, memory_id: str) -> Memory:
        """The memory that stands for ``memory_id`` now: itself, or its newest replacement."""
        return supersession.current(self.store, valid_name(memory_id, "memory id"))

    def supersession_chain(self, memory_id: str) -> list[Memory]:
        """Every version of a fact (the memories linked by SUPERSEDES), oldest first."""
        return supersession.chain(self.store, valid_name(memory_id, "memory id"))

    # -- versions -------------------------------------------------------------------------

    def history(self, memory_id: str) -> list[NoteVersion]:
        """The stored versions of a memory's note, oldest first: each with the state before
        and after the change, its kind (``evolve`` or ``revert``), the memory that caused it
        (``caused_by``) and whether a retraction has undone it (``undone``)."""
        self._require(memory_id)
        return evolution.history(self.store, memory_id)

    def revert(
        self, memory_id: str, version: int | str, *, reason: str = "", by: str | None = None
    ) -> Memory:
        """Put a memory's note back to what it was at ``version`` (a number or version id from
        ``history``). The revert is itself a new version, and audited; reverting to the note
        the memory already has changes nothing."""
        memory = self._require(memory_id)
        at = utcnow()
        actor = _actor(by)
        batch, record = evolution.plan_revert(
            memory, evolution.history(self.store, memory.id), version, at, reason
        )
        if record is None:
            return memory
        event = new_event(
            "revert",
            at,
            actor=actor,
            reason=reason or f"note back to version {version}",
            memory_ids=[memory.id],
            agent_ids=authors(self.store, [memory.id]),
        )
        batch.nodes.append(event_write(event))
        self.store.apply(batch)
        return self._require(memory.id)

    # -- shared helpers -------------------------------------------------------------------

    def _require(self, memory_id: str) -> Memory:
        found = self.store.get_memories([valid_name(memory_id, "memory id")], embeddings=False)
        if memory_id not in found:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return found[memory_id]
