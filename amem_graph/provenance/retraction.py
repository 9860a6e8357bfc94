"""Retraction and restore, planned as WriteBatches over the store protocol (pure logic).

A retraction selects target memories (by id, by agent optionally since a time, by source or by
episode), computes their downstream with ``provenance.downstream`` and applies a policy:

* targets are retracted;
* memories derived from them, transitively, are retracted or quarantined (``policy.derived``);
* memories written by episodes that read any of those, at or after the read, are quarantined or
  retracted (``policy.readers``).

With a ``scope`` the selector only names memories (and episodes) of that scope, and a cascade
that would reach memories of another scope is refused with a ConflictError that counts them but
names none (they belong to another tenant), unless ``cross_scope=True``; the report then lists
them in ``cross_scope``. Without a scope a retraction spans the whole store (an operator's call).

Everything is written in one transaction: a ``Retraction`` node, one ``RETRACTED`` edge per
memory with its ``effect``, ``previous_status`` and ``base_status``, the status changes, and an
audit event.

Statuses are soft and derived. A memory's status is the strongest effect of the *active* (not
restored) retractions on it (retracted > quarantined), or else its base status (the status it
had before any retraction; all active edges on a memory carry the same one). ``restore`` marks
the Retraction ``restored_at`` and recomputes each affected memory from the retractions still
active on it, so overlapping retractions compose: restoring one never revives what another
still holds down.

A retraction also undoes what the memories it holds down did to others (``undo.py``): the note
changes they caused as evolution (``RETRACTED`` edges with effect ``reverted``, listed by version
in ``RetractionReport.reverted_versions``) and their supersessions (effect ``unsuperseded``, in
``unsuperseded``); ``restore`` re-applies both. Status recomputation ignores those edges.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from amem_graph.core.errors import ConflictError, NotFoundError, ValidationError
from amem_graph.core.schema import AGENT, EPISODE, RETRACTION, SOURCE, source_id
from amem_graph.provenance import undo
from amem_graph.provenance.audit import AuditEvent, authors, event_write, new_event
from amem_graph.provenance.trace import downstream
from amem_graph.stores.base import (
    Edge,
    EdgeWrite,
    GraphStore,
    MemoryFilter,
    MemoryUpdate,
    NodeWrite,
    WriteBatch,
)

Effect = Literal["retracted", "quarantined", "reverted", "unsuperseded"]
StatusEffect = Literal["retracted", "quarantined"]
PolicyAction = Literal["retract", "quarantine", "none"]

#: effects that hold a memory's status down, strongest first
STATUS_EFFECTS: tuple[StatusEffect, ...] = ("retracted", "quarantined")
_STRENGTH = {"retracted": 2, "quarantined": 1}
_ACTION_EFFECT: dict[str, StatusEffect] = {"retract": "retracted", "quarantine": "quarantined"}


class RetractionPolicy(BaseModel):
    """What a cascading retraction does beyond its targets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    derived: PolicyAction = Field(
        default="retract", description="memories derived from a target, transitively"
    )
    readers: PolicyAction = Field(
        default="quarantine",
        description="memories written by episodes after they read a target or a derived memory",
    )


class RetractionReport(BaseModel, defer_build=True):
    """What a retraction did (or, with ``dry_run``, would do); ``id`` is what ``restore`` takes."""

    id: str
    reason: str
    by: str | None = None
    at: datetime
    selector: str = Field(description='what was asked for, e.g. "memory:m1" or "agent:a1"')
    targets: list[str]
    cascade: bool
    policy: RetractionPolicy
    dry_run: bool = False
    retracted: list[str] = Field(default_factory=list)
    quarantined: list[str] = Field(default_factory=list)
    reverted_versions: list[str] = Field(default_factory=list)
    unsuperseded: list[str] = Field(default_factory=list)
    restored_at: datetime | None = None
    scope: str | None = Field(default=None, description="the scope selected in; None: all")
    cross_scope: list[str] = Field(
        default_factory=list, description="memories of other scopes taken back (cross_scope=True)"
    )

    @property
    def memory_ids(self) -> list[str]:
        """Every memory whose status this retraction holds down."""
        return sorted({*self.retracted, *self.quarantined})


class RestoreReport(BaseModel, defer_build=True):
    """What a restore changed: memories back to their own status, and those still held."""

    id: str = Field(description="the retraction restored")
    restored_at: datetime
    restored: list[str] = Field(default_factory=list)
    held: list[str] = Field(
        default_factory=list, description="still retracted or quarantined by another retraction"
    )
    already_restored: bool = False
    forked: dict[str, list[str]] = Field(
        default_factory=dict,
        description="restored memories now current beside others that supersede the same "
        "memory (written while they were down, say): restored id -> those ids; supersede one "
        "of them to end the fork",
    )


