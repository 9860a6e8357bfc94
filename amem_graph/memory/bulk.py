"""``import_memories``: load many new memories at once, as columns (issue 19's ingest goals).

``remember_many`` / ``ingest`` build one pydantic model per item, search the store per memory
for links, merges and evolution, and write provenance edge by edge: right for an agent's
writes, too slow for moving a million memories in. An import takes columns (contents, and
optionally precomputed vectors, ids, and a scope, agent, task, episode and time per row or
one for all), checks every value first, gives each memory its note (``notes=True``) but no
links, merges or evolution, and hands the store one ``ImportBatch`` that it writes in one
transaction: all of it, or nothing when any value is bad or any id already exists.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import (
    Memory,
    MemoryKind,
    check_name,
    content_hash,
    ensure_aware,
    utcnow,
)
from amem_graph.core.schema import MEMORY_KINDS
from amem_graph.core.versions import NoteState
from amem_graph.notes.enrich import Draft, note_text
from amem_graph.notes.episode_context import with_episode_context
from amem_graph.stores.bulk import ImportBatch, provenance_columns

if TYPE_CHECKING:
    from amem_graph.core.config import MemoryGraphConfig
    from amem_graph.embeddings import Embedder
    from amem_graph.notes.pipeline import NoteLayer
    from amem_graph.stores.base import GraphStore

T = TypeVar("T")


def column(value: T | Sequence[T] | None, n: int, what: str, scalar: type) -> list[T | None]:
    """One value for every row, or a sequence of exactly ``n`` values."""
    if value is None or isinstance(value, scalar):
        return [value] * n  # type: ignore[list-item]
    if not isinstance(value, Sequence):
        raise ValidationError(f"{what} must be one {scalar.__name__} or a list of {n}")
    if len(value) != n:
        raise ValidationError(f"{what} has {len(value)} values for {n} contents")
    return list(value)


def checked_names(values: list[Any], what: str, required: bool = False) -> list[Any]:
    """Each distinct value checked once (a column repeats a few names many times)."""
    for name in set(values):
        if name is None:
            if required:
                raise ValidationError(f"{what}: a value is missing")
            continue
        try:
            check_name(name)
        except ValueError as exc:
            i = values.index(name)
            raise ValidationError(f"{what} {i}: {exc}") from None
    return values


def checked_contents(contents: Sequence[str], max_length: int) -> list[str]:
    """Non-blank, valid Unicode, within the length limit; the first bad one names its row."""
    if isinstance(contents, str | bytes) or not isinstance(contents, Sequence):
        raise ValidationError("import_memories takes a list of contents")
    out = list(contents)
    for i, text in enumerate(out):
        if not isinstance(text, str) or not text.strip():
            raise ValidationError(f"content {i}: empty, only whitespace, or not a string")
        if len(text) > max_length:
            raise ValidationError(
                f"content {i}: {len(text)} characters, the limit is {max_length}",
                hint="split it or raise MemoryGraphConfig.max_content_length",
            )
    try:
        "\n".join(out).encode("utf-8")
    except UnicodeEncodeError:
        for i, text in enumerate(out):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValidationError(
                    f"content {i}: not valid Unicode (a lone surrogate at {exc.start})"
                ) from None
    return out


def checked_matrix(vectors: Any, n: int, dims: int) -> np.ndarray:
    """Precomputed vectors as float32 ``(n, dims)`` unit rows; refuse non-finite or zero rows."""
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"vectors are not a matrix of numbers: {exc}") from None
    if matrix.shape != (n, dims):
        raise ValidationError(
            f"vectors have shape {matrix.shape}; {n} contents need ({n}, {dims})",
            hint="the vectors must come from the store's embedder",
        )
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise ValidationError(f"vector {int(np.argmax(bad))} has a non-finite value")
    norms = np.linalg.norm(matrix, axis=1)
    if (norms == 0).any():
        raise ValidationError(f"vector {int(np.argmax(norms == 0))} is all zeros")
    return np.ascontiguousarray(matrix / norms[:, None], dtype=np.float32)


def checked_times(value: datetime | Sequence[datetime] | None, n: int) -> list[datetime]:
    now = utcnow()
    times = column(value, n, "timestamps", datetime)
    out: list[datetime] = []
    for i, at in enumerate(times):
        if at is None:
            out.append(now)
            continue
        if not isinstance(at, datetime):
            raise ValidationError(f"timestamps {i}: {at!r} is not a datetime")
        try:
            out.append(ensure_aware(at))
        except ValueError as exc:
            raise ValidationError(f"timestamps {i}: {exc}") from None
    return out


def plan_import(
    embedder: Embedder,
    config: MemoryGraphConfig,
    layer: NoteLayer | None,
    contents: Sequence[str],
    *,
    vectors: Any = None,
    ids: Sequence[str] | None = None,
    scope: str | Sequence[str] | None = None,
    agent: str | Sequence[str | None] | None = None,
    task: str | Sequence[str | None] | None = None,
    episode: str | Sequence[str | None] | None = None,
    timestamps: datetime | Sequence[datetime] | None = None,
    kind: MemoryKind = "semantic",
    store: GraphStore | None = None,
) -> ImportBatch:
    """Every value checked, notes built, vectors embedded or checked: the batch to write.
    Memories in an episode take their lead-in from the one before them, and vectors
    embedded here a share of its vector (``with_episode_context``, read from ``store``);
    given vectors are the caller's, kept as they are."""
    texts = checked_contents(contents, config.max_content_length)
    n = len(texts)
    if kind not in MEMORY_KINDS:
        raise ValidationError(f"kind must be one of {list(MEMORY_KINDS)}, got {kind!r}")
    row_ids = checked_names(
        [uuid.uuid4().hex for _ in range(n)] if ids is None else column(ids, n, "ids", str),
        "ids",
        required=True,
    )
    if len(set(row_ids)) != n:
        seen: set[str] = set()
        dup = next(i for i in row_ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise ValidationError(f"ids: {dup!r} appears twice")
    scopes = checked_names(
        column(config.default_scope if scope is None else scope, n, "scope", str),
        "scope",
        required=True,
    )
    agents = checked_names(column(agent, n, "agent", str), "agent")
    tasks = checked_names(column(task, n, "task", str), "task")
    episodes = checked_names(column(episode, n, "episode", str), "episode")
    times = checked_times(timestamps, n)

    given = vectors is not None
    if layer is not None:
        drafts = [
            Draft(t, s, kind, a, [], []) for t, s, a in zip(texts, scopes, agents, strict=True)
        ]
        states = layer.notes(drafts)
    else:
        states = [NoteState()] * n
    # the note feeds BM25 and the embedding only when the store embeds it here
    indexed = layer is not None and layer.config.index_notes and not given
    if given:
        matrix = checked_matrix(vectors, n, embedder.dims)
    else:
        docs = [
            note_text(t, s.keywords, s.tags, s.context) if indexed else t
            for t, s in zip(texts, states, strict=True)
        ]
        matrix = checked_matrix(embedder.embed_documents(docs), n, embedder.dims)
    lead_ins = [""] * n
    if store is not None and any(episodes):
        blended, lead_ins = with_episode_context(
            store, None if given or config.episode_context <= 0 else matrix, texts, scopes,
            episodes, times or [utcnow()] * n, config.episode_context, config.episode_lead_in,
        )  # fmt: skip
        if blended is not None:
            matrix = checked_matrix(blended, n, embedder.dims)  # float32 unit rows, as given
    first = times[0] if times else utcnow()
    template = Memory(
        id="template", content="template", kind=kind, created_at=first, valid_from=first,
        content_hash="", note_indexed=indexed,
    )  # fmt: skip
    nodes, edges = provenance_columns(row_ids, scopes, agents, tasks, episodes, times)
    return ImportBatch(
        template=template,
        ids=row_ids,
        contents=texts,
        content_hashes=[content_hash(t) for t in texts],
        scopes=scopes,
        agents=agents,
        tasks=tasks,
        episodes=episodes,
        created_at=times,
        note_keywords=[s.keywords for s in states],
        note_tags=[s.tags for s in states],
        note_contexts=[s.context for s in states],
        lead_ins=lead_ins,
        vectors=matrix,
        nodes=nodes,
        edges=edges,
    )


class ImportMethods:
    """``MemoryGraph.import_memories`` (see the module docstring)."""

    store: GraphStore
    embedder: Embedder
    config: MemoryGraphConfig
    note_layer: NoteLayer

    def import_memories(
        self,
        contents: Sequence[str],
        *,
        vectors: Any = None,
        ids: Sequence[str] | None = None,
        scope: str | Sequence[str] | None = None,
        agent: str | Sequence[str | None] | None = None,
        task: str | Sequence[str | None] | None = None,
        episode: str | Sequence[str | None] | None = None,
        timestamps: datetime | Sequence[datetime] | None = None,
        kind: MemoryKind = "semantic",
        notes: bool = True,
    ) -> list[str]:
        """Write new memories in one transaction and return their ids, in order.

        ``vectors``: precomputed embeddings from the store's embedder, ``(n, dims)`` (else
        the contents are embedded here). ``ids``, ``scope``, ``agent``, ``task``,
        ``episode`` and ``timestamps`` take one value for every row or a list of one per
        row. Each memory gets its provenance and, with ``notes=True`` and the note layer
        enabled, its note (keywords, tags, context); with precomputed vectors the note is
        kept but not indexed, since it did not feed those vectors. No links, duplicate
        merges or evolution: use ``ingest`` for that. An id that already exists fails the
        whole import with ConflictError (an import writes new memories only).
        """
        if not isinstance(notes, bool):
            raise ValidationError(f"notes must be True or False, got {notes!r}")
        if not checked_contents(contents, self.config.max_content_length):
            return []
        layer = self.note_layer if notes and self.config.notes.enabled else None
        batch = plan_import(
            self.embedder, self.config, layer, contents, vectors=vectors, ids=ids,
            scope=scope, agent=agent, task=task, episode=episode, timestamps=timestamps,
            kind=kind, store=self.store,
        )  # fmt: skip
        self.store.import_memories(batch)
        return list(batch.ids)
