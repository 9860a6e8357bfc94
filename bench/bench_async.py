"""50 concurrent recalls through AsyncMemoryGraph against the same 50 one after another.

    python bench/bench_async.py                                  # embedded store (temp file)
    python bench/bench_async.py --neo4j bolt://127.0.0.1:7687    # and Neo4j
    python bench/bench_async.py --embedder minilm                # with the real query model

For each store it loads ``--size`` memories, then times, in ``--rounds`` alternating blocks
(each opened by one untimed pass), ``--queries`` recalls run sequentially with the sync
``MemoryGraph`` and the same recalls gathered at once on an ``AsyncMemoryGraph``. It prints
both wall times and their ratio (sequential / concurrent: above 1 is faster), the share of a
sequential recall's wall time spent on the client's CPU (the rest is waiting, which threads
can overlap given idle cores), and the event loop's worst lateness while the gathered recalls
ran, beside one sync recall called on the loop (what an ``async def`` tool that calls
``MemoryGraph.recall`` directly would block).

With ``--embedder lookup`` (the default) query vectors are precomputed, so the figures are
the store's; ``minilm`` adds the model's query embedding to every recall. Like
``bench_store.py``, it wipes the Neo4j database first and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LookupEmbedder, corpus, items

from amem_graph import MemoryGraph
from amem_graph.embeddings import resolve_embedder
from amem_graph.memory.async_graph import DEFAULT_WORKERS, AsyncMemoryGraph
from amem_graph.stores.neo4j import Neo4jStore

BATCH = 1_000


async def worst_lateness(work: Callable[[], Awaitable[object]]) -> float:
    """The worst lateness (ms) of a 1 ms ticker on this event loop while ``work`` runs."""
    worst = 0.0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal worst
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            worst = max(worst, (time.perf_counter() - t) * 1000.0 - 1.0)

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)  # the ticker is running before the work starts
    await work()
    stop.set()
    await tick
    return worst


def load(mg: MemoryGraph, texts: list[str], scope: str, prefix: str) -> None:
    rows = items(texts)
    for row in rows:
        row.update(id=f"{prefix}{row['id']}", scope=scope, episode=f"{prefix}{row['episode']}")
    for start in range(0, len(rows), BATCH):
        mg.remember_many(rows[start : start + BATCH])


async def gathered(amg: AsyncMemoryGraph, queries: list[str], k: int, scope: str) -> float:
    t = time.perf_counter()
    await asyncio.gather(*(amg.recall(q, k, scope) for q in queries))
    return (time.perf_counter() - t) * 1000.0


def sequential(mg: MemoryGraph, queries: list[str], k: int, scope: str) -> tuple[float, float]:
    """(wall ms, this thread's CPU ms) of the recalls one after another."""
    t, cpu = time.perf_counter(), time.thread_time()
    for q in queries:
        mg.recall(q, k, scope)
    return (time.perf_counter() - t) * 1000.0, (time.thread_time() - cpu) * 1000.0


async def lag(amg: AsyncMemoryGraph, queries: list[str], k: int, scope: str) -> tuple[float, float]:
    """(worst loop lateness during the gathered recalls, during one sync recall on the loop)."""
    offloaded = await worst_lateness(lambda: gathered(amg, queries, k, scope))

    async def blocking() -> object:
        return amg.sync.recall(queries[0], k, scope)

    return offloaded, await worst_lateness(blocking)


def bench(name: str, mg: MemoryGraph, args: argparse.Namespace, texts: list[str]) -> None:
    prefix = f"ba{uuid.uuid4().hex[:8]}-"
    scope = f"{prefix}bench"
    t = time.perf_counter()
    load(mg, texts, scope, prefix)
    print(f"[{name}] loaded {len(texts)} memories in {time.perf_counter() - t:.1f} s", flush=True)
    queries = texts[: args.queries] if args.embedder == "lookup" else [
        " ".join(text.split()[2:8]) for text in texts[: args.queries]
    ]  # fmt: skip
    amg = AsyncMemoryGraph(mg, workers=args.workers)

    async def rounds() -> tuple[list[float], list[float], list[float], tuple[float, float]]:
        seq, cpu, conc = [], [], []
        sequential(mg, queries, args.k, scope)
        await gathered(amg, queries, args.k, scope)
        for _ in range(args.rounds):
            wall, used = await asyncio.to_thread(sequential, mg, queries, args.k, scope)
            seq.append(wall)
            cpu.append(used)
            conc.append(await gathered(amg, queries, args.k, scope))
        return seq, cpu, conc, await lag(amg, queries, args.k, scope)

    seq, cpu, conc, (offloaded, blocked) = asyncio.run(rounds())
    busy = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    s, c = statistics.median(seq), statistics.median(conc)
    print(
        f"[{name}] {args.queries} recalls (k={args.k}, {args.workers} workers, "
        f"embedder {args.embedder}): sequential {s:.0f} ms, concurrent {c:.0f} ms, "
        f"ratio {s / c:.2f}x  (rounds: seq {', '.join(f'{v:.0f}' for v in seq)}; "
        f"conc {', '.join(f'{v:.0f}' for v in conc)}; load average {busy})"
    )
    share = statistics.median(cpu) / s
    print(
        f"[{name}] a sequential recall spends {100 * share:.0f}% of its wall time on this "
        f"process' CPU, the rest waiting (server, locks, other processes): the bound on what "
        f"overlap can win with idle cores is about {1 / share:.1f}x"
    )
    print(
        f"[{name}] event loop worst lateness: {offloaded:.1f} ms while the {args.queries} "
        f"recalls ran in the pool; {blocked:.1f} ms for one sync recall called on the loop"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=5_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument("--embedder", choices=["lookup", "minilm"], default="lookup")
    parser.add_argument("--neo4j", default=None, help="bolt URI; also times Neo4j")
    parser.add_argument("--no-local", action="store_true", help="skip the embedded store")
    args = parser.parse_args()
    texts, vectors = corpus(args.size, seed=11)

    def embedder() -> object:
        return LookupEmbedder(texts, vectors) if args.embedder == "lookup" else "minilm"

    if not args.no_local:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.db")
            with MemoryGraph.open(path, embedder=resolve_embedder(embedder())) as mg:
                bench("local", mg, args, texts)
    if args.neo4j:
        store = Neo4jStore.connect(args.neo4j)
        store.wipe()
        with MemoryGraph(store, resolve_embedder(embedder())) as mg:
            bench("neo4j", mg, args, texts)
            store.wipe()


if __name__ == "__main__":
    main()
