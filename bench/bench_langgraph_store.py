"""AmemStore at 10k items: what a search under a namespace prefix and a listing cost.

    python bench/bench_langgraph_store.py [--n 10000] [--namespaces 100] [--neo4j bolt://...]

Puts ``--n`` items over ``--namespaces`` namespaces ``("users", "u<i>")`` in batches of 1,000
(notes off, hashing embedder: the figures are the store's and the namespace resolution's),
then prints the median time of: resolving the scopes under a prefix, a search with a query under one
namespace and under the shared prefix, and ``list_namespaces``. The scopes under a prefix
come from a cache keyed by the store's count of sources (``langgraph_store.py``); before it,
each search read every item source (10k nodes) and ``list_namespaces`` every item memory.
Measured in one session on a loaded 2-core machine (load average 7-12), before -> after:
a search under one namespace 263 -> 54 ms embedded, 852 -> 23 ms Neo4j; under the shared
prefix 330 -> 121 ms and 889 -> 48 ms; ``list_namespaces`` 1.84 -> 0.24 s and 4.70 -> 0.19 s.
``list_namespaces`` then read the store once per namespace; it now reads one memory per scope
in one read (``GraphStore.one_per_scope``). 2026-12-06, load ~1, 10k items, embedded / Neo4j
2026.08.1: 100 namespaces 17.2 -> 2.5 ms and 104 -> 5.2 ms; 2,000 namespaces 74 -> 9.1 ms and
1,999 -> 22 ms.
Like ``bench_store.py``, it wipes the Neo4j database first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import closing

from langgraph.store.base import PutOp

from amem_graph import HashingEmbedder, MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.integrations.langgraph_store import AmemStore
from amem_graph.stores.factory import open_store


def timed(fn: Callable[[], object], n: int = 5) -> float:
    """Median ms of ``n`` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000.0)
    return statistics.median(times)


def bench(name: str, target: str, n: int, spaces: int = 100) -> None:
    if target.startswith("bolt"):
        with closing(open_store(target)) as store:
            getattr(store, "wipe")()  # noqa: B009 - only server stores have it
    config = MemoryGraphConfig(notes=NotesConfig(enabled=False))
    with MemoryGraph.open(target, embedder=HashingEmbedder(), config=config) as mg:
        store = AmemStore(mg, agent="bench")
        t = time.perf_counter()
        for start in range(0, n, 1_000):
            store.batch(
                [
                    PutOp(("users", f"u{i % spaces}"), f"k{i}", {"text": f"fact {i} on {i % 37}"})
                    for i in range(start, min(n, start + 1_000))
                ]
            )
        print(
            f"[{name}] put {n} items in {spaces} namespaces in {time.perf_counter() - t:.1f} s",
            flush=True,
        )
        one, shared = ("users", "u7"), ("users",)
        rows = [
            ("scopes under ('users', 'u7')", lambda: store._scopes_under(one)),
            ("search ('users', 'u7'), a query", lambda: store.search(one, query="fact on 5")),
            ("search ('users',), a query", lambda: store.search(shared, query="fact on 5")),
            ("list_namespaces", lambda: store.list_namespaces(prefix=shared, limit=spaces)),
        ]
        for label, fn in rows:
            print(f"[{name}] {label:<34} {timed(fn):8.1f} ms", flush=True)
    if target.startswith("bolt"):
        with closing(open_store(target)) as store:
            getattr(store, "wipe")()  # noqa: B009


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--namespaces", type=int, default=100, help="items spread over these")
    parser.add_argument("--neo4j", help="also measure this Neo4j (it is wiped)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bench("local", os.path.join(folder, "lg.db"), args.n, args.namespaces)
    if args.neo4j:
        bench("neo4j", args.neo4j, args.n, args.namespaces)


if __name__ == "__main__":
    main()
