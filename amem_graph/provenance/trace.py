"""Trace and impact: where a memory came from, and everything it touched.

``trace`` walks upstream (the DERIVED_FROM chain, author agents, the episodes and tasks the
memories were written in, their sources) and downstream; ``impact`` is the downstream half, the
blast radius a retraction would act on:

* memories derived from the roots, transitively (DERIVED_FROM, followed backwards);
* episodes that READ a root or any of those;
* the outcomes of those episodes;
* memories those episodes wrote at or after their first such read (``created_at`` >= the READ's
  ``at``): they may carry the taint. This is one level: readers of those memories are not
  followed, so the radius stays bounded; retract a written memory to follow it further.

Traversals are breadth-first with one ``store.edges`` call per hop over the whole frontier, never
one per node, so a 10k-node derivation tree costs a handful of round trips on Neo4j too. The
retraction planner reuses ``downstream`` so impact and retract always agree on the affected set.
Both walks cross scopes; ``provenance.scoped`` cuts a view down to one scope for an operator of
one tenant.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from amem_graph.core.models import Memory
from amem_graph.core.schema import AGENT, EPISODE, MEMORY, OUTCOME, SOURCE, TASK, edge_endpoints
from amem_graph.stores.base import Direction, Edge, GraphStore, Node

#: upstream edges from a memory to the nodes that produced it
_MEMORY_ORIGIN_EDGES = ("ATTRIBUTED_TO", "GENERATED_IN", "FOR_TASK", "FROM_SOURCE")
#: upstream edges from an episode to its agent and task
_EPISODE_ORIGIN_EDGES = ("PERFORMED_BY", "PART_OF")
#: node label order that wins a plain-id key in a networkx view when ids collide across labels
_KEY_PRIORITY = (MEMORY, EPISODE, OUTCOME, AGENT, TASK, SOURCE)


class GraphNode(BaseModel, defer_build=True):
    """A node of a provenance view: its label, id and the props an analyst needs."""

    label: str
    id: str
    props: dict[str, Any] = Field(default_factory=dict)


class GraphEdge(BaseModel, defer_build=True):
    """A typed edge of a provenance view; repeated READs of one pair are folded into one."""

    type: str
    src: str
    dst: str
    props: dict[str, Any] = Field(default_factory=dict)


class ProvenanceGraph(BaseModel, defer_build=True):
    """Nodes and edges of a view, convertible to a networkx DiGraph for analysis or drawing."""

    nodes: list[GraphNode] = Field(default_factory=list)
    edges: list[GraphEdge] = Field(default_factory=list)
    hidden: int = Field(default=0, description="nodes of other scopes left out (scope=...)")

    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph``: nodes keyed by id with ``label`` and props, edges with ``type``.

        Ids are unique per label, not across labels; when two labels share an id, the memory
        (then episode, outcome, agent, task, source) keeps the plain id and the other node is
        keyed ``"Label:id"``.
        """
        import networkx as nx  # a quarter second to import; only this view needs it

        keys = node_keys(self.nodes)
        graph = nx.DiGraph()
        for node in self.nodes:
            graph.add_node(keys[(node.label, node.id)], label=node.label, id=node.id, **node.props)
        for edge in self.edges:
            src_label, dst_label = edge_endpoints(edge.type)
            graph.add_edge(
                keys[(src_label, edge.src)],
                keys[(dst_label, edge.dst)],
                type=edge.type,
                **edge.props,
            )
        return graph

    def draw(self, **options: Any) -> Any:
        """A matplotlib Figure of this view, layered left to right (``provenance.draw``);
        ``path=`` also writes it. Needs ``pip install "amem-graph[notebooks]"``."""
        from amem_graph.provenance.draw import draw_graph

        return draw_graph(self, **options)


def node_keys(nodes: Sequence[GraphNode]) -> dict[tuple[str, str], str]:
    """networkx keys: the plain id, or ``Label:id`` for the lower-priority side of a collision."""
    order = {label: i for i, label in enumerate(_KEY_PRIORITY)}
    keys: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    for node in sorted(nodes, key=lambda n: (order.get(n.label, len(order)), n.label, n.id)):
        key = node.id if node.id not in taken else f"{node.label}:{node.id}"
        taken.add(key)
        keys[(node.label, node.id)] = key
    return keys


