"""``check``: is this store whole? Logic over the store protocol, the same on both stores.

It finds what a crash, a bad import or a hand edit can leave behind and no API call would
write: edges whose ends are missing, values the API refuses (``core.rules``), statuses that
disagree with the retractions holding them, and the store's own index disagreements
(``GraphStore.index_problems``). Read-only; a report, never a repair.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from pydantic import BaseModel, Field

from amem_graph.core.rules import edge_problems, memory_problems, node_problems
from amem_graph.core.schema import EDGE_TYPES, MEMORY, RETRACTION
from amem_graph.provenance.retraction import STATUS_EFFECTS, strongest
from amem_graph.stores.base import Edge, GraphStore, MemoryFilter, Node

#: the kinds of problem a report can list
KINDS = ("orphan_edge", "bad_value", "status", "index")
_SHOWN = 20  # problems listed per kind; the rest are counted


class CheckReport(BaseModel, defer_build=True):
    """What ``check`` found; ``ok`` when nothing."""

    backend: str
    counts: dict[str, int] = Field(description="nodes per label and edges per type")
    problems: dict[str, list[str]] = Field(
        default_factory=dict, description=f"kind ({', '.join(KINDS)}) -> first problems"
    )
    totals: dict[str, int] = Field(default_factory=dict, description="kind -> how many")

    @property
    def ok(self) -> bool:
        """True when the store passed every check."""
        return not self.totals


def _orphans(edges: list[Edge], present: set[tuple[str, str]]) -> list[str]:
    out = []
    for e in edges:
        src_label, dst_label = EDGE_TYPES[e.type]
        for end, label, nid in (("source", src_label, e.src), ("target", dst_label, e.dst)):
            if (label, nid) not in present:
                out.append(f"{e.type} edge {e.src!r}->{e.dst!r}: its {end} {label} is missing")
    return out


def _statuses(memories: dict[str, str], edges: list[Edge], nodes: list[Node]) -> list[str]:
    """Each memory's status is the strongest hold of the active retractions on it, and a
    retracted or quarantined memory is held by one."""
    active = {n.id for n in nodes if n.label == RETRACTION and n.props.get("restored_at") is None}
    held: dict[str, str] = defaultdict(lambda: "active")
    for e in edges:
        effect = e.props.get("effect")
        if e.type == "RETRACTED" and e.src in active and effect in STATUS_EFFECTS:
            held[e.dst] = strongest(held[e.dst], str(effect))
    out = []
    for mid, status in sorted(memories.items()):
        want = held.get(mid)
        if want is not None and status != want:
            out.append(f"memory {mid!r} is {status}, its active retractions make it {want}")
        elif want is None and status in STATUS_EFFECTS:
            out.append(f"memory {mid!r} is {status} but no active retraction holds it")
    return out


def check_store(store: GraphStore) -> CheckReport:
    """Every check over the whole store (it reads everything: run it when writes are quiet)."""
    memories = store.find_memories(MemoryFilter(statuses=None))
    nodes = list(store.iter_nodes())
    edges = list(store.iter_edges())
    present = {(MEMORY, m.id) for m in memories} | {(n.label, n.id) for n in nodes}
    found: dict[str, list[str]] = {
        "orphan_edge": _orphans(edges, present),
        "bad_value": [f"memory {m.id!r}: {p}" for m in memories for p in memory_problems(m)]
        + [p for n in nodes for p in node_problems(n.label, n.id, n.props)]
        + [p for e in edges for p in edge_problems(e.type, e.src, e.dst, e.key, e.props)],
        "status": _statuses({m.id: m.status for m in memories}, edges, nodes),
        "index": store.index_problems(),
    }
    totals = Counter({kind: len(items) for kind, items in found.items() if items})
    return CheckReport(
        backend=store.backend,
        counts=store.counts(),
        problems={kind: items[:_SHOWN] for kind, items in found.items() if items},
        totals=dict(totals),
    )
