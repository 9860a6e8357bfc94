"""The audit log: one append-only ``AuditEvent`` node per retraction, restore, forget,
supersession, note revert, and archiving or unarchiving of cold memories. (Evolution itself is
recorded by its ``MemoryVersion`` nodes.)

An event is written in the same transaction as the change it records, so the log never claims
something that did not happen nor misses something that did. Events carry the ids they concern
as properties rather than edges: a ``forget`` deletes the memory and its edges, and the event
saying it was erased must survive that. Events are written with create-only properties, so a
replayed write can never rewrite history. Nothing here ever stores a forgotten memory's content,
only its id and content hash.

With a scope, the log is what an operator of that scope may see: the events that concern its
memories, each narrowed to them (another scope's ids, hashes and authors are left out). A
memory's scope is read from the store; a ``forget`` records the scopes of what it erased in
``memory_scopes``, since the store no longer can.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, Field

from amem_graph.core.models import Memory
from amem_graph.core.schema import AUDIT_EVENT
from amem_graph.stores.base import GraphStore, Node, NodeWrite

AuditKind = Literal[
    "retract", "restore", "forget", "evolve", "supersede", "revert", "archive", "unarchive"
]
AUDIT_KINDS: tuple[str, ...] = get_args(AuditKind)


class AuditEvent(BaseModel, defer_build=True):
    """One recorded change: what, when, by whom, why, and which memories and agents it concerns.

    ``agent_ids`` are the authors of the memories concerned (and, for a retraction by agent, that
    agent); ``actor`` is who asked for the change.
    """

    id: str
    kind: AuditKind
    at: datetime
    actor: str | None = None
    reason: str = ""
    memory_ids: list[str] = Field(default_factory=list)
    agent_ids: list[str] = Field(default_factory=list)
    retraction_id: str | None = None
    content_hashes: list[str] = Field(default_factory=list)
    #: the scope of each of ``memory_ids`` when the event erased them (``forget``), else empty
    memory_scopes: list[str] = Field(default_factory=list)


def new_event(
    kind: AuditKind,
    at: datetime,
    *,
    actor: str | None,
    reason: str,
    memory_ids: Iterable[str],
    agent_ids: Iterable[str] = (),
    retraction_id: str | None = None,
    content_hashes: Iterable[str] = (),
    scopes: Mapping[str, str] | None = None,
) -> AuditEvent:
    """A fresh event; ids sort by time, then by a random suffix. ``scopes`` (memory id ->
    scope) is recorded for memories the event erases, whose scope the store will not know."""
    ids = sorted(set(memory_ids))
    return AuditEvent(
        id=f"audit-{at.strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:12]}",
        kind=kind,
        at=at,
        actor=actor,
        reason=reason,
        memory_ids=ids,
        agent_ids=sorted(set(agent_ids)),
        retraction_id=retraction_id,
        content_hashes=list(content_hashes),
        memory_scopes=[] if scopes is None else [scopes.get(m, "") for m in ids],
    )


def event_write(event: AuditEvent) -> NodeWrite:
    """The node write that appends ``event``; create-only, so it never overwrites."""
    return NodeWrite(AUDIT_EVENT, event.id, on_create=event.model_dump(exclude={"id"}))


def _event(node: Node) -> AuditEvent:
    return AuditEvent.model_validate({**node.props, "id": node.id})


def authors(store: GraphStore, memory_ids: Iterable[str]) -> set[str]:
    """The agents the given memories are attributed to (one store call)."""
    return {e.dst for e in store.edges(sorted(set(memory_ids)), ["ATTRIBUTED_TO"], "out")}


def query_events(
    store: GraphStore,
    *,
    memory: str | None = None,
    agent: str | None = None,
    kind: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    scope: str | None = None,
) -> list[AuditEvent]:
    """Events oldest first, matching every filter given (``since`` inclusive, ``until`` not).

    ``agent`` matches an event's authors or its actor; ``scope`` keeps the events concerning
    that scope's memories, narrowed to them.
    """
    where = {} if kind is None else {"kind": kind}
    events = [_event(n) for n in store.find_nodes(AUDIT_EVENT, where)]
    if scope is not None:
        events = in_scope(store, events, scope)
    selected = [
        e
        for e in events
        if (memory is None or memory in e.memory_ids)
        and (agent is None or agent in e.agent_ids or agent == e.actor)
        and (since is None or e.at >= since)
        and (until is None or e.at < until)
    ]
    return sorted(selected, key=lambda e: (e.at, e.id))


def in_scope(store: GraphStore, events: list[AuditEvent], scope: str) -> list[AuditEvent]:
    """The events that concern ``scope``'s memories, each narrowed to those memories."""
    unknown = {m for e in events if not e.memory_scopes for m in e.memory_ids}  # ask once
    stored = store.get_memories(sorted(unknown), embeddings=False)
    known = {m: memory.scope for m, memory in stored.items()}
    kept: list[AuditEvent] = []
    for event in events:
        recorded = dict(zip(event.memory_ids, event.memory_scopes, strict=False))
        mine = [i for i, m in enumerate(event.memory_ids) if recorded.get(m, known.get(m)) == scope]
        if not mine:
            continue
        if len(mine) == len(event.memory_ids):
            kept.append(event)
            continue
        ids = [event.memory_ids[i] for i in mine]
        hashes = event.content_hashes
        kept.append(
            event.model_copy(
                update={
                    "memory_ids": ids,
                    # hashes and scopes align with the ids when present (a forget)
                    "content_hashes": [hashes[i] for i in mine]
                    if len(hashes) == len(event.memory_ids)
                    else [],
                    "memory_scopes": [event.memory_scopes[i] for i in mine]
                    if event.memory_scopes
                    else [],
                    "agent_ids": sorted(set(event.agent_ids) & _authors_of(store, stored, ids)),
                }
            )
        )
    return kept


def _authors_of(store: GraphStore, stored: Mapping[str, Memory], ids: list[str]) -> set[str]:
    """Authors of the stored ones among ``ids`` (an erased memory's author is not known)."""
    present = [m for m in ids if m in stored]
    named = {agent for m in present if (agent := stored[m].agent) is not None}
    return authors(store, present) | named