class Impact(ProvenanceGraph):
    """The blast radius of one or more root memories (roots themselves are not in the lists)."""

    roots: list[str]
    memory_ids: list[str] = Field(description="derived_ids and written_ids together")
    derived_ids: list[str] = Field(description="memories derived from a root, transitively")
    written_ids: list[str] = Field(description="memories reader episodes wrote after reading")
    episode_ids: list[str] = Field(description="episodes that read a root or a derived memory")
    outcome_ids: list[str] = Field(description="outcomes of those episodes")
    failed_outcome_ids: list[str] = Field(description="the outcomes among them that failed")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def counts(self) -> dict[str, int]:
        """How many of each kind of thing the roots reached."""
        return {
            "memories": len(self.memory_ids),
            "derived": len(self.derived_ids),
            "written": len(self.written_ids),
            "episodes": len(self.episode_ids),
            "outcomes": len(self.outcome_ids),
            "failed_outcomes": len(self.failed_outcome_ids),
        }

    def draw(self, **options: Any) -> Any:
        """The blast radius as a picture, its roots outlined (see ``ProvenanceGraph.draw``)."""
        c = self.counts
        title = (
            f"Blast radius of {', '.join(self.roots)}: {c['memories']} memories, "
            f"{c['episodes']} episodes, {c['failed_outcomes']} failed outcomes"
        )
        return super().draw(**{"focus": self.roots, "title": title, **options})


class Lineage(BaseModel, defer_build=True):
    """Where a memory came from: its derivation ancestors and who, when and from what."""

    ancestor_ids: list[str]
    agent_ids: list[str]
    episode_ids: list[str]
    task_ids: list[str]
    sources: list[str] = Field(description="source URIs")


class Trace(ProvenanceGraph):
    """Upstream lineage and downstream use of one memory; ``nodes``/``edges`` hold both."""

    memory_id: str
    upstream: Lineage
    downstream: Impact

    def draw(self, **options: Any) -> Any:
        """Lineage and use of the memory as a picture, it outlined (``ProvenanceGraph.draw``)."""
        title = f"Lineage and use of {self.memory_id}"
        return super().draw(**{"focus": [self.memory_id], "title": title, **options})


@dataclass
class Downstream:
    """Ids reached downstream of some roots, plus the edges that reached them.

    ``first_read`` maps each reader episode to its earliest READ of a tainted memory; ``None``
    when a READ has no time, which conservatively counts everything the episode wrote.
    ``written`` keeps the memories it loaded, so views need not read them again.
    """

    roots: set[str]
    derived: set[str] = field(default_factory=set)
    first_read: dict[str, datetime | None] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    written: dict[str, Memory] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    @property
    def tainted(self) -> set[str]:
        """Roots and what derives from them: the memories whose readers are followed."""
        return self.roots | self.derived


def closure(
    store: GraphStore, roots: Iterable[str], edge_type: str, direction: Direction
) -> tuple[set[str], list[Edge]]:
    """Nodes reachable from ``roots`` along one edge type (roots excluded), BFS by hop."""
    seen = set(roots)
    frontier = set(seen)
    edges: list[Edge] = []
    while frontier:
        found = store.edges(sorted(frontier), [edge_type], direction)
        edges.extend(found)
        reached = {e.src if direction == "in" else e.dst for e in found}
        frontier = reached - seen
        seen |= frontier
    return seen - set(roots), edges


def downstream(store: GraphStore, roots: Iterable[str], follow_derived: bool = True) -> Downstream:
    """Derived memories, reader episodes, their outcomes and what they wrote after reading."""
    result = Downstream(roots=set(roots))
    if follow_derived:
        result.derived, result.edges = closure(store, result.roots, "DERIVED_FROM", "in")
    reads = store.edges(sorted(result.tainted), ["READ"], "in")
    result.edges.extend(reads)
    for e in reads:
        at = e.props.get("at")
        at = at if isinstance(at, datetime) else None
        previous = result.first_read.get(e.src, at)
        result.first_read[e.src] = None if previous is None or at is None else min(previous, at)
    if not result.first_read:
        return result
    episodes = sorted(result.first_read)
    for e in store.edges(episodes, ["RESULTED_IN"], "out"):
        result.outcomes[e.dst] = e.src
        result.edges.append(e)
    result.written = _written_after_read(store, result)
    return result


def _written_after_read(store: GraphStore, result: Downstream) -> dict[str, Memory]:
    generated = store.edges(sorted(result.first_read), ["GENERATED_IN"], "in")
    candidates = {e.src for e in generated} - result.tainted
    memories = store.get_memories(sorted(candidates))
    written: dict[str, Memory] = {}
    for e in generated:
        memory = memories.get(e.src)
        if memory is None:
            continue
        read_at = result.first_read[e.dst]
        if read_at is None or memory.created_at >= read_at:
            written[memory.id] = memory
            result.edges.append(e)
    return written