@dataclass(frozen=True)
class Selector:
    """Which memories a retraction starts from; exactly one of the four ways."""

    memory_ids: tuple[str, ...] = ()
    agent: str | None = None
    since: datetime | None = None
    source: str | None = None
    episode: str | None = None
    scope: str | None = None

    def describe(self) -> str:
        """A short, stable description stored on the Retraction node."""
        where = "" if self.scope is None else f" in {self.scope}"
        return self._what() + where

    def _what(self) -> str:
        if self.agent is not None:
            since = "" if self.since is None else f" since {self.since.isoformat()}"
            return f"agent:{self.agent}{since}"
        if self.source is not None:
            return f"source:{self.source}"
        if self.episode is not None:
            return f"episode:{self.episode}"
        return "memory:" + ",".join(self.memory_ids)


def make_selector(
    memory_ids: Sequence[str],
    agent: str | None,
    since: datetime | None,
    source: str | None,
    episode: str | None,
    scope: str | None = None,
) -> Selector:
    """Validate that exactly one way of selecting was used."""
    chosen = [
        name
        for name, value in (
            ("id", memory_ids or None),
            ("agent", agent),
            ("source", source),
            ("episode", episode),
        )
        if value is not None
    ]
    if len(chosen) != 1:
        raise ValidationError(
            f"retract needs exactly one of id, agent, source or episode; got {chosen or 'none'}"
        )
    if since is not None and agent is None:
        raise ValidationError("since only applies to a retraction by agent")
    return Selector(tuple(memory_ids), agent, since, source, episode, scope)


def resolve_targets(store: GraphStore, selector: Selector) -> list[str]:
    """The memory ids a selector names (in its scope, if any); NotFoundError for an id, agent,
    source or episode that does not exist (there)."""
    found = _resolve(store, selector)
    if selector.scope is None:
        return found
    return sorted(store.filter_ids(found, MemoryFilter(scopes=(selector.scope,), statuses=None)))


def _resolve(store: GraphStore, selector: Selector) -> list[str]:
    where = "" if selector.scope is None else f" in scope {selector.scope!r}"
    if selector.agent is not None:
        return _agent_targets(store, selector.agent, selector.since)
    if selector.source is not None:
        sid = source_id(selector.source)
        if sid not in store.get_nodes(SOURCE, [sid]):
            raise NotFoundError(f"no source {selector.source!r}")
        return sorted({e.src for e in store.edges([sid], ["FROM_SOURCE"], "in")})
    if selector.episode is not None:
        node = store.get_nodes(EPISODE, [selector.episode]).get(selector.episode)
        if node is None or selector.scope not in (None, node.props.get("scope")):
            raise NotFoundError(f"no episode {selector.episode!r}{where}")
        return sorted({e.src for e in store.edges([selector.episode], ["GENERATED_IN"], "in")})
    scopes = None if selector.scope is None else (selector.scope,)
    found = store.filter_ids(selector.memory_ids, MemoryFilter(scopes=scopes, statuses=None))
    for mid in selector.memory_ids:
        if mid not in found:
            raise NotFoundError(f"no memory with id {mid!r}{where}")
    return sorted(set(selector.memory_ids))


def _agent_targets(store: GraphStore, agent: str, since: datetime | None) -> list[str]:
    if agent not in store.get_nodes(AGENT, [agent]):
        raise NotFoundError(f"no agent {agent!r}")
    written = store.find_memories(MemoryFilter(statuses=None, agents=(agent,)))
    return sorted(m.id for m in written if since is None or m.created_at >= since)


def classify(
    store: GraphStore, targets: Sequence[str], cascade: bool, policy: RetractionPolicy
) -> dict[str, StatusEffect]:
    """Memory id -> the effect this retraction has on it, per the policy."""
    effects: dict[str, StatusEffect] = dict.fromkeys(targets, "retracted")
    if not cascade or not targets:
        return effects
    down = downstream(store, targets, follow_derived=policy.derived != "none")
    if policy.derived != "none":
        for mid in down.derived:
            effects.setdefault(mid, _ACTION_EFFECT[policy.derived])
    if policy.readers != "none":
        for mid in down.written:
            effects.setdefault(mid, _ACTION_EFFECT[policy.readers])
    return effects


def current_statuses(store: GraphStore, ids: Sequence[str]) -> dict[str, str]:
    """Status of each existing memory, in one store call (no full loads)."""
    return store.statuses(ids)


