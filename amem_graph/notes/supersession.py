"""Supersession: a newer memory replaces an older one, which leaves active recall.

The older memory keeps its content and gets status ``superseded``; the edge
``(newer)-[:SUPERSEDES]->(older)`` records why, when, by whom and the status it replaced, so a
retraction of the newer memory can put the older one back (``provenance.undo``).
"""

from __future__ import annotations

from datetime import datetime

from amem_graph.core.errors import ConflictError, NotFoundError, ValidationError
from amem_graph.core.models import Memory
from amem_graph.stores.base import EdgeWrite, GraphStore, MemoryUpdate, WriteBatch

#: statuses a memory may be superseded from
SUPERSEDABLE = ("active", "archived")


def check_supersedable(store: GraphStore, old: Memory, scope: str) -> None:
    """Only a current memory can be replaced, and only inside its own scope."""
    if old.status == "superseded":
        head = current(store, old.id)
        raise ConflictError(
            f"memory {old.id!r} is already superseded",
            hint=f"supersede its current version {head.id!r} instead",
        )
    if old.status not in SUPERSEDABLE:
        raise ConflictError(
            f"memory {old.id!r} is {old.status}; only an active memory can be superseded",
            hint="restore it first, or remember the new content as a new memory",
        )
    if scope != old.scope:
        raise ValidationError(
            f"memory {old.id!r} is in scope {old.scope!r}; its replacement cannot be in {scope!r}"
        )


def supersede_into(
    batch: WriteBatch,
    old: Memory,
    new_id: str,
    *,
    reason: str,
    by: str | None,
    at: datetime,
) -> None:
    """Add to ``batch`` the SUPERSEDES edge and the older memory's status."""
    if new_id == old.id:
        raise ValidationError(f"memory {old.id!r} cannot supersede itself")
    props = {"reason": reason, "by": by, "at": at, "previous_status": old.status}
    batch.edges.append(EdgeWrite("SUPERSEDES", new_id, old.id, props))
    batch.memory_updates.append(MemoryUpdate(old.id, changes={"status": "superseded"}))


def current(store: GraphStore, memory_id: str) -> Memory:
    """The memory that replaces ``memory_id`` now: SUPERSEDES followed to the newest end.

    A memory superseded twice (two replacements) resolves to the newer replacement; a
    replacement that is retracted or quarantined does not count.
    """
    seen = {memory_id}
    at = memory_id
    while True:
        newer = [e.src for e in store.edges([at], ["SUPERSEDES"], "in") if e.src not in seen]
        found = store.get_memories(newer, embeddings=False)
        live = [m for m in found.values() if m.status not in ("retracted", "quarantined")]
        if not live:
            memory = store.get_memories([at], embeddings=False).get(at)
            if memory is None:
                raise NotFoundError(f"no memory with id {memory_id!r}")
            return memory
        at = max(live, key=lambda m: (m.created_at, m.id)).id
        seen.add(at)


def chain(store: GraphStore, memory_id: str) -> list[Memory]:
    """Every memory in ``memory_id``'s supersession line, oldest first."""
    found: dict[str, Memory] = {}
    frontier = [memory_id]
    while frontier:
        memories = store.get_memories([m for m in frontier if m not in found], embeddings=False)
        found.update(memories)
        edges = store.edges(list(memories), ["SUPERSEDES"], "both")
        frontier = sorted({x for e in edges for x in (e.src, e.dst)} - set(found))
    if memory_id not in found:
        raise NotFoundError(f"no memory with id {memory_id!r}")
    return sorted(found.values(), key=lambda m: (m.created_at, m.id))
