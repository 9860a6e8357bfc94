"""The note layer's public calls, mixed into ``MemoryGraph``: writing with notes, supersession,
versions, consolidation and forgetting.

Kept apart from ``graph.py`` so the facade stays small; each call validates, plans one
``WriteBatch`` with ``amem_graph.notes`` and applies it in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from amem_graph.core.errors import ConflictError, NotFoundError, ValidationError
from amem_graph.core.models import Memory, MemoryInput, utcnow, valid_name
from amem_graph.core.schema import LLM_USAGE
from amem_graph.core.versions import NoteVersion
from amem_graph.memory.writes import build_remember_batch, parse_inputs
from amem_graph.notes import consolidate, evolution, forgetting, supersession
from amem_graph.notes.episode_context import episode_settings
from amem_graph.notes.llm import Usage
from amem_graph.provenance import retraction
from amem_graph.provenance.audit import AuditEvent, AuditKind, authors, event_write, new_event
from amem_graph.stores.base import EdgeWrite, MemoryFilter, MemoryUpdate, WriteBatch

if TYPE_CHECKING:
    from amem_graph.core.config import MemoryGraphConfig
    from amem_graph.embeddings import Embedder
    from amem_graph.notes.pipeline import NoteLayer
    from amem_graph.stores.base import GraphStore

#: fields ``update`` carries over from the memory it replaces, unless given
INHERITED = ("scope", "kind", "task", "tags", "keywords", "context", "importance", "valid_to")


class ConsolidationReport(BaseModel):
    """What a consolidation wrote, from which sources, and what it replaced."""

    origin: str = Field(description='e.g. "consolidated from episode ep-7"')
    insights: list[Memory] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    written: list[str] = Field(default_factory=list, description="insight ids new this time")
    superseded: list[str] = Field(default_factory=list, description="earlier insights replaced")
    by: str = Field(default="offline", description='"llm" or "offline"')


class PruneReport(BaseModel):
    """The memories a prune archived (or, with ``dry_run``, would archive)."""

    archived: list[str] = Field(default_factory=list)
    decayed: dict[str, float] = Field(default_factory=dict, description="importance after decay")
    dry_run: bool = False


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

    def ingest(
        self, items: Sequence[Mapping[str, Any] | MemoryInput], *, bulk: bool = False
    ) -> IngestReport:
        """``remember_many`` with its report: which memories were written, which were
        already present (same id and content) and which merged into an existing memory.

        ``bulk=True`` is the import route for large loads: each memory still gets its note
        (keywords, tags, context), provenance and idempotency check, all-or-nothing, but no
        note links, no duplicate merge, no evolution and no adjudication, which each search
        the store per memory. Supersession (``supersedes``) is refused in bulk.
        """
        if not isinstance(bulk, bool):
            raise ValidationError(f"bulk must be True or False, got {bulk!r}")
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise ValidationError("remember_many takes a list of items")
        prepared: list[Mapping[str, Any] | MemoryInput] = []
        replaced: list[str | None] = []  # what each item supersedes (the LangGraph store's puts)
        for item in items:
            if isinstance(item, Mapping):
                scope = item.get("scope")
                item = {**item, "scope": self.config.default_scope if scope is None else scope}
                replaced.append(item.pop("supersedes", None))
            else:
                replaced.append(None)
            prepared.append(item)
        inputs = parse_inputs(prepared, self.config.max_content_length)
        if not inputs:
            return IngestReport(memories=[])
        if bulk and any(replaced):
            raise ValidationError("ingest(bulk=True) cannot supersede; ingest those items alone")
        batch, report = self._plan_write(inputs, link=not bulk)
        if any(replaced):
            self._supersede(batch, report.memories, replaced, utcnow())
        self.store.apply(batch)
        return report

    def _supersede(
        self, batch: WriteBatch, new: list[Memory], old_ids: list[str | None], now: datetime
    ) -> None:
        """Add to ``batch`` what makes each new memory supersede its old one (checked first)."""
        wanted = [valid_name(i, "supersedes") for i in old_ids if i is not None]
        if len(set(wanted)) != len(wanted):
            raise ValidationError("a batch supersedes the same memory twice")
        old = self.store.get_memories(wanted, embeddings=False)
        written = {m.id for m in batch.memories}
        concerned: list[str] = []
        authors: set[str] = set()
        for i, (memory, old_id) in enumerate(zip(new, old_ids, strict=True)):
            prev = None if old_id is None else old.get(old_id)
            if old_id is None or memory.id not in written:
                continue  # nothing to replace, or an idempotent repeat already written
            if prev is None:
                raise NotFoundError(f"item {i}: supersedes unknown memory {old_id!r}")
            if prev.scope != memory.scope:
                raise ValidationError(f"item {i}: {old_id!r} is in another scope ({prev.scope})")
            if prev.status != "active":
                raise ConflictError(
                    f"item {i}: memory {old_id!r} is {prev.status}, not active",
                    hint="supersede the memory's current version",
                )
            batch.memory_updates.append(MemoryUpdate(old_id, {"status": "superseded"}))
            batch.edges.append(EdgeWrite("SUPERSEDES", memory.id, old_id))
            concerned += [old_id, memory.id]
            authors |= {a for a in (prev.agent, memory.agent) if a}
        if concerned:
            event = new_event(
                "supersede", now, actor=None, reason="", memory_ids=concerned,
                agent_ids=sorted(authors),
            )  # fmt: skip
            batch.nodes.append(event_write(event))

    def _plan_write(
        self, inputs: Sequence[MemoryInput], *, exclude: Sequence[str] = (), link: bool = True
    ) -> tuple[WriteBatch, IngestReport]:
        now = utcnow()
        layer = self.note_layer if self.config.notes.enabled else None
        planned = build_remember_batch(
            self.store, self.embedder, inputs, now, layer, exclude=frozenset(exclude),
            link=link, episode_context=episode_settings(self.config),
        )  # fmt: skip
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
            written=[
                m.id for i, m in enumerate(memories) if m.id in fresh and i not in planned.merged
            ],
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

    # -- consolidation and forgetting ------------------------------------------------------

    def consolidate(
        self, *, episode: str | None = None, task: str | None = None
    ) -> ConsolidationReport:
        """Distil the active memories of an ``episode`` or a ``task`` into ``insight``
        memories DERIVED_FROM them (the model's insights, or offline an extractive summary).
        Consolidating the same sources again returns the insight already written; a model's
        new wording supersedes the earlier insight."""
        episode = None if episode is None else valid_name(episode, "episode")
        task = None if task is None else valid_name(task, "task")
        sources = consolidate.sources_of(self.store, episode, task)
        origin = f"consolidated from {'episode ' + episode if episode else 'task ' + str(task)}"
        if not sources:
            return ConsolidationReport(origin=origin)
        layer = self.note_layer
        insights = None if layer.llm is None else consolidate.model_insights(sources, layer.llm)
        by = "llm" if insights is not None else "offline"
        if insights is None:
            insights = [consolidate.offline_insight(sources)]
        items = [
            {
                "content": i.content,
                "id": consolidate.fresh_id(self.store, i),
                "kind": "insight",
                "scope": sources[0].scope,
                "task": task,
                "context": origin,
                "derived_from": list(i.sources),
            }
            for i in insights
        ]
        inputs = parse_inputs(items, self.config.max_content_length)
        batch, report = self._plan_write(inputs)
        new_ids = set(report.written)
        at = utcnow()
        earlier = consolidate.previous_insights(self.store, [m.id for m in sources], origin)
        replaced = [m for m in earlier if m.id not in {x.id for x in report.memories}]
        if new_ids:
            for old in replaced:
                supersession.supersede_into(
                    batch, old, report.written[0], reason="consolidated again", by=None, at=at
                )
        self.store.apply(batch)
        return ConsolidationReport(
            origin=origin,
            insights=report.memories,
            sources=[m.id for m in sources],
            written=report.written,
            superseded=[m.id for m in replaced] if new_ids else [],
            by=by,
        )

    def prune(
        self,
        scope: str | None = None,
        *,
        threshold: float = 0.05,
        half_life_days: float | None = None,
        dry_run: bool = False,
        by: str | None = None,
        reason: str = "",
    ) -> PruneReport:
        """Archive the cold memories of ``scope``: active ones whose importance, halving every
        ``half_life_days`` (default ``NotesConfig.decay_half_life_days``) since they were last
        read (or written), is below ``threshold``. Archived memories are kept and leave recall;
        ``unarchive`` brings them back. Audited."""
        if not 0.0 <= threshold <= 1.0:
            raise ValidationError(f"threshold must be in [0, 1], got {threshold}")
        half_life = half_life_days or self.config.notes.decay_half_life_days
        if half_life <= 0:
            raise ValidationError(f"half_life_days must be positive, got {half_life}")
        name = valid_name(scope or self.config.default_scope, "scope")
        at = utcnow()
        active = self.store.find_memories(MemoryFilter(scopes=(name,)))
        cold = forgetting.cold_memories(
            self.store, active, at, threshold=threshold, half_life_days=half_life
        )
        ids = [c.id for c in cold]
        report = PruneReport(archived=ids, decayed={c.id: c.decayed for c in cold}, dry_run=dry_run)
        if dry_run or not ids:
            return report
        reason = reason or f"importance below {threshold} after decay (half-life {half_life} d)"
        self._set_status(ids, "archived", "archive", at, by, reason)
        return report

    def unarchive(
        self, memory_ids: str | Sequence[str], *, by: str | None = None, reason: str = ""
    ) -> list[str]:
        """Bring archived memories back to active (the others are left alone); the ids
        changed. Audited."""
        wanted = [memory_ids] if isinstance(memory_ids, str) else list(memory_ids)
        ids = [valid_name(i, "memory id") for i in wanted]
        statuses = self.store.statuses(ids)
        for mid in ids:
            if mid not in statuses:
                raise NotFoundError(f"no memory with id {mid!r}")
        back = sorted({m for m in ids if statuses[m] == "archived"})
        if back:
            self._set_status(back, "active", "unarchive", utcnow(), by, reason)
        return back

    def _set_status(
        self,
        ids: list[str],
        status: str,
        kind: AuditKind,
        at: datetime,
        by: str | None,
        reason: str,
    ) -> None:
        """Set ``status`` on ``ids`` with its audit event ``kind``, in one batch."""
        batch = forgetting.status_batch(ids, status)
        event = new_event(
            kind,
            at,
            actor=_actor(by),
            reason=reason,
            memory_ids=ids,
            agent_ids=authors(self.store, ids),
        )
        batch.nodes.append(event_write(event))
        self.store.apply(batch)

    def forget(
        self,
        memory_id: str | None = None,
        *,
        scope: str | None = None,
        agent: str | None = None,
        source: str | None = None,
        episode: str | None = None,
        reason: str = "",
        by: str | None = None,
    ) -> AuditEvent:
        """Erase memories for good (an erasure request), unlike ``retract``: one memory, or
        every memory of a ``scope``, written by an ``agent``, taken from a ``source`` or
        written in an ``episode``. The note changes they caused in other memories are undone
        and every stored version of their words blanked. One audit event keeps the ids and
        content hashes, never the content."""
        chosen = [
            n
            for n, v in (
                ("id", memory_id),
                ("scope", scope),
                ("agent", agent),
                ("source", source),
                ("episode", episode),
            )
            if v is not None
        ]
        if len(chosen) != 1:
            raise ValidationError(
                f"forget needs exactly one of id, scope, agent, source or episode; got "
                f"{chosen or 'none'}"
            )
        if not isinstance(reason, str):
            raise ValidationError("reason must be text")
        if scope is not None:
            name = valid_name(scope, "scope")
            found = self.store.find_memories(MemoryFilter(scopes=(name,), statuses=None))
            ids = [m.id for m in found]
        else:
            selector = retraction.make_selector(
                [] if memory_id is None else [valid_name(memory_id, "memory id")],
                None if agent is None else valid_name(agent, "agent"),
                None,
                source,
                None if episode is None else valid_name(episode, "episode"),
            )
            ids = retraction.resolve_targets(self.store, selector)
        memories = self.store.get_memories(ids, embeddings=False)
        event = new_event(
            "forget",
            utcnow(),
            actor=_actor(by),
            reason=reason,
            memory_ids=sorted(memories),
            agent_ids={m.agent for m in memories.values() if m.agent} | authors(self.store, ids),
            content_hashes=[memories[i].content_hash for i in sorted(memories)],
            scopes={i: m.scope for i, m in memories.items()},  # the store forgets them
        )
        batch = forgetting.plan_erasure(self.store, sorted(memories))
        batch.nodes.append(event_write(event))
        self.store.apply(batch)
        return event

    # -- usage ----------------------------------------------------------------------------

    def llm_usage(self) -> dict[str, dict[str, int]]:
        """Chat-model counters per note operation: what every graph stored in this store,
        plus what this graph did since its last write."""
        mine = self.note_layer.usage_id
        stored = (n.props for n in self.store.find_nodes(LLM_USAGE) if n.id != mine)
        return Usage.from_props(iter([*stored, self.note_layer.usage.props()]))

    # -- shared helpers -------------------------------------------------------------------

    def _require(self, memory_id: str) -> Memory:
        found = self.store.get_memories([valid_name(memory_id, "memory id")], embeddings=False)
        if memory_id not in found:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return found[memory_id]