def active_holds(
    store: GraphStore, ids: Sequence[str], excluding: str | None = None
) -> dict[str, list[Edge]]:
    """Memory id -> RETRACTED edges with a status effect from retractions still active."""
    edges = [
        e
        for e in store.edges(ids, ["RETRACTED"], "in")
        if e.src != excluding and e.props.get("effect") in STATUS_EFFECTS
    ]
    nodes = store.get_nodes(RETRACTION, sorted({e.src for e in edges}))
    active = {rid for rid, n in nodes.items() if n.props.get("restored_at") is None}
    holds: dict[str, list[Edge]] = defaultdict(list)
    for e in edges:
        if e.src in active:
            holds[e.dst].append(e)
    return holds


def strongest(status: str, effect: str) -> str:
    """The status that wins between a memory's current status and a retraction effect."""
    return effect if _STRENGTH.get(effect, 0) > _STRENGTH.get(status, 0) else status


def plan_retraction(
    store: GraphStore,
    selector: Selector,
    *,
    reason: str,
    by: str | None,
    cascade: bool,
    policy: RetractionPolicy,
    at: datetime,
    cross_scope: bool = False,
) -> tuple[WriteBatch, RetractionReport]:
    """The batch that performs a retraction, and its report; reads only, writes nothing."""
    targets = resolve_targets(store, selector)
    effects = classify(store, targets, cascade, policy)
    ids = sorted(effects)
    outside = _outside(store, ids, selector.scope)
    if outside and not cross_scope:
        raise ConflictError(
            f"the cascade reaches {len(outside)} "
            f"{'memory' if len(outside) == 1 else 'memories'} outside scope {selector.scope!r}; "
            "nothing was retracted",
            hint="pass cross_scope=True (--cross-scope) to take them back too, or cascade=False",
        )
    statuses = current_statuses(store, ids)
    holds = active_holds(store, ids)
    rid = f"retraction-{uuid.uuid4().hex}"
    batch = WriteBatch()
    for mid in ids:
        current, effect = statuses[mid], effects[mid]
        base = holds[mid][0].props.get("base_status", current) if holds.get(mid) else current
        props = {"effect": effect, "previous_status": current, "base_status": base}
        batch.edges.append(EdgeWrite("RETRACTED", rid, mid, props, key=effect))
        if strongest(current, effect) != current:
            batch.memory_updates.append(MemoryUpdate(mid, changes={"status": effect}))
    down = set(ids)
    reverted = undo.undo_evolution(store, rid, down, batch)
    unsuperseded = undo.unsupersede(store, rid, down, lambda olds: active_holds(store, olds), batch)
    report = RetractionReport(
        id=rid,
        reason=reason,
        by=by,
        at=at,
        selector=selector.describe(),
        targets=targets,
        cascade=cascade,
        policy=policy,
        retracted=[m for m in ids if effects[m] == "retracted"],
        quarantined=[m for m in ids if effects[m] == "quarantined"],
        reverted_versions=reverted,
        unsuperseded=unsuperseded,
        scope=selector.scope,
        cross_scope=outside,
    )
    touched = sorted({*ids, *unsuperseded, *(u.id for u in batch.memory_updates)})
    agents = authors(store, ids) | ({selector.agent} if selector.agent else set())
    event = new_event(
        "retract",
        at,
        actor=by,
        reason=reason,
        memory_ids=touched,
        agent_ids=agents,
        retraction_id=rid,
    )
    head = NodeWrite(RETRACTION, rid, on_create=_node_props(report))
    batch.nodes[:0] = [head, event_write(event)]
    return batch, report


def _outside(store: GraphStore, ids: list[str], scope: str | None) -> list[str]:
    """Which of ``ids`` are memories of another scope than ``scope`` (none without a scope)."""
    if scope is None:
        return []
    inside = store.filter_ids(ids, MemoryFilter(scopes=(scope,), statuses=None))
    return [m for m in ids if m not in inside]


def _node_props(report: RetractionReport) -> dict[str, Any]:
    return {
        "reason": report.reason,
        "by": report.by,
        "at": report.at,
        "selector": report.selector,
        "targets": report.targets,
        "cascade": report.cascade,
        "policy_derived": report.policy.derived,
        "policy_readers": report.policy.readers,
        "scope": report.scope,
        "cross_scope": report.cross_scope,
    }


