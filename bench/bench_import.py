"""Bulk import against ingest, same rows, same run (issue 19, part 2's ingest goals).

    python bench/bench_import.py                  # embedded store, 10,000 memories
    python bench/bench_import.py --n 100000 --neo4j bolt://127.0.0.1:7687   # also Neo4j (wiped)

Three routes over the same rows of ``bench_million`` (precomputed vectors, 100 scopes, episodes
of 25): ``ingest(bulk=True)`` as the baseline, then ``import_memories`` with notes and without.
Each prints memories/s and its ratio to the baseline measured in this run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_million import BenchEmbedder, big_corpus, row, write_rows

from amem_graph import MemoryGraph
from amem_graph.stores.neo4j import Neo4jStore

#: how each route of ``bench_million.ROUTES`` is printed
NAMES = {
    "bulk": "ingest(bulk=True)",
    "import": "import_memories(notes=True)",
    "import-no-notes": "import_memories(notes=False)",
}


def routes(
    n: int, batch: int, open_graph: Callable[[BenchEmbedder], MemoryGraph]
) -> dict[str, float]:
    """memories/s of each route, each on a fresh (or wiped) store."""
    texts, vectors = big_corpus(n)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [row(i, text, 100, t0) for i, text in enumerate(texts)]
    out: dict[str, float] = {}
    for route in ("bulk", "import", "import-no-notes"):
        with open_graph(BenchEmbedder(texts, vectors)) as mg:
            t = time.perf_counter()
            for start in range(0, n, batch):
                write_rows(mg, rows[start : start + batch], vectors[start : start + batch], route)
            out[route] = n / (time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--neo4j", default=None, help="a bolt:// URI (wiped first)")
    args = parser.parse_args()

    def embedded(embedder: BenchEmbedder) -> MemoryGraph:
        return MemoryGraph.open(f"{tempfile.mkdtemp()}/import.db", embedder=embedder)

    def neo4j(embedder: BenchEmbedder) -> MemoryGraph:
        store = Neo4jStore.connect(args.neo4j)
        store.wipe()
        return MemoryGraph(store, embedder)

    targets: list[tuple[str, Callable[[BenchEmbedder], MemoryGraph]]] = [("embedded", embedded)]
    if args.neo4j:
        targets.append(("neo4j", neo4j))
    for label, opener in targets:
        rates = routes(args.n, args.batch, opener)
        base = rates["bulk"]
        for route, rate in rates.items():
            name = NAMES[route]
            print(f"{label}: {name:<30} {rate:8.0f} memories/s  {rate / base:5.2f}x baseline")


if __name__ == "__main__":
    main()
