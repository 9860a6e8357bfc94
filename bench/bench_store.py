"""Ingest throughput and recall latency per store, each beside a baseline from the same run.

    python bench/bench_store.py --sizes 10000,100000                       # embedded store
    python bench/bench_store.py --sizes 10000 --neo4j bolt://127.0.0.1:7687 # and Neo4j

Ingest: memories/s through ``remember_many`` in batches of 500 with precomputed embeddings.
Recall: p50/p95 of the full hybrid ``recall`` (vector + BM25 + graph + priors, k=10) with the
query embedding precomputed (its MiniLM cost is reported on its own line). Baselines: plain
numpy exact top-k over the same vectors (embedded); a bare ``db.index.vector.queryNodes`` call
(Neo4j).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LookupEmbedder, corpus, items, median, pct, timed

from amem_graph import MemoryGraph
from amem_graph.stores.base import GraphStore

BATCH = 500
QUERIES = 100


def ingest(mg: MemoryGraph, rows: list[dict[str, object]]) -> float:
    """Memories per second through remember_many."""
    t = time.perf_counter()
    for start in range(0, len(rows), BATCH):
        mg.remember_many(rows[start : start + BATCH])
    return len(rows) / (time.perf_counter() - t)


def numpy_topk(vectors: np.ndarray, queries: np.ndarray, k: int) -> list[float]:
    """The floor: exact cosine top-k over an in-memory float32 matrix."""

    def one(q: np.ndarray) -> None:
        scores = vectors @ q
        top = np.argpartition(-scores, k)[:k]
        top[np.argsort(-scores[top])]

    it = iter(queries)
    return timed(lambda: one(next(it)), len(queries))


def neo4j_bare(store: GraphStore, queries: np.ndarray, k: int) -> list[float]:
    """The floor on Neo4j: one bare vector index call per query."""
    raw = store.raw_vector_query  # type: ignore[attr-defined]
    it = iter(queries)
    return timed(lambda: raw(next(it).tolist(), k), len(queries))


def recall_times(mg: MemoryGraph, qtexts: list[str], k: int) -> list[float]:
    it = iter(qtexts)
    return timed(lambda: mg.recall(next(it), k=k, scope="default"), len(qtexts))


def report(name: str, n: int, rate: float, rec: list[float], base: list[float], bname: str) -> None:
    ratio = pct(rec, 95) / pct(base, 95)
    print(
        f"{name:6} n={n:>7}  ingest {rate:8.0f} mem/s  recall p50 {median(rec):7.2f} ms "
        f"p95 {pct(rec, 95):7.2f} ms  | {bname} p50 {median(base):6.2f} ms p95 "
        f"{pct(base, 95):6.2f} ms  | p95 ratio {ratio:4.2f}x",
        flush=True,
    )


def minilm_query_ms() -> float | None:
    try:
        from amem_graph import MiniLMEmbedder

        emb = MiniLMEmbedder()
        emb.embed_query("warm up")
        return median(timed(lambda: emb.embed_query("which runner pool do deploys use"), 30))
    except Exception as exc:
        print(f"MiniLM query timing unavailable: {exc}")
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--neo4j", default=None, help="bolt URI; Neo4j is wiped first")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(1)
    print(f"batch={BATCH} queries={QUERIES} k={args.k} cpus={os.cpu_count()}")
    ms = minilm_query_ms()
    if ms is not None:
        print(f"MiniLM query embedding (excluded below): median {ms:.2f} ms")
    for n in sizes:
        texts, vectors = corpus(n)
        rows = items(texts)
        qidx = rng.integers(0, n, QUERIES)
        qtexts = [" ".join(texts[i].split()[2:5]) + f" q{j}" for j, i in enumerate(qidx)]
        qvecs = rng.standard_normal((QUERIES, vectors.shape[1])).astype(np.float32)
        qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
        embedder = LookupEmbedder(texts + qtexts, np.vstack([vectors, qvecs]))
        with tempfile.TemporaryDirectory() as tmp:
            with MemoryGraph.open(f"{tmp}/bench.db", embedder=embedder) as mg:
                rate = ingest(mg, rows)
                mg.recall(qtexts[0], k=args.k)  # build the mirrors once
                rec = recall_times(mg, qtexts, args.k)
            base = numpy_topk(vectors, qvecs, args.k)
            report("local", n, rate, rec, base, "numpy top-k")
        if args.neo4j:
            from amem_graph.stores.neo4j import Neo4jStore

            store = Neo4jStore.connect(args.neo4j)
            store.wipe()
            with MemoryGraph(store, embedder) as mg:
                rate = ingest(mg, rows)
                store.raw_vector_query(qvecs[0].tolist(), args.k)  # type: ignore[attr-defined]
                mg.recall(qtexts[0], k=args.k)
                rec = recall_times(mg, qtexts, args.k)
                base = neo4j_bare(store, qvecs, args.k)
                report("neo4j", n, rate, rec, base, "bare queryNodes")
                deep = neo4j_bare(store, qvecs, mg.config.retrieval.candidates)
                print(
                    f"{'':6} bare queryNodes at k={mg.config.retrieval.candidates} (the depth "
                    f"recall asks for): p50 {median(deep):6.2f} ms p95 {pct(deep, 95):6.2f} ms",
                    flush=True,
                )
                store.wipe()


if __name__ == "__main__":
    main()
