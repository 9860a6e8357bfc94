"""Turn caller input into one WriteBatch: validation, notes, embedding, provenance nodes and
edges, and (with a ``NoteLayer``) links, evolution and duplicate merges.

Everything is checked before the store is touched (content, ids, referenced memories,
idempotency), so a bad item fails its whole batch and nothing is half-written.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import pydantic

from amem_graph.core.errors import (
    ConflictError,
    NotFoundError,
    ValidationError,
    format_pydantic_error,
)
from amem_graph.core.models import Memory, MemoryInput, content_hash, finite_vector
from amem_graph.core.schema import AGENT, EPISODE, SOURCE, TASK, source_id
from amem_graph.core.versions import NoteState
from amem_graph.embeddings import Embedder
from amem_graph.notes.enrich import Draft, note_text
from amem_graph.notes.episode_context import NO_CONTEXT, EpisodeContext, with_episode_context
from amem_graph.notes.pipeline import NoteLayer, Placement
from amem_graph.stores.base import EdgeWrite, GraphStore, MemoryUpdate, NodeWrite, WriteBatch


def parse_inputs(
    items: Sequence[Mapping[str, Any] | MemoryInput], max_length: int
) -> list[MemoryInput]:
    """Validate every item; the first bad one raises ValidationError naming its index."""
    out: list[MemoryInput] = []
    for i, item in enumerate(items):
        try:
            parsed = item if isinstance(item, MemoryInput) else MemoryInput.model_validate(item)
        except pydantic.ValidationError as exc:
            raise ValidationError(format_pydantic_error(exc, f"item {i}")) from None
        if len(parsed.content) > max_length:
            raise ValidationError(
                f"item {i}: content is {len(parsed.content)} characters, the limit is {max_length}",
                hint="split it or raise MemoryGraphConfig.max_content_length",
            )
        out.append(parsed)
    return out


def checked_vectors(
    embedder: Embedder, vectors: Sequence[Sequence[float]], n: int
) -> list[list[float]]:
    """Refuse embedder output that is the wrong count, dimension, or not finite."""
    if len(vectors) != n:
        raise ValidationError(
            f"embedder {embedder.name!r} returned {len(vectors)} vectors for {n} texts"
        )
    out = []
    for i, vector in enumerate(vectors):
        try:
            out.append(finite_vector(list(vector), embedder.dims))
        except ValueError as exc:
            raise ValidationError(f"item {i}: embedder {embedder.name!r}: {exc}") from None
    return out


def episode_nodes(
    episode: str, agent: str | None, task: str | None, scope: str, started_at: datetime
) -> tuple[list[NodeWrite], list[EdgeWrite]]:
    """Nodes and edges that make an episode and tie it to its agent and task."""
    first: dict[str, Any] = {"scope": scope, "started_at": started_at}
    nodes: list[NodeWrite] = []
    edges: list[EdgeWrite] = []
    if agent:
        first["agent"] = agent
        nodes.append(NodeWrite(AGENT, agent, on_create={"name": agent}))
        edges.append(EdgeWrite("PERFORMED_BY", episode, agent))
    if task:
        first["task"] = task
        nodes.append(NodeWrite(TASK, task, on_create={"scope": scope}))
        edges.append(EdgeWrite("PART_OF", episode, task))
    return [NodeWrite(EPISODE, episode, on_create=first), *nodes], edges


@dataclass
class PlannedWrite:
    """A remember batch and what it does: the memories in input order (a merged item as the
    memory it merged into), which input indexes merged, and the adjudicator's supersessions."""

    batch: WriteBatch
    memories: list[Memory]
    merged: dict[int, str] = field(default_factory=dict)
    superseded: list[tuple[Memory, str, str]] = field(default_factory=list)


def build_remember_batch(
    store: GraphStore,
    embedder: Embedder,
    inputs: Sequence[MemoryInput],
    now: datetime,
    notes: NoteLayer | None = None,
    *,
    exclude: frozenset[str] = frozenset(),
    link: bool = True,
    episode_context: EpisodeContext = NO_CONTEXT,
) -> PlannedWrite:
    """The batch that stores ``inputs`` and the memories it creates, in input order.

    An id that already exists with the same content is returned as stored and not written
    again (idempotent); with different content it is a ConflictError. With ``notes`` each new
    memory gets its note, links and evolution, and duplicates merge (``NoteLayer.place``);
    memories in ``exclude`` take no part in that. ``link=False`` (a bulk import) keeps the
    notes but places nothing: no links, evolution or merges. ``episode_context`` is what a new
    memory takes from its episode's previous one (``with_episode_context``).
    """
    ids = [item.id or uuid.uuid4().hex for item in inputs]
    seen: dict[str, int] = {}
    for i, mid in enumerate(ids):
        if mid in seen:
            raise ValidationError(f"item {i}: id {mid!r} repeats item {seen[mid]} in this batch")
        seen[mid] = i

    existing = store.get_memories(ids)
    for i, (mid, item) in enumerate(zip(ids, inputs, strict=True)):
        old = existing.get(mid)
        if old is not None and old.content_hash != content_hash(item.content):
            raise ConflictError(
                f"item {i}: memory {mid!r} already exists with different content",
                hint="use a new id, or update() the memory to supersede it",
            )

    wanted_parents = {p for item in inputs for p in item.derived_from} - set(ids)
    found_parents = store.get_memories(sorted(wanted_parents)) if wanted_parents else {}
    for i, item in enumerate(inputs):
        for parent in item.derived_from:
            if parent not in seen and parent not in found_parents:
                raise NotFoundError(f"item {i}: derived_from names unknown memory {parent!r}")
            if parent in seen and seen[parent] >= i:
                raise ValidationError(
                    f"item {i}: derived_from {parent!r} must come earlier in the batch"
                )

    fresh = [(mid, item) for mid, item in zip(ids, inputs, strict=True) if mid not in existing]
    created = _new_memories(store, embedder, fresh, now, notes, episode_context)
    batch = WriteBatch()
    placed = Placement()
    if notes is not None and link:
        fixed = frozenset(mid for mid, item in fresh if item.id is not None)
        placed = notes.place(list(created.values()), batch, now, fixed=fixed, exclude=exclude)
    support: dict[str, int] = {}
    for mid, item in fresh:
        memory = created[mid]
        target = placed.merged.get(mid)
        if target is None:
            batch.memories.append(memory)
            _provenance(batch, memory, item, memory.created_at)
            continue
        support[target.id] = support.get(target.id, 0) + 1
        batch.memory_updates.append(MemoryUpdate(target.id, increments={"support": 1}))
        _provenance(batch, target, item, item.timestamp or now)
    _dedupe_nodes(batch)
    out: list[Memory] = []
    for mid in ids:
        memory = existing.get(mid) or created[mid]
        memory = placed.merged.get(mid, memory)
        if memory.id in support:
            memory = memory.model_copy(update={"support": memory.support + support[memory.id]})
        out.append(memory)
    merged = {seen[mid]: target.id for mid, target in placed.merged.items()}
    return PlannedWrite(batch, out, merged, placed.superseded)


