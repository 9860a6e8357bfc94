"""Concurrency: recall throughput and p95 with 8 client threads, and with 4 writers + 4 readers,
beside one client in the same run, on each store.

    python bench/bench_concurrency.py --size 10000                       # embedded store
    python bench/bench_concurrency.py --size 10000 --no-local \\
        --neo4j bolt://127.0.0.1:7687 --neo4j neo4j://127.0.0.1:7687      # Neo4j, both URI kinds

Every thread of a run shares one ``MemoryGraph`` (one store: on Neo4j one driver and its
connection pool, reused by all threads; reads in READ sessions, managed READ transactions on a
``neo4j://`` URI). Each phase runs ``--seconds``: ``1 client`` (one thread recalling), ``8
readers`` (eight threads recalling) and ``4 writers + 4 readers`` (four threads each writing
one memory per ``remember``, one transaction each, while four recall). Recall is the full
hybrid ``recall`` (k=10) with precomputed query vectors, as in ``bench_store.py``; written
memories get random vectors. The embedded store serialises every call on one lock (SQLite
connection and mirrors), so its threads share one core's worth of work; Neo4j runs queries
side by side on the server.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import Workload, ingest
from common import LookupEmbedder, median, pct
from results import emit

from amem_graph import MemoryGraph
from amem_graph.stores.neo4j.store import Neo4jStore


class WritingEmbedder(LookupEmbedder):
    """The workload's vectors for its texts; a random unit vector for a text written now."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


Rates = dict[str, tuple[float, float, float]]  # op -> (per second, p50 ms, p95 ms)


def phase(
    mg: MemoryGraph, w: Workload, readers: int, writers: int, seconds: float
) -> tuple[str, Rates]:
    """Run ``readers`` recalling and ``writers`` writing threads for ``seconds``; one line."""
    stop = threading.Event()
    lock = threading.Lock()
    lat: dict[str, list[float]] = {"recall": [], "write": []}
    errors: list[str] = []

    def reader(i: int) -> None:
        n = i * 7
        while not stop.is_set():
            t = time.perf_counter()
            try:
                mg.recall(w.qtexts[n % len(w.qtexts)], k=10, scope="default")
            except Exception as exc:  # counted and shown: none expected
                errors.append(type(exc).__name__)
                continue
            with lock:
                lat["recall"].append((time.perf_counter() - t) * 1000)
            n += 1

    def writer(i: int) -> None:
        n = 0
        while not stop.is_set():
            t = time.perf_counter()
            try:
                mg.remember(
                    f"writer {i} note {n} about {w.qtexts[n % len(w.qtexts)]}",
                    agent=f"writer-{i}",
                    task=f"task-{n % 50}",
                )
            except Exception as exc:
                errors.append(type(exc).__name__)
                continue
            with lock:
                lat["write"].append((time.perf_counter() - t) * 1000)
            n += 1

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    threads += [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    rates = {
        op: (len(values) / elapsed, median(values), pct(values, 95))
        for op, values in lat.items()
        if values
    }
    parts = [
        f"{op} {r:7.1f}/s p50 {p50:6.1f} ms p95 {p95:6.1f} ms"
        for op, (r, p50, p95) in rates.items()
    ]
    if errors:
        parts.append(f"errors { {e: errors.count(e) for e in set(errors)} }")
    return "  |  ".join(parts), rates


PHASES = (("1 client", 1, 0), ("8 readers", 8, 0), ("4 writers + 4 readers", 4, 4))


def run(label: str, mg: MemoryGraph, w: Workload, seconds: float) -> None:
    store = "embedded" if label == "local" else "neo4j"
    one: Rates = {}
    for name, readers, writers in PHASES:
        for j in range(10):  # warm up the pool and caches
            mg.recall(w.qtexts[j], k=10, scope="default")
        text, rates = phase(mg, w, readers, writers, seconds)
        print(f"{label:38} {name:22} {text}", flush=True)
        one = one or rates
        via = "" if store == "embedded" else f" over {label.split()[-1].split(':')[0]}://"
        for op, (rate, p50, p95) in rates.items():
            ratio = {"ratio": round(rate / one["recall"][0], 2)} if op == "recall" else {}
            emit(
                store,
                f"{name}{via}: {op} throughput, p50 / p95 ({len(w.rows) // 1000}k memories)",
                f"{rate:.1f}/s, {p50:.1f} / {p95:.1f} ms",
                baseline=f"1 client {one['recall'][0]:.1f} recalls/s" if op == "recall" else "",
                **ratio,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=15.0, help="per phase")
    parser.add_argument("--neo4j", action="append", default=[], help="a Neo4j URI (repeatable)")
    parser.add_argument("--no-local", action="store_true", help="skip the embedded store")
    parser.add_argument(
        "--blas-threads", default="1", help="the embedded store's blas_threads (\"none\": numpy's)"
    )
    args = parser.parse_args()
    blas_threads = None if args.blas_threads == "none" else int(args.blas_threads)
    w = Workload(args.size)
    texts = [str(r["content"]) for r in w.rows]
    embedder = WritingEmbedder(texts + w.qtexts, np.vstack([w.vectors, w.qvecs]))
    print(f"{args.size} memories, {args.seconds:g} s per phase, k=10", flush=True)
    if not args.no_local:
        with (
            tempfile.TemporaryDirectory() as tmp,
            MemoryGraph.open(f"{tmp}/bench.db", embedder=embedder, blas_threads=blas_threads) as mg,
        ):
            ingest(mg, w.rows)
            run("local", mg, w, args.seconds)
    loaded = False
    for uri in args.neo4j:
        store = Neo4jStore.connect(uri)
        if not loaded:  # the first URI loads; later ones reach the same server
            store.wipe()
        with MemoryGraph(store, embedder) as mg:
            if not loaded:
                ingest(mg, w.rows)
                loaded = True
            run(f"neo4j {uri}", mg, w, args.seconds)
    if loaded:
        store = Neo4jStore.connect(args.neo4j[0])
        store.wipe()
        store.close()


if __name__ == "__main__":
    main()
