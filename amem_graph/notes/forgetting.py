"""Forgetting: cold memories are archived (kept, restorable, out of recall); erasure is final.

* **Decay.** A memory's importance halves every ``half_life_days`` it goes unread: counted from
  its last READ (an episode's recall), or from when it was written if it was never read.
  ``prune`` archives the active memories whose decayed importance falls below a threshold;
  ``unarchive`` brings them back.
* **Erasure.** ``plan_erasure`` deletes memories for good, and with them everything that still
  carries their words: the note changes they caused in other memories are undone and those
  versions blanked, the memories' own versions are blanked, and what they superseded comes
  back. The audit event keeps ids and content hashes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from amem_graph.core.models import Memory
from amem_graph.core.schema import MEMORY_VERSION
from amem_graph.core.versions import ERASED, NoteState, NoteVersion, undo_state
from amem_graph.provenance import undo
from amem_graph.provenance.retraction import active_holds
from amem_graph.stores.base import EdgeWrite, GraphStore, MemoryUpdate, NodeWrite, WriteBatch

_DAY = 86_400.0
#: the properties of a version that hold words; erasure sets them to null (removes them)
_WORDS = tuple(f"{p}_{f}" for p in ("before", "after") for f in ("keywords", "tags", "context"))
#: what a retraction's record of an undo keeps of the exact notes (``provenance.undo``)
_EXACT = ("exact", *(f"{p}_{f}" for p in ("held", "set") for f in ("keywords", "tags", "context")))


def decayed_importance(
    memory: Memory, last_read: datetime | None, now: datetime, half_life_days: float
) -> float:
    """Importance after decay since the memory was last read (or written)."""
    since = max(memory.created_at, last_read) if last_read else memory.created_at
    days = max(0.0, (now - since).total_seconds() / _DAY)
    return float(memory.importance * 0.5 ** (days / half_life_days))


def last_reads(store: GraphStore, ids: Sequence[str]) -> dict[str, datetime]:
    """Memory id -> time of its latest READ, for the memories ever read."""
    out: dict[str, datetime] = {}
    for e in store.edges(list(ids), ["READ"], "in"):
        at = e.props.get("at")
        if isinstance(at, datetime) and (e.dst not in out or at > out[e.dst]):
            out[e.dst] = at
    return out


@dataclass(frozen=True)
class Cold:
    """A memory prune would archive, and why."""

    id: str
    importance: float
    decayed: float


def cold_memories(
    store: GraphStore,
    memories: Sequence[Memory],
    now: datetime,
    *,
    threshold: float,
    half_life_days: float,
) -> list[Cold]:
    """The memories whose decayed importance is below ``threshold``, coldest first."""
    reads = last_reads(store, [m.id for m in memories])
    out = []
    for m in memories:
        value = decayed_importance(m, reads.get(m.id), now, half_life_days)
        if value < threshold:
            out.append(Cold(m.id, m.importance, value))
    return sorted(out, key=lambda c: (c.decayed, c.id))


def status_batch(ids: Sequence[str], status: str) -> WriteBatch:
    """Set every memory in ``ids`` to ``status``."""
    return WriteBatch(memory_updates=[MemoryUpdate(i, changes={"status": status}) for i in ids])


def plan_erasure(store: GraphStore, ids: Sequence[str]) -> WriteBatch:
    """The batch that erases ``ids`` and every trace of their words in other notes."""
    gone = set(ids)
    batch = WriteBatch(delete_memories=sorted(gone))
    own = [e.dst for e in store.edges(sorted(gone), ["HAS_VERSION"], "out")]
    caused = [e.src for e in store.edges(sorted(gone), ["CAUSED_BY"], "in")]
    nodes = store.get_nodes(MEMORY_VERSION, sorted({*own, *caused}))
    versions = [NoteVersion.from_node(n.id, n.props) for n in nodes.values()]
    changed = {v.memory for v in versions if v.caused_by in gone and v.memory not in gone}
    memories = store.get_memories(sorted(changed), embeddings=False)
    for mid, memory in sorted(memories.items()):
        state = NoteState.of(memory)
        mine = [v for v in versions if v.memory == mid and v.caused_by in gone and not v.undone]
        for v in sorted(mine, key=lambda v: v.version, reverse=True):
            state = undo_state(state, v)
        batch.memory_updates.append(MemoryUpdate(mid, changes=state.changes()))
    for v in versions:
        blank = dict.fromkeys(_WORDS)
        blank.update({"reason": ERASED, "caused_by": None if v.caused_by in gone else v.caused_by})
        batch.nodes.append(NodeWrite(MEMORY_VERSION, v.id, blank))
    erased = {v.id for v in versions}
    for e in store.edges(sorted(changed), ["RETRACTED"], "in"):
        if set(e.props.get("versions") or []) & erased:  # its exact note may hold the words
            batch.edges.append(EdgeWrite(e.type, e.src, e.dst, dict.fromkeys(_EXACT), e.key))
    # what they superseded comes back (``undo.put_back``)
    undo.put_back(store, gone, lambda olds: active_holds(store, olds), batch)
    return batch