def memory_props(memory: Memory) -> dict[str, Any]:
    """What a provenance view shows of a memory (no embedding: views stay small)."""
    return {
        "content": memory.content,
        "kind": memory.kind,
        "scope": memory.scope,
        "agent": memory.agent,
        "status": memory.status,
        "confidence": memory.confidence,
        "created_at": memory.created_at,
    }


def fold_edges(edges: Iterable[Edge]) -> list[GraphEdge]:
    """One view edge per (type, src, dst); READs keep their best rank and count the reads."""
    folded: dict[tuple[str, str, str], GraphEdge] = {}
    for e in sorted(edges, key=lambda e: (e.type, e.src, e.dst, e.props.get("rank", 0), e.key)):
        ident = (e.type, e.src, e.dst)
        seen = folded.get(ident)
        if seen is None:
            props = dict(e.props)
            if e.type == "READ":
                props["reads"] = 1
            folded[ident] = GraphEdge(type=e.type, src=e.src, dst=e.dst, props=props)
        elif e.type == "READ":
            seen.props["reads"] += 1
    return list(folded.values())


def view_nodes(memories: Iterable[Memory], others: Iterable[Node]) -> list[GraphNode]:
    """View nodes for loaded memories and other nodes, sorted by label then id."""
    nodes = [GraphNode(label=MEMORY, id=m.id, props=memory_props(m)) for m in memories]
    nodes.extend(GraphNode(label=n.label, id=n.id, props=dict(n.props)) for n in others)
    return sorted(nodes, key=lambda n: (n.label, n.id))


def impact(store: GraphStore, roots: Sequence[str]) -> Impact:
    """The blast radius of ``roots`` (which must exist; the facade checks)."""
    down = downstream(store, roots)
    memories = [*store.get_memories(sorted(down.tainted)).values(), *down.written.values()]
    episodes = store.get_nodes(EPISODE, sorted(down.first_read))
    outcome_nodes = store.get_nodes(OUTCOME, sorted(down.outcomes))
    failed = [oid for oid, n in outcome_nodes.items() if n.props.get("success") is False]
    return Impact(
        roots=sorted(down.roots),
        memory_ids=sorted(down.derived | set(down.written)),
        derived_ids=sorted(down.derived),
        written_ids=sorted(down.written),
        episode_ids=sorted(down.first_read),
        outcome_ids=sorted(down.outcomes),
        failed_outcome_ids=sorted(failed),
        nodes=view_nodes(memories, [*episodes.values(), *outcome_nodes.values()]),
        edges=fold_edges(down.edges),
    )


def trace(store: GraphStore, memory_id: str) -> Trace:
    """Upstream lineage and downstream impact of one memory (which must exist)."""
    ancestors, derivations = closure(store, [memory_id], "DERIVED_FROM", "out")
    lineage = sorted(ancestors | {memory_id})
    origins = store.edges(lineage, list(_MEMORY_ORIGIN_EDGES), "out")
    ends: dict[str, set[str]] = {AGENT: set(), EPISODE: set(), TASK: set(), SOURCE: set()}
    for e in origins:
        ends[edge_endpoints(e.type)[1]].add(e.dst)
    episode_origins = store.edges(sorted(ends[EPISODE]), list(_EPISODE_ORIGIN_EDGES), "out")
    for e in episode_origins:
        ends[edge_endpoints(e.type)[1]].add(e.dst)
    down = impact(store, [memory_id])
    others = [
        node
        for label, ids in sorted(ends.items())
        if ids
        for node in store.get_nodes(label, sorted(ids)).values()
    ]
    upstream_nodes = view_nodes(store.get_memories(lineage).values(), others)
    sources = [n.props.get("uri", n.id) for n in upstream_nodes if n.label == SOURCE]
    return Trace(
        memory_id=memory_id,
        upstream=Lineage(
            ancestor_ids=sorted(ancestors),
            agent_ids=sorted(ends[AGENT]),
            episode_ids=sorted(ends[EPISODE]),
            task_ids=sorted(ends[TASK]),
            sources=sorted(str(s) for s in sources),
        ),
        downstream=down,
        nodes=_merge_nodes(upstream_nodes, down.nodes),
        edges=_merge_edges(fold_edges([*derivations, *origins, *episode_origins]), down.edges),
    )


def _merge_nodes(*groups: list[GraphNode]) -> list[GraphNode]:
    merged = {(n.label, n.id): n for group in groups for n in group}
    return [merged[k] for k in sorted(merged)]


def _merge_edges(*groups: list[GraphEdge]) -> list[GraphEdge]:
    merged = {(e.type, e.src, e.dst): e for group in groups for e in group}
    return [merged[k] for k in sorted(merged)]
