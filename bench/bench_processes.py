"""Recall on the embedded store from several processes at once, with a recall's vector scores
on one BLAS thread (``blas_threads=1``, the default) and on numpy's own setting (``None``).

    python bench/bench_processes.py --size 10000 --processes 1,2

Each process opens its own copy of one store (so SQLite's write lock, taken by the reads a
recall records, is not what is measured) and times ``--queries`` recalls after a warm-up, at
the same moment as the others. Settings alternate over ``--rounds``: one round runs every
process count with each setting in turn. Printed per setting and process count: recall p50 /
p95 over all processes' recalls, and the CPU time of a recall (``time.process_time``, every
thread of the process): a thread OpenBLAS left spinning after a product shows there.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import BATCH, WARMUP
from common import LookupEmbedder, corpus, items, median, pct
from results import emit

from amem_graph import MemoryGraph

SETTINGS = ("1", "none")
QUERY_SEED = 1


def workload(size: int, queries: int) -> tuple[list[str], LookupEmbedder]:
    """The store's texts and the queries' after them, with their vectors."""
    texts, vectors = corpus(size + queries + WARMUP)
    return texts, LookupEmbedder(texts, vectors)


def build(path: Path, size: int, queries: int) -> None:
    texts, embedder = workload(size, queries)
    rows = items(texts[:size])
    with MemoryGraph.open(path, embedder=embedder, blas_threads=None) as mg:
        for start in range(0, size, BATCH):
            mg.remember_many(rows[start : start + BATCH])


def worker(path: Path, size: int, queries: int, setting: str, start_at: float) -> None:
    """Time the recalls of one process and print them as one JSON line."""
    texts, embedder = workload(size, queries)
    threads = None if setting == "none" else int(setting)
    asked = texts[size:]
    with MemoryGraph.open(path, embedder=embedder, blas_threads=threads) as mg:
        for text in asked[:WARMUP]:
            mg.recall(text, k=10)
        time.sleep(max(0.0, start_at - time.time()))  # every process starts timing together
        wall, cpu = [], []
        for text in asked[WARMUP:]:
            w, c = time.perf_counter(), time.process_time()
            mg.recall(text, k=10)
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - w) * 1000)
    print(json.dumps({"wall": wall, "cpu": cpu}), flush=True)


def run(copies: list[Path], size: int, queries: int, setting: str) -> dict[str, list[float]]:
    """Every copy recalled by its own process at once; their timings together."""
    start_at = time.time() + 8.0  # time to import and warm up before the first timed recall
    args = ["--size", str(size), "--queries", str(queries), "--setting", setting]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", str(copy), *args, "--start-at", str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for copy in copies
    ]
    out: dict[str, list[float]] = {"wall": [], "cpu": []}
    for proc in procs:
        stdout, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"a worker failed (exit {proc.returncode})")
        times = json.loads(stdout.strip().splitlines()[-1])
        out["wall"] += times["wall"]
        out["cpu"] += times["cpu"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--processes", default="1,2", help="comma-separated process counts")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--setting", choices=SETTINGS, help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        worker(args.worker, args.size, args.queries, args.setting, args.start_at)
        return
    counts = [int(c) for c in args.processes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        first = Path(tmp) / "s0.db"
        build(first, args.size, args.queries)
        copies = [first] + [Path(tmp) / f"s{i}.db" for i in range(1, max(counts))]
        for copy in copies[1:]:
            shutil.copy(first, copy)
        results: dict[tuple[int, str], dict[str, list[float]]] = {}
        for _ in range(args.rounds):
            for n in counts:
                for setting in SETTINGS:
                    got = run(copies[:n], args.size, args.queries, setting)
                    into = results.setdefault((n, setting), {"wall": [], "cpu": []})
                    into["wall"] += got["wall"]
                    into["cpu"] += got["cpu"]
    print(f"size={args.size} queries={args.queries} per process, rounds={args.rounds}")
    for n in counts:
        for setting in SETTINGS:
            r = results[(n, setting)]
            print(
                f"{n} process(es), blas_threads={setting:4}: recall p50 {median(r['wall']):6.2f} "
                f"ms p95 {pct(r['wall'], 95):6.2f} ms, CPU a recall p50 {median(r['cpu']):6.2f} ms"
            )
        one, free = results[(n, "1")]["wall"], results[(n, "none")]["wall"]
        emit(
            "embedded",
            f"recall p50 / p95 at {args.size // 1000}k, {n} process(es) at once, "
            "blas_threads=1 (default) against None",
            f"{median(one):.1f} / {pct(one, 95):.1f} ms",
            baseline=f"{median(free):.1f} / {pct(free, 95):.1f} ms",
            ratio=round(pct(one, 95) / pct(free, 95), 2),
        )


if __name__ == "__main__":
    main()
