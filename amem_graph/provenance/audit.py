"""The audit log: one append-only ``AuditEvent`` node per retraction, restore, forget,
supersession, note revert, and archiving or unarchiving of cold memories. (Evolution itself is
recorded by its ``MemoryVersion`` nodes.)

An event is written in the same transaction as the change it records, so the log never claims
something that did not happen nor misses something that did. Events carry the ids they concern
as properties rather than edges: a ``forget`` deletes the memory and its edges, and the event
saying it was erased must survive that. Events are written with create-only properties, so a
replayed write can never rewrite history. Nothing here ever stores a forgotten memory's content,
only its id and content hash.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, Field

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
) -> AuditEvent:
    """A fresh event; ids sort by time, then by a random suffix."""
    return AuditEvent(
        id=f"audit-{at.strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:12]}",
        kind=kind,
        at=at,
        actor=actor,
        reason=reason,
        memory_ids=sorted(set(memory_ids)),
        agent_ids=sorted(set(agent_ids)),
        retraction_id=retraction_id,
        content_hashes=list(content_hashes),
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
) -> list[AuditEvent]:
    """Events oldest first, matching every filter given (``since`` inclusive, ``until`` not).

    ``agent`` matches an event's authors or its actor.
    """
    where = {} if kind is None else {"kind": kind}
    events = [_event(n) for n in store.find_nodes(AUDIT_EVENT, where)]
    selected = [
        e
        for e in events
        if (memory is None or memory in e.memory_ids)
        and (agent is None or agent in e.agent_ids or agent == e.actor)
        and (since is None or e.at >= since)
        and (until is None or e.at < until)
    ]
    return sorted(selected, key=lambda e: (e.at, e.id))
