"""50 concurrent recalls through AsyncMemoryGraph against the same 50 one after another.

    python bench/bench_async.py                                  # embedded store (temp file)
    python bench/bench_async.py --neo4j bolt://127.0.0.1:7687    # and Neo4j
    python bench/bench_async.py --neo4j URI --server-pid PID --workers 4,8,16
    python bench/bench_async.py --embedder minilm                # with the real query model

For each store it loads ``--size`` memories, then runs ``--rounds`` rounds (after one untimed
pass); in each round, for every pool size in ``--workers`` (default ``DEFAULT_WORKERS``),
``--queries`` recalls run one after another on the sync ``MemoryGraph``, then the same
recalls gathered at once on an ``AsyncMemoryGraph`` with that pool. It prints per store and
pool size: both median wall times and the ratio (the median of each round's sequential /
concurrent, so a change of the machine's load between rounds cancels; above 1 is faster),
a sequential recall's client CPU (and with ``--server-pid``, the Neo4j JVM's CPU per recall,
from /proc), and the event loop's lateness (a 1 ms ticker, p50 / p99 / max) while the
recalls are gathered and, as the baseline, idle for as long; then the lateness during one
sync recall called on the loop (what an ``async def`` tool that calls ``MemoryGraph.recall``
directly would block).

With ``--embedder lookup`` (the default) query vectors are precomputed, so the figures are
the store's; ``minilm`` adds the model's query embedding to every recall. Like
``bench_store.py``, it wipes the Neo4j database first and after.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LookupEmbedder, corpus, items
from results import emit

from amem_graph import MemoryGraph
from amem_graph.embeddings import resolve_embedder
from amem_graph.memory.async_graph import DEFAULT_WORKERS, AsyncMemoryGraph
from amem_graph.stores.neo4j import Neo4jStore

BATCH = 1_000


@dataclass(frozen=True, slots=True)
class Lateness:
    """How late a 1 ms ticker on the event loop woke (ms), over one stretch of work."""

    p50: float
    p99: float
    max: float

    def __str__(self) -> str:
        return f"p50 {self.p50:.1f} / p99 {self.p99:.1f} / max {self.max:.1f} ms"


async def lateness(work: Callable[[], Awaitable[object]]) -> Lateness:
    """A 1 ms ticker's lateness on this event loop while ``work`` runs."""
    late: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            late.append(max(0.0, (time.perf_counter() - t) * 1000.0 - 1.0))

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)  # the ticker is running before the work starts
    late.clear()
    await work()
    stop.set()
    await tick
    late = sorted(late or [0.0])
    return Lateness(statistics.median(late), late[int(0.99 * (len(late) - 1))], late[-1])


def load(mg: MemoryGraph, texts: list[str], scope: str, prefix: str) -> None:
    rows = items(texts)
    for row in rows:
        row.update(id=f"{prefix}{row['id']}", scope=scope, episode=f"{prefix}{row['episode']}")
    for start in range(0, len(rows), BATCH):
        mg.remember_many(rows[start : start + BATCH])


def server_cpu(pid: int | None) -> float:
    """The CPU seconds the server process ``pid`` has used (Linux /proc); 0 without a pid."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def gathered(amg: AsyncMemoryGraph, queries: list[str], k: int, scope: str) -> float:
    t = time.perf_counter()
    await asyncio.gather(*(amg.recall(q, k, scope) for q in queries))
    return (time.perf_counter() - t) * 1000.0


def sequential(
    mg: MemoryGraph, queries: list[str], k: int, scope: str, pid: int | None
) -> tuple[float, float, float]:
    """(wall ms, this thread's CPU ms, the server's CPU ms) of the recalls one after another."""
    t, cpu, srv = time.perf_counter(), time.thread_time(), server_cpu(pid)
    for q in queries:
        mg.recall(q, k, scope)
    return (
        (time.perf_counter() - t) * 1000.0,
        (time.thread_time() - cpu) * 1000.0,
        (server_cpu(pid) - srv) * 1000.0,
    )


@dataclass(slots=True)
class Run:
    """One pool size's figures over the rounds, and the loop's lateness."""

    workers: int
    seq: list[float] = field(default_factory=list)
    conc: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    server: list[float] = field(default_factory=list)
    busy: Lateness = Lateness(0.0, 0.0, 0.0)
    idle: Lateness = Lateness(0.0, 0.0, 0.0)

    def ratio(self) -> float:
        """The median of each round's sequential / concurrent: each pair ran back to back,
        so a change in the machine's load between rounds cancels out."""
        return statistics.median(s / c for s, c in zip(self.seq, self.conc, strict=True))


