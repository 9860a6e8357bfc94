"""``ImportBatch``: new memories as columns, for bulk imports that must not pay per-memory
objects (``MemoryGraph.import_memories``).

A million memories through ``WriteBatch`` build a million pydantic models and several million
edge objects before the store sees one; here every field is a column and the provenance is a
few lists, so a store can write them with ``executemany`` or ``UNWIND``. Everything in a batch
is checked before a store gets it (ids, names, vectors unit length and finite); the store
refuses the whole batch if any id already exists, and writes it in one transaction.

``apply_as_batch`` is the reference: the same rows through ``WriteBatch``. A store with no
faster route uses it, and the contract tests hold each fast route to the state it leaves.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from amem_graph.core.errors import ConflictError
from amem_graph.core.models import Memory
from amem_graph.core.schema import AGENT, EPISODE, TASK
from amem_graph.stores.base import EdgeWrite, NodeWrite, WriteBatch

if TYPE_CHECKING:
    from amem_graph.stores.base import GraphStore

#: provenance edge types an import writes, from a memory (the others are episode -> x)
IMPORT_EDGE_TYPES = ("ATTRIBUTED_TO", "FOR_TASK", "GENERATED_IN", "PERFORMED_BY", "PART_OF")


@dataclass
class ImportBatch:
    """Rows ``0..n-1`` of new memories; ``template`` holds every field they share.

    ``template`` is a Memory whose per-row fields (id, content, content_hash, scope, agent,
    task, episode, created_at = valid_from, note_keywords, note_tags, note_context, lead_in) are
    placeholders; ``memory(i)`` is row ``i`` as the Memory it stores. ``vectors`` is float32
    ``(n, dims)``, unit rows. ``nodes`` are the agents, tasks and episodes the rows name, once
    each, with the props a first write gives them; ``edges`` maps an edge type of
    ``IMPORT_EDGE_TYPES`` to its (sources, targets) columns.
    """

    template: Memory
    ids: list[str]
    contents: list[str]
    content_hashes: list[str]
    scopes: list[str]
    agents: list[str | None]
    tasks: list[str | None]
    episodes: list[str | None]
    created_at: list[datetime]
    note_keywords: list[list[str]]
    note_tags: list[list[str]]
    note_contexts: list[str]
    #: each row's ``lead_in`` (``Memory.lead_in``)
    lead_ins: list[str]
    vectors: np.ndarray
    nodes: list[NodeWrite] = field(default_factory=list)
    edges: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def memory(self, i: int) -> Memory:
        """Row ``i`` as a Memory (with its embedding)."""
        return self.template.model_copy(
            update={**self.row(i), "embedding": self.vectors[i].tolist()}
        )

    def row(self, i: int) -> dict[str, Any]:
        """The fields of row ``i`` that differ from the template (no embedding)."""
        at = self.created_at[i]
        return {
            "id": self.ids[i],
            "content": self.contents[i],
            "content_hash": self.content_hashes[i],
            "scope": self.scopes[i],
            "agent": self.agents[i],
            "task": self.tasks[i],
            "episode": self.episodes[i],
            "created_at": at,
            "valid_from": at,
            "note_keywords": self.note_keywords[i],
            "note_tags": self.note_tags[i],
            "note_context": self.note_contexts[i],
            "lead_in": self.lead_ins[i],
        }

    def memories(self) -> Iterator[Memory]:
        """Every row as a Memory, in order (the slow route: one model each)."""
        return (self.memory(i) for i in range(len(self)))

    def edge_writes(self) -> Iterator[EdgeWrite]:
        """The edges as ``EdgeWrite`` objects, type by type."""
        for etype, (sources, targets) in self.edges.items():
            for src, dst in zip(sources, targets, strict=True):
                yield EdgeWrite(etype, src, dst)


def provenance_columns(
    ids: list[str],
    scopes: list[str],
    agents: list[str | None],
    tasks: list[str | None],
    episodes: list[str | None],
    created_at: list[datetime],
) -> tuple[list[NodeWrite], dict[str, tuple[list[str], list[str]]]]:
    """The nodes and edge columns ``remember`` would write for these rows, each node once
    (an episode's first row gives its scope, agent, task and start time)."""
    nodes: dict[tuple[str, str], NodeWrite] = {}
    edges: dict[str, tuple[list[str], list[str]]] = {t: ([], []) for t in IMPORT_EDGE_TYPES}

    def add(etype: str, src: str, dst: str) -> None:
        edges[etype][0].append(src)
        edges[etype][1].append(dst)

    for mid, scope, agent, task, episode, at in zip(
        ids, scopes, agents, tasks, episodes, created_at, strict=True
    ):
        if agent:
            if (AGENT, agent) not in nodes:
                nodes[(AGENT, agent)] = NodeWrite(AGENT, agent, on_create={"name": agent})
            add("ATTRIBUTED_TO", mid, agent)
        if task:
            if (TASK, task) not in nodes:
                nodes[(TASK, task)] = NodeWrite(TASK, task, on_create={"scope": scope})
            add("FOR_TASK", mid, task)
        if episode:
            if (EPISODE, episode) not in nodes:
                first: dict[str, Any] = {"scope": scope, "started_at": at}
                if agent:
                    first["agent"] = agent
                    add("PERFORMED_BY", episode, agent)
                if task:
                    first["task"] = task
                    add("PART_OF", episode, task)
                nodes[(EPISODE, episode)] = NodeWrite(EPISODE, episode, on_create=first)
            add("GENERATED_IN", mid, episode)
    # an episode's edges to its agent and task are written once, by its first row; the
    # edge keys make a later repeat a no-op on both stores anyway
    return list(nodes.values()), {t: cols for t, cols in edges.items() if cols[0]}


def refuse_taken(ids: list[str], taken: Collection[str]) -> None:
    """ConflictError naming the first of ``ids`` already stored, if any (every route says the
    same)."""
    if not taken:
        return
    first = next(mid for mid in ids if mid in taken)
    raise ConflictError(
        f"memory {first!r} already exists; an import writes new memories only",
        hint="leave it out of the import, or use remember_many for idempotent writes",
    )


def apply_as_batch(store: GraphStore, batch: ImportBatch) -> None:
    """The reference route: refuse existing ids, then one ``WriteBatch`` of the same rows."""
    refuse_taken(batch.ids, store.get_memories(batch.ids, embeddings=False))
    store.apply(
        WriteBatch(
            memories=list(batch.memories()),
            nodes=list(batch.nodes),
            edges=list(batch.edge_writes()),
        )
    )