def load_report(store: GraphStore, rid: str) -> RetractionReport:
    """A stored retraction, rebuilt from its node and RETRACTED edges."""
    node = store.get_nodes(RETRACTION, [rid]).get(rid)
    if node is None:
        raise NotFoundError(
            f"no retraction {rid!r}",
            hint="`amem audit` lists retractions; a dry run stores nothing, so it has no id",
        )
    by_effect: dict[str, list[str]] = defaultdict(list)
    for e in store.edges([rid], ["RETRACTED"], "out"):
        effect = str(e.props.get("effect"))
        if e.key != effect:  # a record moved here from another retraction is not its own
            continue
        if effect == "reverted":
            by_effect[effect].extend(str(v) for v in e.props.get("versions") or [])
        else:
            by_effect[effect].append(e.dst)
    p = node.props
    return RetractionReport(
        id=rid,
        reason=str(p.get("reason", "")),
        by=p.get("by"),
        at=p["at"],
        selector=str(p.get("selector", "")),
        targets=list(p.get("targets") or []),
        cascade=bool(p.get("cascade", True)),
        policy=RetractionPolicy(
            derived=p.get("policy_derived", "retract"),
            readers=p.get("policy_readers", "quarantine"),
        ),
        retracted=sorted(by_effect["retracted"]),
        quarantined=sorted(by_effect["quarantined"]),
        reverted_versions=sorted(by_effect["reverted"]),
        unsuperseded=sorted(by_effect["unsuperseded"]),
        restored_at=p.get("restored_at"),
        scope=p.get("scope"),
        cross_scope=list(p.get("cross_scope") or []),
    )


def plan_restore(
    store: GraphStore, rid: str, *, by: str | None, reason: str, at: datetime
) -> tuple[WriteBatch, RestoreReport]:
    """The batch that undoes retraction ``rid``; empty if it was already restored."""
    report = load_report(store, rid)
    if report.restored_at is not None:
        return WriteBatch(), RestoreReport(
            id=rid, restored_at=report.restored_at, already_restored=True
        )
    edges = store.edges([rid], ["RETRACTED"], "out")
    own = {e.dst: e for e in edges if e.props.get("effect") in STATUS_EFFECTS}
    ids = sorted(own)
    statuses = current_statuses(store, ids)
    holds = active_holds(store, ids, excluding=rid)
    batch = WriteBatch()
    # the status each memory this retraction holds gets back (a re-supersede may change it)
    targets = {m: _status_without(own[m], holds.get(m, [])) for m in ids if m in statuses}
    undos = [e for e in edges if e.props.get("effect") not in STATUS_EFFECTS]
    if undos:
        still_held = {mid: hs[0].src for mid, hs in holds.items() if hs}
        others = active_holds(store, sorted({e.dst for e in undos}), excluding=rid)
        undo.redo(store, rid, undos, still_held, others, batch, targets)
    restored: list[str] = []
    held: list[str] = []
    for mid in ids:
        if mid not in statuses:
            continue
        target = targets[mid]
        if target != statuses[mid]:
            batch.memory_updates.append(MemoryUpdate(mid, changes={"status": target}))
        (held if holds.get(mid) else restored).append(mid)
    forked = _forks(store, [m for m in restored if targets[m] == "active"])
    touched = sorted({*ids, *(e.dst for e in undos)})
    event = _restore_event(store, report, touched, by, reason, at)
    batch.nodes[:0] = [
        NodeWrite(RETRACTION, rid, {"restored_at": at, "restored_by": by}),
        event_write(event),
    ]
    return batch, RestoreReport(id=rid, restored_at=at, restored=restored, held=held, forked=forked)


def _forks(store: GraphStore, back: list[str]) -> dict[str, list[str]]:
    """Of the memories coming back active, those that supersede a memory another active one
    supersedes too: a key with two current versions, which the analyst should know of (a
    version written while this one was down is not superseded by a restore)."""
    if not back:
        return {}
    olds = store.edges(back, ["SUPERSEDES"], "out")
    if not olds:
        return {}
    rivals = store.edges(sorted({e.dst for e in olds}), ["SUPERSEDES"], "in")
    live = store.statuses(sorted({e.src for e in rivals} - set(back)))
    out: dict[str, set[str]] = {}
    for mine in olds:
        for e in rivals:
            if e.dst == mine.dst and live.get(e.src) == "active":
                out.setdefault(mine.src, set()).add(e.src)
    return {mid: sorted(ids) for mid, ids in sorted(out.items())}


def _status_without(own: Edge, others: list[Edge]) -> str:
    """A memory's status once ``own`` is lifted: the strongest remaining hold, else its base."""
    if not others:
        return str(own.props.get("base_status", "active"))
    return max((str(e.props["effect"]) for e in others), key=lambda eff: _STRENGTH[eff])


def _restore_event(
    store: GraphStore,
    report: RetractionReport,
    ids: list[str],
    by: str | None,
    reason: str,
    at: datetime,
) -> AuditEvent:
    return new_event(
        "restore",
        at,
        actor=by,
        reason=reason,
        memory_ids=ids,
        agent_ids=authors(store, ids),
        retraction_id=report.id,
    )
