"""Recall's Neo4j statement alone over the sync driver in threads against the driver's async API.

    python bench/bench_async_driver.py --neo4j bolt://127.0.0.1:7687

The design check behind ``AsyncMemoryGraph``'s thread pool (issue 14): it records the
statements 50 recalls send (``--size`` memories loaded first), then, in ``--rounds`` rounds,
runs them one after another on the sync driver, on ``--workers`` threads, and with
``neo4j.AsyncGraphDatabase`` at most ``--workers`` in flight; each fetches every row (the
driver's decoding, none of ours). It prints the medians, each round's ratio to the
sequential run (median), and the event loop's lateness while each concurrent form runs.
Like ``bench_store.py``, it wipes the Neo4j database first and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import neo4j

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_async import lateness, load
from common import LookupEmbedder, corpus

from amem_graph import MemoryGraph
from amem_graph.embeddings import resolve_embedder
from amem_graph.stores.neo4j import Neo4jStore

Statement = tuple[str, dict[str, Any]]
SCOPE = "bench-driver"


def recorded(mg: MemoryGraph, queries: list[str]) -> list[Statement]:
    """The statements the recalls of ``queries`` send, with their parameters."""
    seen: list[Statement] = []
    run = neo4j.Session.run

    def spy(self: neo4j.Session, query: Any, parameters: Any = None, **kw: Any) -> Any:
        seen.append((str(query), dict(parameters or {})))
        return run(self, query, parameters, **kw)

    neo4j.Session.run = spy  # type: ignore[method-assign]
    try:
        for q in queries:
            mg.recall(q, 10, SCOPE)
    finally:
        neo4j.Session.run = run  # type: ignore[method-assign]
    return seen[: len(queries)]


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000.0


async def compare(uri: str, auth: tuple[str, str], calls: list[Statement], args: Any) -> None:
    options: dict[str, Any] = {"auth": auth, "notifications_min_severity": "OFF"}
    sync = neo4j.GraphDatabase.driver(uri, **options)
    adrv = neo4j.AsyncGraphDatabase.driver(uri, **options)
    pool = ThreadPoolExecutor(args.workers)
    gate = asyncio.Semaphore(args.workers)

    def one(call: Statement) -> object:
        with sync.session(default_access_mode=neo4j.READ_ACCESS) as s:
            return s.run(call[0], call[1]).data()

    async def aone(call: Statement) -> object:
        async with gate, adrv.session(default_access_mode=neo4j.READ_ACCESS) as s:
            result = await s.run(call[0], call[1])
            return await result.data()

    async def threads() -> float:
        loop = asyncio.get_running_loop()
        t = time.perf_counter()
        await asyncio.gather(*(loop.run_in_executor(pool, one, c) for c in calls))
        return (time.perf_counter() - t) * 1000.0

    async def native() -> float:
        t = time.perf_counter()
        await asyncio.gather(*(aone(c) for c in calls))
        return (time.perf_counter() - t) * 1000.0

    def sequential() -> float:
        return timed(lambda: [one(c) for c in calls])

    seq, thr, nat = [], [], []
    sequential(), await threads(), await native()
    for _ in range(args.rounds):
        seq.append(await asyncio.to_thread(sequential))
        thr.append(await threads())
        nat.append(await native())
    med = statistics.median

    def ratio(other: list[float]) -> float:
        return med(s / o for s, o in zip(seq, other, strict=True))

    busy = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(
        f"{len(calls)} recall statements: sequential {med(seq):.0f} ms; {args.workers} threads "
        f"{med(thr):.0f} ms ({ratio(thr):.2f}x); async driver, {args.workers} in flight "
        f"{med(nat):.0f} ms ({ratio(nat):.2f}x)  (load average {busy})"
    )
    print(f"loop lateness: threads {await lateness(threads)}; async {await lateness(native)}")
    pool.shutdown()
    await adrv.close()
    sync.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neo4j", required=True, help="bolt URI (its database is wiped)")
    parser.add_argument("--size", type=int, default=5_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    texts, vectors = corpus(args.size, seed=11)
    store = Neo4jStore.connect(args.neo4j)
    store.wipe()
    store.close()
    store = Neo4jStore.connect(args.neo4j)  # a wiped store records its embedder anew
    with MemoryGraph(store, resolve_embedder(LookupEmbedder(texts, vectors))) as mg:
        load(mg, texts, SCOPE, "")
        calls = recorded(mg, texts[: args.queries])
        secret = os.environ.get("NEO4J_PASSWORD") or parser.error("set NEO4J_PASSWORD")
        auth = (os.environ.get("NEO4J_USERNAME", "neo4j"), secret)
        asyncio.run(compare(args.neo4j, auth, calls, args))
        store.wipe()


if __name__ == "__main__":
    main()
