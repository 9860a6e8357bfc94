"""Provenance views and agent trust cut down to one scope.

An operator of one tenant must not list, score or take back another's memories. ``impact`` and
``trace`` walk the whole graph (a retraction's cascade must see everything); this module keeps
what belongs to the scope: its memories and episodes, their outcomes, and the agents, tasks and
sources joined to those. What was left out is counted in ``hidden``, never named.
"""

from __future__ import annotations

from typing import TypeVar

from amem_graph.core.models import Agent
from amem_graph.core.schema import AGENT, EPISODE, MEMORY, OUTCOME, SOURCE, TASK, edge_endpoints
from amem_graph.provenance.credit import agent_trust
from amem_graph.provenance.trace import GraphEdge, Impact, Lineage, ProvenanceGraph, Trace
from amem_graph.stores.base import GraphStore, MemoryFilter, Node

_V = TypeVar("_V", bound=ProvenanceGraph)
_SCOPED = (MEMORY, EPISODE)


def _kept(view: ProvenanceGraph, scope: str) -> set[tuple[str, str]]:
    """(label, id) of the view's nodes that belong to ``scope``."""
    core = {
        (n.label, n.id) for n in view.nodes if n.label in _SCOPED and n.props.get("scope") == scope
    }
    core |= {
        (n.label, n.id)
        for n in view.nodes
        if n.label == OUTCOME and (EPISODE, str(n.props.get("episode"))) in core
    }
    joined: set[tuple[str, str]] = set()
    for e in view.edges:
        ends = _ends(e)
        if any(end in core for end in ends):
            joined |= {end for end in ends if end[0] not in (*_SCOPED, OUTCOME)}
    return core | joined


def _ends(edge: GraphEdge) -> tuple[tuple[str, str], tuple[str, str]]:
    src_label, dst_label = edge_endpoints(edge.type)
    return (src_label, edge.src), (dst_label, edge.dst)


def _cut(view: _V, kept: set[tuple[str, str]]) -> _V:
    nodes = [n for n in view.nodes if (n.label, n.id) in kept]
    edges = [e for e in view.edges if all(end in kept for end in _ends(e))]
    hidden = view.hidden + len(view.nodes) - len(nodes)
    return view.model_copy(update={"nodes": nodes, "edges": edges, "hidden": hidden})


def _ids(values: list[str], label: str, kept: set[tuple[str, str]]) -> list[str]:
    return [v for v in values if (label, v) in kept]


def scoped_impact(view: Impact, scope: str) -> Impact:
    """``view`` with only the memories, episodes and outcomes of ``scope``."""
    kept = _kept(view, scope) | {(MEMORY, r) for r in view.roots}
    cut = _cut(view, kept)
    return cut.model_copy(
        update={
            "memory_ids": _ids(view.memory_ids, MEMORY, kept),
            "derived_ids": _ids(view.derived_ids, MEMORY, kept),
            "written_ids": _ids(view.written_ids, MEMORY, kept),
            "episode_ids": _ids(view.episode_ids, EPISODE, kept),
            "outcome_ids": _ids(view.outcome_ids, OUTCOME, kept),
            "failed_outcome_ids": _ids(view.failed_outcome_ids, OUTCOME, kept),
        }
    )


def scoped_trace(view: Trace, scope: str) -> Trace:
    """``view`` upstream and downstream with only what belongs to ``scope``."""
    kept = _kept(view, scope) | {(MEMORY, view.memory_id)}
    cut = _cut(view, kept)
    up = view.upstream
    upstream = Lineage(
        ancestor_ids=_ids(up.ancestor_ids, MEMORY, kept),
        agent_ids=_ids(up.agent_ids, AGENT, kept),
        episode_ids=_ids(up.episode_ids, EPISODE, kept),
        task_ids=_ids(up.task_ids, TASK, kept),
        sources=sorted(str(n.props.get("uri", n.id)) for n in cut.nodes if n.label == SOURCE),
    )
    return cut.model_copy(
        update={"upstream": upstream, "downstream": scoped_impact(view.downstream, scope)}
    )


def agent_in_scopes(store: GraphStore, node: Node, scope: str | None) -> Agent:
    """An agent's trust overall (or in ``scope``), and per scope, from its memories' credit."""
    scopes = None if scope is None else (scope,)
    written = store.find_memories(MemoryFilter(scopes=scopes, statuses=None, agents=(node.id,)))
    per: dict[str, tuple[float, float]] = {}
    for m in written:
        s, f = per.get(m.scope, (0.0, 0.0))
        per[m.scope] = (s + m.successes, f + m.failures)
    successes = sum(s for s, _ in per.values())
    failures = sum(f for _, f in per.values())
    return Agent(
        id=node.id,
        name=str(node.props.get("name", node.id)),
        trust=agent_trust(successes, failures),
        memory_count=len(written),
        successes=successes,
        failures=failures,
        trust_by_scope={k: agent_trust(s, f) for k, (s, f) in sorted(per.items())},
    )
