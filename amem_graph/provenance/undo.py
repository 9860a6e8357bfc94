"""What a retraction undoes besides statuses, and what its restore re-applies.

* **Evolution.** Every note change another memory caused is a ``MemoryVersion`` with the states
  before and after it (``core.versions``). When the causing memory goes down, the change is
  undone as a delta on the evolved memory's current note, the version is marked ``undone``, and
  a ``RETRACTED`` edge with effect ``reverted`` lists the versions and the exact note before and
  after the undo. Like a status hold, this is no new version: restoring puts the memory back
  exactly as it was, version number included.
* **Supersession.** A memory the target superseded goes back to the status it had, unless
  another live memory still supersedes it; a ``RETRACTED`` edge with effect ``unsuperseded``
  records it.

``restore`` re-applies both: exactly (the recorded note) when nothing changed the memory since,
else by rebuilding the note from its versions, those in force replayed in version order, so
restores in any order give one note (as deltas on the current note when an erasure blanked a
version's words). If the causing memory is still held down by another active retraction, the
record moves to that retraction instead (with the exact notes, when it moves whole), so
restoring that one re-applies it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from amem_graph.core.schema import MEMORY_VERSION
from amem_graph.core.versions import (
    NoteState,
    NoteVersion,
    redo_state,
    replayed,
    undo_state,
)
from amem_graph.notes.evolution import history
from amem_graph.stores.base import Edge, EdgeWrite, GraphStore, MemoryUpdate, NodeWrite, WriteBatch

#: statuses that mean "not live" for a superseding memory
_DOWN = ("retracted", "quarantined")


def _key(effect: str, origin: str | None) -> str:
    return effect if origin is None else f"{effect}:{origin}"


def undo_evolution(store: GraphStore, rid: str, down: set[str], batch: WriteBatch) -> list[str]:
    """Undo the note changes caused by ``down``; the ids of the versions undone."""
    vids = sorted({e.src for e in store.edges(sorted(down), ["CAUSED_BY"], "in")})
    nodes = store.get_nodes(MEMORY_VERSION, vids)
    versions = [NoteVersion.from_node(n.id, n.props) for n in nodes.values()]
    pending = [v for v in versions if v.kind == "evolve" and not v.undone]
    by_memory: dict[str, list[NoteVersion]] = defaultdict(list)
    for v in pending:
        by_memory[v.memory].append(v)
    memories = store.get_memories(sorted(by_memory), embeddings=False)
    undone: list[str] = []
    for mid, changes in sorted(by_memory.items()):
        memory = memories.get(mid)
        if memory is None:
            continue
        changes.sort(key=lambda v: v.version, reverse=True)
        before = NoteState.of(memory)
        state = before
        for change in changes:
            state = undo_state(state, change)
        ids = [v.id for v in changes]
        batch.memory_updates.append(MemoryUpdate(mid, changes=state.changes()))
        for v in changes:
            batch.nodes.append(NodeWrite(MEMORY_VERSION, v.id, {"undone": True}))
        props = {
            "effect": "reverted",
            "versions": ids,
            "exact": True,
            **before.props("held"),
            **state.props("set"),
        }
        batch.edges.append(EdgeWrite("RETRACTED", rid, mid, props, key="reverted"))
        undone.extend(ids)
    return sorted(undone)


def unsupersede(
    store: GraphStore,
    rid: str,
    down: set[str],
    holds_of: Callable[[list[str]], Mapping[str, Sequence[Edge]]],
    batch: WriteBatch,
) -> list[str]:
    """Put back what ``down`` superseded (``put_back``), recording each with an
    ``unsuperseded`` edge from retraction ``rid``; the ids un-superseded."""
    out = put_back(store, down, holds_of, batch)
    for old, (back, by) in out.items():
        props = {"effect": "unsuperseded", "superseded_by": by, "status": back}
        batch.edges.append(EdgeWrite("RETRACTED", rid, old, props, key="unsuperseded"))
    return sorted(out)


def put_back(
    store: GraphStore,
    down: set[str],
    holds_of: Callable[[list[str]], Mapping[str, Sequence[Edge]]],
    batch: WriteBatch,
) -> dict[str, tuple[str, list[str]]]:
    """Put back what ``down`` (retracted or erased) superseded, unless a live memory outside
    it supersedes it too: memory -> (the status it gets back, those of ``down`` that
    superseded it). ``holds_of`` reads the active status holds on memories: a held memory keeps
    its status and its holds' base status is rewritten instead, so a restore brings it back
    current (not superseded by a memory that is gone)."""
    edges = [e for e in store.edges(sorted(down), ["SUPERSEDES"], "out") if e.dst not in down]
    olds = sorted({e.dst for e in edges})
    if not olds:
        return {}
    holds = holds_of(olds)
    rivals = store.edges(olds, ["SUPERSEDES"], "in")
    rival_status = store.statuses(sorted({e.src for e in rivals}))
    status = store.statuses(olds)
    out: dict[str, tuple[str, list[str]]] = {}
    for old in olds:
        live = [
            e.src
            for e in rivals
            if e.dst == old and e.src not in down and rival_status.get(e.src) not in _DOWN
        ]
        if live or old not in status:
            continue
        mine = [e for e in edges if e.dst == old]
        back = str(mine[0].props.get("previous_status") or "active")
        if status[old] == "superseded":
            batch.memory_updates.append(MemoryUpdate(old, changes={"status": back}))
        elif any(h.props.get("base_status") == "superseded" for h in holds.get(old, [])):
            rebase(batch, holds[old], back)
        else:
            continue
        out[old] = (back, sorted(e.src for e in mine))
    return out


def rebase(batch: WriteBatch, holds: Sequence[Edge], base: str) -> None:
    """Rewrite the base status the retractions holding a memory will restore it to."""
    for h in holds:
        batch.edges.append(EdgeWrite("RETRACTED", h.src, h.dst, {"base_status": base}, key=h.key))


def redo(
    store: GraphStore,
    rid: str,
    own: Sequence[Edge],
    still_held: Mapping[str, str],
    holds: Mapping[str, Sequence[Edge]],
    batch: WriteBatch,
    lifted: dict[str, str],
) -> None:
    """Re-apply the ``reverted`` and ``unsuperseded`` records of retraction ``rid``.

    ``still_held`` maps memories that stay down after this restore to the retraction holding
    them; ``holds`` are the active holds on the memories concerned, without ``rid``'s own.
    ``lifted`` maps the memories ``rid`` itself holds to the status the restore gives them
    back; a memory it re-supersedes among them gets "superseded" there instead.
    """
    for e in own:
        if e.props.get("effect") == "unsuperseded":
            _resupersede(store, rid, e, still_held, holds, batch, lifted)
        elif e.props.get("effect") == "reverted":
            _reapply(store, rid, e, still_held, batch)


def _resupersede(
    store: GraphStore,
    rid: str,
    e: Edge,
    still_held: Mapping[str, str],
    holds: Mapping[str, Sequence[Edge]],
    batch: WriteBatch,
    lifted: dict[str, str],
) -> None:
    # a superseder erased since (``forget``) supersedes nothing: with none left, the memory
    # stays current
    alive = store.statuses([str(x) for x in e.props.get("superseded_by") or []])
    by = sorted(alive)
    if not by:
        return
    keeper = next((still_held[x] for x in by if x in still_held), None)
    if keeper is not None:
        batch.edges.append(EdgeWrite("RETRACTED", keeper, e.dst, dict(e.props), _key(e.key, rid)))
        return
    held = holds.get(e.dst)
    if held:
        rebase(batch, held, "superseded")
    elif e.dst in lifted:
        # down by this retraction alone (retracted after it was put back): the restore must
        # bring it back superseded, not as the base status its own hold recorded
        if lifted[e.dst] == e.props.get("status"):
            lifted[e.dst] = "superseded"
    elif store.statuses([e.dst]).get(e.dst) == e.props.get("status"):
        batch.memory_updates.append(MemoryUpdate(e.dst, changes={"status": "superseded"}))


def _replayed(versions: Sequence[NoteVersion], again: Sequence[NoteVersion]) -> NoteState | None:
    """The note ``versions`` (all of a memory's) give with ``again`` back in force
    (``versions.replayed``)."""
    applied = {v.id for v in versions if not v.undone} | {v.id for v in again}
    return replayed(versions, applied)


def _reapply(
    store: GraphStore,
    rid: str,
    e: Edge,
    still_held: Mapping[str, str],
    batch: WriteBatch,
) -> None:
    vids = [str(v) for v in e.props.get("versions") or []]
    every = history(store, e.dst)  # all of the memory's versions: a rebuild replays them
    recorded = set(vids)
    versions = [v for v in every if v.id in recorded]
    moved: dict[str, list[str]] = defaultdict(list)
    again: list[NoteVersion] = []
    for v in versions:
        keeper = still_held.get(v.caused_by or "")
        if keeper is not None:
            moved[keeper].append(v.id)
        elif v.undone:
            again.append(v)
    for keeper, ids in moved.items():
        props = {"effect": "reverted", "versions": ids}
        if len(ids) == len(vids):  # the whole record moves: with the exact notes it holds
            props = {**e.props, **props}
        batch.edges.append(EdgeWrite("RETRACTED", keeper, e.dst, props, _key(e.key, rid)))
    memory = store.get_memories([e.dst], embeddings=False).get(e.dst)
    if not again or memory is None:
        return
    current = NoteState.of(memory)
    exact = bool(e.props.get("exact")) and len(again) == len(versions)
    if exact and current == NoteState.from_props(e.props, "set"):
        state = NoteState.from_props(e.props, "held")
    else:
        rebuilt = _replayed(every, again)
        if rebuilt is not None:
            state = rebuilt
        else:  # a version's words erased: the changes again, as deltas
            state = current
            for v in again:
                state = redo_state(state, v)
    batch.memory_updates.append(MemoryUpdate(e.dst, changes=state.changes()))
    for v in again:
        batch.nodes.append(NodeWrite(MEMORY_VERSION, v.id, {"undone": False}))