def _new_memories(
    store: GraphStore,
    embedder: Embedder,
    fresh: Sequence[tuple[str, MemoryInput]],
    now: datetime,
    notes: NoteLayer | None,
    episode_context: EpisodeContext,
) -> dict[str, Memory]:
    """The memories to create, with their notes and embeddings, by id in input order."""
    drafts = [
        Draft(item.content, item.scope, item.kind, item.agent, item.keywords, item.tags)
        for _, item in fresh
    ]
    states = notes.notes(drafts) if notes is not None else [NoteState()] * len(fresh)
    indexed = notes is not None and notes.config.index_notes
    texts = [
        note_text(
            item.content,
            [*item.keywords, *state.keywords],
            [*item.tags, *state.tags],
            " ".join(filter(None, [item.context, state.context])),
        )
        if indexed
        else item.content
        for (_, item), state in zip(fresh, states, strict=True)
    ]
    vectors = checked_vectors(embedder, embedder.embed_documents(texts), len(fresh))
    lead_ins = [""] * len(fresh)
    if any(item.episode for _, item in fresh):  # else nothing to blend: no copy of the batch
        blend = episode_context.weight > 0  # else only lead-ins: no copy of the vectors
        matrix, lead_ins = with_episode_context(
            store,
            np.asarray(vectors, dtype=np.float64) if blend else None,
            [item.content for _, item in fresh],
            [item.scope for _, item in fresh],
            [item.episode for _, item in fresh],
            [item.timestamp or now for _, item in fresh],
            episode_context.weight,
            episode_context.lead_words,
        )
        if matrix is not None:
            vectors = matrix.tolist()
    created: dict[str, Memory] = {}
    for (mid, item), vector, state, lead in zip(fresh, vectors, states, lead_ins, strict=True):
        at = item.timestamp or now
        created[mid] = Memory(
            id=mid,
            content=item.content,
            kind=item.kind,
            scope=item.scope,
            agent=item.agent,
            task=item.task,
            episode=item.episode,
            source=item.source,
            tags=item.tags,
            keywords=item.keywords,
            context=item.context,
            note_keywords=state.keywords,
            note_tags=state.tags,
            note_context=state.context,
            note_indexed=indexed,
            lead_in=lead,
            created_at=at,
            valid_from=at,
            valid_to=item.valid_to,
            importance=item.importance,
            content_hash=content_hash(item.content),
            embedding=vector,
        )
    return created


def _provenance(batch: WriteBatch, memory: Memory, item: MemoryInput, at: datetime) -> None:
    """Edges from ``memory`` to what ``item`` names (``at``: when the item was written)."""
    if item.agent:
        batch.nodes.append(NodeWrite(AGENT, item.agent, on_create={"name": item.agent}))
        batch.edges.append(EdgeWrite("ATTRIBUTED_TO", memory.id, item.agent))
    if item.task:
        batch.nodes.append(NodeWrite(TASK, item.task, on_create={"scope": item.scope}))
        batch.edges.append(EdgeWrite("FOR_TASK", memory.id, item.task))
    if item.episode:
        nodes, edges = episode_nodes(item.episode, item.agent, item.task, item.scope, at)
        batch.nodes.extend(nodes)
        batch.edges.extend(edges)
        batch.edges.append(EdgeWrite("GENERATED_IN", memory.id, item.episode))
    if item.source:
        sid = source_id(item.source)
        batch.nodes.append(NodeWrite(SOURCE, sid, on_create={"uri": item.source}))
        batch.edges.append(EdgeWrite("FROM_SOURCE", memory.id, sid))
    for parent in item.derived_from:
        if parent != memory.id:  # a merged duplicate of its own parent adds no loop
            batch.edges.append(EdgeWrite("DERIVED_FROM", memory.id, parent))


def _dedupe_nodes(batch: WriteBatch) -> None:
    """Keep the first write of each node so an episode keeps its earliest start time."""
    merged: dict[tuple[str, str], NodeWrite] = {}
    for node in batch.nodes:
        merged.setdefault((node.label, node.id), node)
    batch.nodes = list(merged.values())
