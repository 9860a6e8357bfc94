"""Ingest throughput and recall latency per store, each beside a baseline from the same run.

    python bench/bench_store.py --sizes 10000,100000                       # embedded store
    python bench/bench_store.py --sizes 10000 --neo4j bolt://127.0.0.1:7687 # and Neo4j
    python bench/bench_store.py --sizes 100000 --neo4j URI --keep            # leave it loaded
    python bench/bench_store.py --sizes 100000 --neo4j URI --reuse --no-local  # settled index
    python bench/bench_store.py --sizes 100000 --neo4j URI --reuse --no-local --breakdown

Right after a bulk load Neo4j's vector index is many small Lucene segments, which makes every
vector query (recall's and the baseline's) slower; the segments are merged at the next
checkpoint (every 15 minutes, and at shutdown). ``--keep`` leaves the data in place and
``--reuse`` measures it again without re-ingesting (say after `scripts/neo4j-local restart`),
so both states can be reported.

Ingest: memories/s through ``remember_many`` in batches of 500 with precomputed embeddings.
Recall: p50/p95 of the full hybrid ``recall`` (vector + BM25 + graph + priors, k=10) with the
query embedding precomputed (its MiniLM cost is reported on its own line). Baselines: plain
numpy exact top-k over the same vectors (embedded); a bare ``db.index.vector.queryNodes`` call
(Neo4j), at k=10 and at the depth recall asks the vector index for. Beside them, the two
searches recall is made of, bare: numpy's top-k then the store's BM25 search (embedded), the
vector index call then the full-text one (Neo4j), each at recall's depths.
``--breakdown`` also times recall without the graph, without BM25, and dense only, to show
what each part costs; ``--versus name=value,...`` times recall with those overrides (say the
defaults before a change) in the same alternating blocks, so the two can be compared.

Both sides are warmed up first, then timed in alternating blocks of ``BLOCK`` queries, so a
noisy spell on the machine hits recall and its baseline alike. Each block opens with one
untimed call: timed query by query, the call right after a recall runs slower (on Neo4j a bare
k=10 call measured p50 3.2 ms after a recall against 2.65 ms after another bare call, in the
same run), which understated the ratio by about a fifth on a quiet machine.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LookupEmbedder, clock, corpus, holds, items, median, pct, timed
from results import emit, within

from amem_graph import MemoryGraph
from amem_graph.recall.retriever import vector_depth
from amem_graph.stores.base import GraphStore
from amem_graph.stores.neo4j.search import FIRST_FETCH
from amem_graph.stores.neo4j.store import Neo4jStore

BATCH = 500
QUERIES = 100
WARMUP = 20
#: queries per side before switching; each block opens with one untimed call
BLOCK = 20


def ingest(mg: MemoryGraph, rows: list[dict[str, object]]) -> float:
    """Memories per second through remember_many."""
    t = time.perf_counter()
    for start in range(0, len(rows), BATCH):
        mg.remember_many(rows[start : start + BATCH])
    return len(rows) / (time.perf_counter() - t)


#: one timed call of a side of the comparison, for query number i
Side = Callable[[int], object]
#: ``--breakdown``: recall with parts switched off, to show what each part costs
VARIANTS: dict[str, dict[str, float]] = {
    "no graph": {"graph_weight": 0.0},
    "no BM25": {"text_weight": 0.0},
    "dense only": {"graph_weight": 0.0, "text_weight": 0.0},
}


def numpy_topk(vectors: np.ndarray, qvecs: np.ndarray, k: int) -> Side:
    """The floor: exact cosine top-k over an in-memory float32 matrix."""

    def one(i: int) -> None:
        scores = vectors @ qvecs[i]
        top = np.argpartition(-scores, k)[:k]
        top[np.argsort(-scores[top])]

    return one


def embedded_searches(mg: MemoryGraph, w: Workload, k_vector: int, k_text: int) -> Side:
    """The two searches an embedded recall is made of, bare: numpy's exact top-k at recall's
    vector depth, then the store's own BM25 search at its text depth in recall's scope (the
    embedded twin of ``neo4j_floor``; recall's vector search is the same product)."""
    vector = numpy_topk(w.vectors, w.qvecs, k_vector)
    flt = mg.memory_filter("default")

    def one(i: int) -> None:
        vector(i)
        mg.store.text_search(w.qtexts[i], k_text, flt)

    return one


def neo4j_bare(store: GraphStore, qvecs: np.ndarray, k: int) -> Side:
    """One bare vector index call per query."""
    raw = store.raw_vector_query  # type: ignore[attr-defined]
    return lambda i: raw(qvecs[i].tolist(), k)


def neo4j_floor(
    store: GraphStore, qvecs: np.ndarray, qtexts: list[str], k_vector: int, k_text: int
) -> Side:
    """The floor on Neo4j: the bare calls recall is made of, at its depths: a vector index
    call then a full-text one (recall runs both at once, so this is an upper bound)."""
    vector = store.raw_vector_query  # type: ignore[attr-defined]
    text = store.raw_text_query  # type: ignore[attr-defined]

    def one(i: int) -> None:
        vector(qvecs[i].tolist(), k_vector)
        text(qtexts[i], k_text)

    return one


def neo4j_depths(mg: MemoryGraph, k: int) -> tuple[int, int]:
    """(vector, full-text) depths a Neo4j recall of k asks its two indexes for."""
    depth = math.ceil(vector_depth(mg.config.retrieval, k) * FIRST_FETCH)
    return depth, math.ceil(max(mg.config.retrieval.candidates, k) * FIRST_FETCH)


def recaller(mg: MemoryGraph, qtexts: list[str], k: int, **options: Any) -> Side:
    """The full hybrid recall (query vectors come precomputed from the lookup embedder)."""
    return lambda i: mg.recall(qtexts[i], k=k, scope="default", **options)


def alternate(sides: list[Side], n: int) -> list[list[float]]:
    """Milliseconds of each side on queries 0..n-1, after a warm-up of each (on its first
    queries, at most ``WARMUP``: a run of fewer queries has no others), timed in alternating
    blocks that each open with one untimed call."""
    warm = min(WARMUP, n)
    for j in range(warm):
        for side in sides:
            side(j)
    times: list[list[float]] = [[] for _ in sides]
    for start in range(0, n, BLOCK):
        opener = (start // BLOCK) % warm  # a warm-up query: nothing new gets cached
        for out, side in zip(times, sides, strict=True):
            side(opener)
            out.extend(clock(side, i) for i in range(start, min(start + BLOCK, n)))
    return times


def ratios(rec: list[float], base: list[float]) -> str:
    """Recall over its baseline at p95 (the goal's figure) and at p50 (the steadier one)."""
    return (
        f"p95 ratio {pct(rec, 95) / pct(base, 95):4.2f}x (p50 {median(rec) / median(base):4.2f}x)"
    )


def report(
    name: str, n: int, rate: float | None, rec: list[float], base: list[float], bname: str
) -> None:
    ingested = "reused (no ingest)" if rate is None else f"ingest {rate:8.0f} mem/s"
    print(
        f"{name:6} n={n:>7}  {ingested}  recall p50 {median(rec):7.2f} ms "
        f"p95 {pct(rec, 95):7.2f} ms  | {bname} p50 {median(base):6.2f} ms p95 "
        f"{pct(base, 95):6.2f} ms  | {ratios(rec, base)}",
        flush=True,
    )


def emit_recall(store: str, n: int, rec: list[float], base: list[float], bname: str) -> None:
    """The recall figure against one baseline; held to 1.5x when it is recall's own floor."""
    floor = "floor" in bname
    emit(
        store,
        f"recall p50 / p95 at {n // 1000}k, against {bname}",
        f"{median(rec):.1f} / {pct(rec, 95):.1f} ms",
        baseline=f"{median(base):.1f} / {pct(base, 95):.1f} ms",
        **(
            within(pct(rec, 95) / pct(base, 95), 1.5)
            if floor
            else {"ratio": round(pct(rec, 95) / pct(base, 95), 2)}
        ),
    )


def report_variants(
    variants: dict[str, dict[str, float]], times: list[list[float]], base: list[float]
) -> None:
    """One line per ``--breakdown`` variant, beside the same baseline as the full recall."""
    for (name, options), rec in zip(variants.items(), times, strict=True):
        print(
            f"{'':6} recall {name} ({options}): p50 {median(rec):6.2f} ms p95 "
            f"{pct(rec, 95):6.2f} ms  | {ratios(rec, base)}",
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


class Workload:
    """One size's corpus, remember_many rows and queries (the same for every store)."""

    def __init__(self, n: int, queries: int = QUERIES) -> None:
        rng = np.random.default_rng(n)
        texts, self.vectors = corpus(n)
        self.n = n
        self.rows = items(texts)
        qidx = rng.integers(0, n, queries)
        self.qtexts = [" ".join(texts[i].split()[2:5]) + f" q{j}" for j, i in enumerate(qidx)]
        qvecs = rng.standard_normal((queries, self.vectors.shape[1])).astype(np.float32)
        self.qvecs = qvecs / np.linalg.norm(qvecs, axis=1, keepdims=True)
        self.embedder = LookupEmbedder(texts + self.qtexts, np.vstack([self.vectors, self.qvecs]))


def overrides(spec: str) -> dict[str, float]:
    """``name=value,...`` -> recall overrides (numbers)."""
    out = {}
    for pair in filter(None, spec.split(",")):
        name, _, value = pair.partition("=")
        out[name.strip()] = float(value)
    return out


def bench_local(w: Workload, k: int, breakdown: bool, versus: str = "") -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        MemoryGraph.open(f"{tmp}/bench.db", embedder=w.embedder) as mg,
    ):
        rate = ingest(mg, w.rows)
        depth = vector_depth(mg.config.retrieval, k)
        variants = dict(VARIANTS) if breakdown else {}
        if versus:
            variants["versus"] = overrides(versus)
        sides = [recaller(mg, w.qtexts, k, **o) for o in variants.values()]
        floors = [numpy_topk(w.vectors, w.qvecs, n) for n in (k, depth)]
        k_text = max(mg.config.retrieval.candidates, k)
        both = embedded_searches(mg, w, depth, k_text)
        *parts, rec, base, deep, searches = alternate(
            [*sides, recaller(mg, w.qtexts, k), *floors, both], len(w.qtexts)
        )
    report("local", w.n, rate, rec, base, "numpy top-k")
    emit("embedded", f"ingest through remember_many at {w.n // 1000}k", f"{rate:.0f} memories/s")
    emit_recall("embedded", w.n, rec, base, f"numpy top-k k={k}")
    emit_recall("embedded", w.n, rec, deep, f"numpy top-k k={depth} (recall's floor)")
    both_name = f"numpy top-k k={depth} + the store's BM25 top {k_text}"
    emit_recall("embedded", w.n, rec, searches, both_name)
    for name, floor, goal in (
        (f"numpy exact top-k at k={depth} (recall's vector depth", deep, "; goal p95 ratio <= 1.5"),
        (f"{both_name} (the two searches recall is made of", searches, ""),
    ):
        print(
            f"{'':6} {name}{goal}): p50 {median(floor):6.2f} ms p95 {pct(floor, 95):6.2f} ms  "
            f"| {ratios(rec, floor)}",
            flush=True,
        )
    report_variants(variants, parts, base)


def count_calls(store: GraphStore, name: str) -> list[int]:
    """Count calls of one of the store's methods from now on (a one-element counter)."""
    method, calls = getattr(store, name), [0]

    def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return method(*args, **kwargs)

    setattr(store, name, counted)
    return calls


def bench_neo4j(w: Workload, k: int, uri: str, keep: bool, reuse: bool, breakdown: bool) -> None:
    store = Neo4jStore.connect(uri)
    reused = reuse and holds(store, w.rows)
    if not reused:
        store.wipe()
    with MemoryGraph(store, w.embedder) as mg:
        rate = None if reused else ingest(mg, w.rows)
        depth, text_depth = neo4j_depths(mg, k)
        # recall's search and first hop are one query unless the server's seeds were wrong
        redone = count_calls(store, "neighbourhood")
        expanded = count_calls(store, "search_expand")
        variants = VARIANTS if breakdown else {}
        sides = [recaller(mg, w.qtexts, k, **o) for o in variants.values()]
        bare = [neo4j_bare(store, w.qvecs, n) for n in (k, depth)]
        floor = neo4j_floor(store, w.qvecs, w.qtexts, depth, text_depth)
        *parts, rec, base, deep, both = alternate(
            [*sides, recaller(mg, w.qtexts, k), *bare, floor], len(w.qtexts)
        )
        report("neo4j", w.n, rate, rec, base, "bare queryNodes")
        if rate is not None:
            emit(
                "neo4j", f"ingest through remember_many at {w.n // 1000}k", f"{rate:.0f} memories/s"
            )
        emit_recall("neo4j", w.n, rec, base, f"bare queryNodes k={k}")
        emit_recall(
            "neo4j",
            w.n,
            rec,
            both,
            f"queryNodes k={depth} + fulltext {text_depth} (recall's floor)",
        )
        print(
            f"{'':6} bare queryNodes at k={depth} (the depth recall asks the vector "
            f"index for): p50 {median(deep):6.2f} ms p95 {pct(deep, 95):6.2f} ms  | "
            f"{ratios(rec, deep)}  | first hop redone "
            f"{redone[0]} of {expanded[0]} recalls",
            flush=True,
        )
        print(
            f"{'':6} bare queryNodes k={depth} + bare fulltext limit {text_depth} (recall's "
            f"floor; goal p95 ratio <= 1.5): p50 {median(both):6.2f} ms p95 {pct(both, 95):6.2f} "
            f"ms  | {ratios(rec, both)}",
            flush=True,
        )
        report_variants(variants, parts, base)
        if not keep:
            store.wipe()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument(
        "--neo4j", default=None, help="bolt URI; Neo4j is wiped first (unless --reuse applies)"
    )
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--queries", type=int, default=QUERIES, help="timed queries (more: a steadier p95)"
    )
    parser.add_argument("--keep", action="store_true", help="leave the Neo4j data loaded")
    parser.add_argument(
        "--reuse", action="store_true", help="measure Neo4j data a --keep run left (no ingest)"
    )
    parser.add_argument("--no-local", action="store_true", help="skip the embedded store")
    parser.add_argument(
        "--versus", default="", help="embedded store: also recall with these overrides (a=1,b=2)"
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also time recall without the graph, without BM25, and dense only",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"batch={BATCH} queries={args.queries} k={args.k} cpus={os.cpu_count()}")
    ms = minilm_query_ms()
    if ms is not None:
        print(f"MiniLM query embedding (excluded below): median {ms:.2f} ms")
    # every embedded size first, so the server's after-work (merges, GC) cannot slow them
    for n in sizes:
        if not args.no_local:
            bench_local(Workload(n, args.queries), args.k, args.breakdown, args.versus)
    if args.neo4j:
        for n in sizes:
            bench_neo4j(
                Workload(n, args.queries),
                args.k,
                args.neo4j,
                args.keep,
                args.reuse,
                args.breakdown,
            )


if __name__ == "__main__":
    main()
