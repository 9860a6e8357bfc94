"""What a foreign commit costs the next read on the embedded store: catching the mirror up from
the change log against rebuilding it whole (what every foreign commit did before), same run.

    python bench/bench_refresh.py --sizes 10000,100000

A reader connection holds its mirror; another connection (as another process would) commits a
batch of ``--batch`` memories (each with an episode edge) and then updates the confidence
counts of ``--batch`` others; the reader's next ``vector_search`` is timed (it catches up
first). The baseline is ``_build_mirror()`` on the same reader, timed in alternation.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import BATCH, Workload
from common import median, pct
from results import emit

from amem_graph import MemoryGraph
from amem_graph.stores.base import MemoryFilter, MemoryUpdate, WriteBatch
from amem_graph.stores.local.store import LocalStore


def bench(n: int, batch: int, rounds: int) -> None:
    w = Workload(n, queries=rounds * batch + 10)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/refresh.db"
        writer = MemoryGraph(LocalStore(path), w.embedder)
        for start in range(0, n, BATCH):
            writer.remember_many(w.rows[start : start + BATCH])
        reader = LocalStore(path)
        q = w.qvecs[0].tolist()
        reader.vector_search(q, 10, MemoryFilter())
        catch_up, rebuild = [], []
        for r in range(rounds):
            texts = w.qtexts[r * batch : (r + 1) * batch]
            writer.remember_many(
                [{"content": t, "episode": f"refresh-{r}", "agent": "writer"} for t in texts]
            )
            writer.store.apply(
                WriteBatch(
                    memory_updates=[
                        MemoryUpdate(f"m{(r * batch + j) % n}", increments={"successes": 1.0})
                        for j in range(batch)
                    ]
                )
            )
            t = time.perf_counter()
            reader.vector_search(q, 10, MemoryFilter())
            catch_up.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            with reader._lock:
                reader._build_mirror()
            rebuild.append((time.perf_counter() - t) * 1000)
        writer.close()
        reader.close()
    print(
        f"{n:>7} memories, {batch} written + {batch} updated per foreign commit pair: next read "
        f"catching up p50 {median(catch_up):7.1f} ms p95 {pct(catch_up, 95):7.1f} ms | "
        f"whole rebuild p50 {median(rebuild):7.1f} ms p95 {pct(rebuild, 95):7.1f} ms | "
        f"ratio p50 {median(rebuild) / median(catch_up):5.0f}x",
        flush=True,
    )
    emit(
        "embedded",
        f"next read after another process's commit, {n // 1000}k memories (p50 / p95)",
        f"{median(catch_up):.1f} / {pct(catch_up, 95):.1f} ms",
        baseline=f"whole mirror rebuild {median(rebuild):.1f} / {pct(rebuild, 95):.1f} ms",
        ratio=round(median(catch_up) / median(rebuild), 3),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    for n in (int(s) for s in args.sizes.split(",")):
        bench(n, args.batch, args.rounds)


if __name__ == "__main__":
    main()
