"""What episode context costs a write: ``remember_many`` and single remembers continuing
episodes, with ``episode_context`` 0 and the default, alternated in one process.

    python bench/bench_episode_context.py --n 5000                                 # embedded
    python bench/bench_episode_context.py --n 2000 --neo4j bolt://127.0.0.1:7699   # WIPES it

Each round and weight ingests the bench corpus (``common.items``: episodes of 25) through
``remember_many`` in batches of 500 into an empty store, then writes 200 more memories one at a
time into its first episodes, and prints both rates. The first Neo4j round pays the server's
plan compiles; read the later ones.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import BATCH
from common import LookupEmbedder, corpus, items

from amem_graph import MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import DEFAULT_EPISODE_CONTEXT
from amem_graph.stores.neo4j.store import Neo4jStore

SINGLES = 200


def one_run(n: int, weight: float, uri: str | None) -> tuple[float, float]:
    """(memories/s through remember_many, ms per single remember) on a fresh store."""
    texts, vectors = corpus(n + SINGLES)
    rows, extra = items(texts[:n]), texts[n:]
    embedder = LookupEmbedder(texts, vectors)
    config = MemoryGraphConfig(episode_context=weight)
    with tempfile.TemporaryDirectory() as tmp:
        if uri:
            store = Neo4jStore.connect(uri)
            store.wipe()
            store.close()
        with MemoryGraph.open(uri or f"{tmp}/s.db", embedder=embedder, config=config) as mg:
            t = time.perf_counter()
            for start in range(0, n, BATCH):
                mg.remember_many(rows[start : start + BATCH])
            rate = n / (time.perf_counter() - t)
            t = time.perf_counter()
            for i, row in enumerate(rows[:SINGLES]):
                mg.remember(**{**row, "id": f"x{i}", "content": extra[i]})  # type: ignore[arg-type]
            single = (time.perf_counter() - t) / SINGLES * 1000
    return rate, single


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--neo4j", default=None, help="a Neo4j URI (its database is wiped)")
    args = parser.parse_args()
    for r in range(args.rounds):
        for weight in (0.0, DEFAULT_EPISODE_CONTEXT):
            rate, single = one_run(args.n, weight, args.neo4j)
            print(
                f"round {r} episode_context={weight}: remember_many {rate:.0f} memories/s, "
                f"remember {single:.2f} ms a write",
                flush=True,
            )


if __name__ == "__main__":
    main()