async def measure(
    mg: MemoryGraph,
    sizes: list[int],
    queries: list[str],
    args: argparse.Namespace,
    scope: str,
    pid: int | None,
) -> tuple[list[Run], Lateness]:
    """``--rounds`` rounds; in each, for every pool size, the recalls one after another then
    the same recalls gathered. Then the loop's lateness per pool size, while the recalls are
    gathered and idle for as long, and during one sync recall called on the loop (what an
    ``async def`` tool calling ``MemoryGraph.recall`` directly would block)."""
    graphs = {n: AsyncMemoryGraph(mg, workers=n) for n in sizes}
    runs = {n: Run(n) for n in sizes}
    k, n_q = args.k, len(queries)
    sequential(mg, queries, k, scope, None)
    for amg in graphs.values():
        await gathered(amg, queries, k, scope)
    for _ in range(args.rounds):
        for n, amg in graphs.items():
            wall, used, server = await asyncio.to_thread(sequential, mg, queries, k, scope, pid)
            run = runs[n]
            run.seq.append(wall)
            run.cpu.append(used / n_q)
            run.server.append(server / n_q)
            run.conc.append(await gathered(amg, queries, k, scope))
    for n, amg in graphs.items():
        run = runs[n]
        run.busy = await lateness(functools.partial(gathered, amg, queries, k, scope))
        run.idle = await lateness(functools.partial(asyncio.sleep, min(run.conc) / 1000.0))

    async def blocking() -> object:
        return mg.recall(queries[0], k, scope)

    return list(runs.values()), await lateness(blocking)


def report(name: str, run: Run, args: argparse.Namespace, pid: int | None) -> None:
    s, c = statistics.median(run.seq), statistics.median(run.conc)
    busy = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    cpu, srv = statistics.median(run.cpu), statistics.median(run.server)
    server = f", server CPU {srv:.1f} ms" if pid else ""
    print(
        f"[{name}] {args.queries} recalls (k={args.k}, pool of {run.workers} threads, "
        f"embedder {args.embedder}): sequential {s:.0f} ms, concurrent {c:.0f} ms, "
        f"ratio {run.ratio():.2f}x  (rounds: seq {', '.join(f'{v:.0f}' for v in run.seq)}; "
        f"conc {', '.join(f'{v:.0f}' for v in run.conc)}; load average {busy})"
    )
    print(
        f"[{name}]   per sequential recall: wall {s / args.queries:.1f} ms, client CPU "
        f"{cpu:.1f} ms{server}; loop lateness: concurrent {run.busy}, idle {run.idle}",
        flush=True,
    )
    emit(
        "embedded" if name == "local" else "neo4j",
        f"{args.queries} gathered recalls, AsyncMemoryGraph pool of {run.workers} "
        f"({args.size:,} memories); loop lateness p50 / max",
        f"{c:.0f} ms; {run.busy.p50:.1f} / {run.busy.max:.1f} ms",
        baseline=f"{args.queries} sequential {s:.0f} ms; idle loop {run.idle.max:.1f} ms max",
        ratio=round(run.ratio(), 2),
        goal="> 1x",
        met=run.ratio() > 1.0,
    )


def bench(name: str, mg: MemoryGraph, args: argparse.Namespace, texts: list[str]) -> None:
    prefix = f"ba{uuid.uuid4().hex[:8]}-"
    scope = f"{prefix}bench"
    t = time.perf_counter()
    load(mg, texts, scope, prefix)
    print(f"[{name}] loaded {len(texts)} memories in {time.perf_counter() - t:.1f} s", flush=True)
    queries = texts[: args.queries] if args.embedder == "lookup" else [
        " ".join(text.split()[2:8]) for text in texts[: args.queries]
    ]  # fmt: skip
    sizes = args.workers or [DEFAULT_WORKERS]
    pid = args.server_pid if name == "neo4j" else None
    runs, blocked = asyncio.run(measure(mg, sizes, queries, args, scope, pid))
    for run in runs:
        report(name, run, args, pid)
    print(f"[{name}] loop lateness during one sync recall called on the loop: {blocked}")


def workers_list(text: str) -> list[int]:
    sizes = [int(part) for part in text.split(",")]
    if any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError("pool sizes are >= 1")
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=5_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--workers",
        type=workers_list,
        default=None,
        help="pool sizes to time, e.g. 2,4,8 (default: the size AsyncMemoryGraph picks)",
    )
    parser.add_argument(
        "--server-pid", type=int, default=None, help="the Neo4j JVM's pid: its CPU per recall"
    )
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
