"""Retraction and impact at scale: the issue's two targets, timed on a real store.

    python bench/bench_retract.py                                   # embedded store (temp file)
    python bench/bench_retract.py --store bolt://127.0.0.1:7687     # the same on Neo4j

* retract with cascade over a derivation tree of ``--tree`` memories (default 10,000; every
  memory derives from the root, transitively), target < 2 s; restore is timed too;
* impact of a memory read by ``--readers`` episodes (default 1,000), each failing and writing a
  memory after its read, target < 1 s.

Each figure is the median of ``--runs`` runs. Ids and the scope carry a fresh prefix, so a
shared Neo4j database is added to, never wiped. ``--check`` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.core.schema import EPISODE, OUTCOME
from amem_graph.stores.base import EdgeWrite, NodeWrite, WriteBatch

BATCH = 1_000
TARGETS_S = {"retract": 2.0, "impact": 1.0}


def build_tree(mg: MemoryGraph, prefix: str, size: int, fanout: int) -> str:
    """A derivation tree of ``size`` memories, breadth-first, each node with ``fanout`` children;
    returns the root id."""
    ids = [f"{prefix}-t{i}" for i in range(size)]
    items = [
        {
            "id": mid,
            "content": f"tree note {i} of {prefix}",
            "agent": f"{prefix}-agent-{i % 16}",
            "scope": prefix,
            "derived_from": [ids[(i - 1) // fanout]] if i else [],
        }
        for i, mid in enumerate(ids)
    ]
    for start in range(0, size, BATCH):
        mg.remember_many(items[start : start + BATCH])
    return ids[0]


def build_readers(mg: MemoryGraph, prefix: str, readers: int) -> str:
    """One memory read by ``readers`` failing episodes, each writing a memory after reading."""
    target = mg.remember(f"widely read note of {prefix}", id=f"{prefix}-hot", scope=prefix).id
    t0 = datetime.now(UTC)
    episodes = [f"{prefix}-ep{i}" for i in range(readers)]
    batch = WriteBatch()
    for i, ep in enumerate(episodes):
        oid = f"{prefix}-out{i}"
        batch.nodes.append(NodeWrite(EPISODE, ep, on_create={"scope": prefix, "started_at": t0}))
        batch.nodes.append(NodeWrite(OUTCOME, oid, {"episode": ep, "success": False, "at": t0}))
        batch.edges.append(
            EdgeWrite("READ", ep, target, {"rank": 1, "score": 1.0, "query": "q", "at": t0}, "k")
        )
        batch.edges.append(EdgeWrite("RESULTED_IN", ep, oid))
    mg.store.apply(batch)
    written = [
        {
            "id": f"{prefix}-w{i}",
            "content": f"written after reading, {prefix} episode {i}",
            "episode": ep,
            "scope": prefix,
            "timestamp": t0 + timedelta(seconds=1),
        }
        for i, ep in enumerate(episodes)
    ]
    for start in range(0, readers, BATCH):
        mg.remember_many(written[start : start + BATCH])
    return target


def bench_retract(mg: MemoryGraph, root: str, size: int, runs: int) -> dict[str, float]:
    """Median seconds of a cascading retract of the whole tree, and of its restore."""
    retracts, restores = [], []
    for _ in range(runs):
        start = time.perf_counter()
        report = mg.retract(root, reason="bench", by="bench")
        retracts.append(time.perf_counter() - start)
        if len(report.retracted) != size:
            raise SystemExit(f"retract covered {len(report.retracted)} memories, not {size}")
        start = time.perf_counter()
        mg.restore(report.id)
        restores.append(time.perf_counter() - start)
    return {"retract": statistics.median(retracts), "restore": statistics.median(restores)}


def bench_impact(mg: MemoryGraph, target: str, readers: int, runs: int) -> dict[str, float]:
    """Median seconds of impact() on the widely read memory."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        impact = mg.impact(target)
        times.append(time.perf_counter() - start)
        if len(impact.episode_ids) != readers or len(impact.written_ids) != readers:
            raise SystemExit("impact missed some readers or what they wrote")
    return {"impact": statistics.median(times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", help="path, ':memory:' or bolt:// URI (default: a temp file)")
    parser.add_argument("--tree", type=int, default=10_000, help="memories in the tree")
    parser.add_argument("--fanout", type=int, default=4, help="children per tree node")
    parser.add_argument("--readers", type=int, default=1_000, help="episodes reading one memory")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        target = args.store or str(Path(tmp) / "bench.db")
        prefix = f"b{uuid.uuid4().hex[:8]}"
        with MemoryGraph.open(target, embedder=HashingEmbedder()) as mg:
            build = time.perf_counter()
            root = build_tree(mg, prefix, args.tree, args.fanout)
            hot = build_readers(mg, prefix, args.readers)
            print(f"store={mg.store.backend} built in {time.perf_counter() - build:.1f}s")
            results = bench_retract(mg, root, args.tree, args.runs)
            results |= bench_impact(mg, hot, args.readers, args.runs)

    missed = []
    for name, value in results.items():
        limit = TARGETS_S.get(name)
        verdict = "" if limit is None else (" ok" if value < limit else f" MISSED (<{limit}s)")
        if limit is not None and value >= limit:
            missed.append(name)
        print(f"{name:8s} median {value * 1000:8.1f} ms over {args.runs} runs{verdict}")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
