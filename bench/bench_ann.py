"""ANN libraries for the embedded store, measured against exact numpy top-k in the same run.

Per library and size: build time, RSS the index adds, add/delete support and cost, save/load
time and file size, query p50/p95 at k=10 and at recall's vector depth, recall@10 against exact
(at each ``ef`` tried), and the exact numpy top-k time (the baseline) at the same size.
Vectors are 384-d, clustered like sentence embeddings (a shared offset, topics, subtopics);
``--real N`` adds a run on MiniLM vectors of N texts from the quality benchmarks' data.

    PYTHONPATH=. HF_HUB_OFFLINE=1 python bench/bench_ann.py --sizes 10000,100000 --libs all
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import pct
from results import emit

from amem_graph.core.config import RetrievalConfig
from amem_graph.recall.retriever import vector_depth
from amem_graph.stores.local.ann import ANN_THRESHOLD, fetch_for

DIMS = 384
#: recall's vector depth for k=10 (what a recall asks the vector path for)
DEPTH = vector_depth(RetrievalConfig(), 10)
EFS = (32, 64, 128, 256, 512)
CONNECTIVITY = 16
EF_BUILD = 128


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def clustered(n: int, seed: int = 0, dims: int = DIMS) -> np.ndarray:
    """Unit vectors shaped like sentence embeddings: a shared offset (embeddings are not
    centred), ~n/200 topics, 8 subtopics each, and per-text noise (neighbour cosines ~0.6)."""
    rng = np.random.default_rng(seed)
    offset = rng.standard_normal(dims).astype(np.float32) * 0.6 / np.sqrt(dims)
    topics = max(8, n // 200)
    t = rng.standard_normal((topics, dims)).astype(np.float32) / np.sqrt(dims)
    sub = t[:, None, :] + rng.standard_normal((topics, 8, dims)).astype(np.float32) * (
        0.6 / np.sqrt(dims)
    )
    sub = sub.reshape(-1, dims)
    out = np.empty((n, dims), dtype=np.float32)
    step = 100_000
    for start in range(0, n, step):
        m = min(step, n - start)
        pick = rng.integers(0, len(sub), size=m)
        noise = rng.standard_normal((m, dims)).astype(np.float32) * (0.9 / np.sqrt(dims))
        out[start : start + m] = offset + sub[pick] + noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def real_vectors(n: int) -> np.ndarray:
    """MiniLM vectors of up to n distinct texts from the quality benchmarks' conversations."""
    from amem_graph.embeddings.minilm import MiniLMEmbedder

    texts: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            if len(x) > 25 and not x[:4].isdigit():
                texts.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for path in sorted(Path("bench/quality/data").rglob("*.json")):
        walk(json.loads(path.read_text()))
    unique = list(dict.fromkeys(texts))[:n]
    emb = MiniLMEmbedder(batch_size=64, threads=2)
    return np.asarray(emb.embed_documents(unique), dtype=np.float32)


def exact_topk(x: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    """What the mirror does: one matvec over the store, argpartition, sort of the k."""
    scores = x @ q
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part])]


class Lib:
    """One library behind four calls: build, add, remove, query; save and load."""

    name = ""

    def build(self, x: np.ndarray, keys: np.ndarray) -> None: ...
    def add(self, x: np.ndarray, keys: np.ndarray) -> None: ...
    def remove(self, keys: np.ndarray) -> bool:
        return False

    def set_ef(self, ef: int) -> None: ...
    def query(self, q: np.ndarray, k: int) -> np.ndarray: ...
    def save(self, path: str) -> None: ...
    def load(self, path: str, n: int) -> None: ...


class USearch(Lib):
    def __init__(self, dtype: str = "f16") -> None:
        self.name = f"usearch-{dtype}"
        self.dtype = dtype

    def _new(self) -> Any:
        from usearch.index import Index

        return Index(
            ndim=DIMS,
            metric="ip",
            dtype=self.dtype,
            connectivity=CONNECTIVITY,
            expansion_add=EF_BUILD,
            expansion_search=64,
        )

    def build(self, x: np.ndarray, keys: np.ndarray) -> None:
        self.index = self._new()
        self.index.add(keys, x, threads=2)

    def add(self, x: np.ndarray, keys: np.ndarray) -> None:
        self.index.add(keys, x, threads=2)

    def remove(self, keys: np.ndarray) -> bool:
        self.index.remove(keys)
        return True

    def set_ef(self, ef: int) -> None:
        self.index.expansion_search = ef

    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        return np.asarray(self.index.search(q, k, threads=1).keys)

    def save(self, path: str) -> None:
        self.index.save(path)

    def load(self, path: str, n: int) -> None:
        ef = self.index.expansion_search
        self.index = self._new()
        self.index.load(path)
        self.index.expansion_search = ef


class Hnswlib(Lib):
    name = "hnswlib"

    def build(self, x: np.ndarray, keys: np.ndarray) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=DIMS)
        self.index.init_index(
            max_elements=len(x) + 2000, ef_construction=EF_BUILD, M=CONNECTIVITY,
            allow_replace_deleted=True,
        )  # fmt: skip
        self.index.set_num_threads(2)
        self.index.add_items(x, keys)

    def add(self, x: np.ndarray, keys: np.ndarray) -> None:
        self.index.add_items(x, keys, replace_deleted=True)

    def remove(self, keys: np.ndarray) -> bool:
        for key in keys.tolist():
            self.index.mark_deleted(key)
        return True

    def set_ef(self, ef: int) -> None:
        self.ef = ef
        self.index.set_ef(ef)

    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        labels, _ = self.index.knn_query(q, k=k, num_threads=1)
        return np.asarray(labels[0])

    def save(self, path: str) -> None:
        self.index.save_index(path)

    def load(self, path: str, n: int) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=DIMS)
        self.index.load_index(path, max_elements=n + 2000, allow_replace_deleted=True)
        self.index.set_ef(self.ef)


class Faiss(Lib):
    """faiss HNSW-flat behind an id map: add works, remove does not (HNSW cannot delete)."""

    name = "faiss-hnsw"

    def build(self, x: np.ndarray, keys: np.ndarray) -> None:
        import faiss

        faiss.omp_set_num_threads(2)
        hnsw = faiss.IndexHNSWFlat(DIMS, CONNECTIVITY, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = EF_BUILD
        self.index = faiss.IndexIDMap(hnsw)
        self.index.add_with_ids(x, keys.astype(np.int64))

    def add(self, x: np.ndarray, keys: np.ndarray) -> None:
        self.index.add_with_ids(x, keys.astype(np.int64))

    def remove(self, keys: np.ndarray) -> bool:
        try:
            self.index.remove_ids(keys.astype(np.int64))
        except RuntimeError:
            return False
        return True

    def set_ef(self, ef: int) -> None:
        import faiss

        self.ef = ef
        faiss.downcast_index(self.index.index).hnsw.efSearch = ef

    def query(self, q: np.ndarray, k: int) -> np.ndarray:
        import faiss

        faiss.omp_set_num_threads(1)
        _, ids = self.index.search(q[None, :], k)
        return np.asarray(ids[0])

    def save(self, path: str) -> None:
        import faiss

        faiss.write_index(self.index, path)

    def load(self, path: str, n: int) -> None:
        import faiss

        self.index = faiss.read_index(path)
        self.set_ef(self.ef)


LIBS: dict[str, Callable[[], Lib]] = {
    "usearch-f32": lambda: USearch("f32"),
    "usearch-f16": lambda: USearch("f16"),
    "usearch-i8": lambda: USearch("i8"),
    "hnswlib": Hnswlib,
    "faiss": Faiss,
}
MODULE = {"usearch": "usearch", "hnswlib": "hnswlib", "faiss": "faiss"}


def installed(name: str) -> bool:
    return importlib.util.find_spec(MODULE[name.split("-")[0]]) is not None


def recall(got: list[np.ndarray], truth: list[np.ndarray], k: int = 10) -> float:
    pairs = zip(got, truth, strict=True)
    hits = sum(len(set(g[:k].tolist()) & set(t[:k].tolist())) for g, t in pairs)
    return hits / (k * len(truth))


def rescored(lib: Lib, x: np.ndarray, q: np.ndarray, depth: int, k: int = 10) -> np.ndarray:
    """The store's way: ``depth`` candidates from the index, re-scored exactly, best k kept."""
    cand = lib.query(q, depth)
    cand = cand[cand >= 0]
    return cand[np.argsort(-(x[cand] @ q))][:k]


def run_lib(
    make: Callable[[], Lib], x: np.ndarray, queries: np.ndarray, truth: list[np.ndarray]
) -> dict[str, Any]:
    n = len(x)
    lib = make()
    gc.collect()
    before = rss_mb()
    t = time.perf_counter()
    lib.build(x[:-1000], np.arange(n - 1000, dtype=np.uint64))
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    lib.add(x[-1000:], np.arange(n - 1000, n, dtype=np.uint64))
    add_ms = (time.perf_counter() - t) * 1000 / 1000
    index_mb = rss_mb() - before
    row: dict[str, Any] = {
        "lib": lib.name, "n": n, "build_s": build_s * n / (n - 1000), "index_mb": index_mb,
        "add_ms_per_1k": add_ms * 1000,
    }  # fmt: skip
    # the store asks fetch_for(k) candidates and re-scores them exactly: ef is chosen by
    # that recall@10 (the raw index's recall@10 at k=10 is printed beside it)
    fetch = fetch_for(10, 1.0)
    efs: dict[int, tuple[float, float]] = {}
    for ef in EFS:
        lib.set_ef(ef)
        raw = recall([lib.query(q, 10) for q in queries], truth)
        efs[ef] = (raw, recall([rescored(lib, x, q, fetch) for q in queries], truth))
        if efs[ef][1] >= 0.995:
            break
    row["recall_by_ef"] = efs
    ef = next((e for e, r in efs.items() if r[1] >= 0.99), max(efs))
    lib.set_ef(ef)
    row["ef"] = ef
    row["recall10_raw"], row["recall10"] = efs[ef]
    for k in (10, DEPTH):
        ms = []
        for q in queries:
            t = time.perf_counter()
            lib.query(q, fetch_for(k, 1.0))
            ms.append((time.perf_counter() - t) * 1000)
        row[f"p50_k{k}"], row[f"p95_k{k}"] = pct(ms, 50), pct(ms, 95)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        path = os.path.join(tmp, "index.ann")
        t = time.perf_counter()
        lib.save(path)
        row["save_s"] = time.perf_counter() - t
        row["file_mb"] = os.path.getsize(path) / 2**20
        t = time.perf_counter()
        lib.load(path, n)
        row["load_s"] = time.perf_counter() - t
    assert recall([lib.query(q, 10) for q in queries[:20]], truth[:20]) >= efs[ef][0] - 0.05
    gone = np.arange(0, 1000, dtype=np.uint64)
    t = time.perf_counter()
    ok = lib.remove(gone)
    row["delete_ms_per_1k"] = (time.perf_counter() - t) * 1000 if ok else None
    if ok:
        leaked = sum(len(set(lib.query(q, 10).tolist()) & set(range(1000))) for q in queries)
        row["deleted_returned"] = leaked
    del lib
    gc.collect()
    return row


def bench_size(x: np.ndarray, libs: list[str], n_queries: int, seed: int) -> list[dict[str, Any]]:
    queries = x[np.random.default_rng(seed).choice(len(x), n_queries, replace=False)].copy()
    queries += np.random.default_rng(seed + 1).standard_normal(queries.shape).astype(np.float32) * (
        0.5 / np.sqrt(DIMS)
    )  # near a stored text, not one of them
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact_ms: dict[int, list[float]] = {10: [], DEPTH: []}
    one_ms: list[float] = []  # BLAS on one thread: spinning threads cost a lot on busy cores
    truth = []
    for q in queries:
        for k in exact_ms:
            t = time.perf_counter()
            top = exact_topk(x, q, k)
            exact_ms[k].append((time.perf_counter() - t) * 1000)
        with threadpool_limits(1):
            t = time.perf_counter()
            exact_topk(x, q, DEPTH)
            one_ms.append((time.perf_counter() - t) * 1000)
        truth.append(top[:10])
    base = {f"exact_p50_k{k}": pct(v, 50) for k, v in exact_ms.items()}
    base |= {f"exact_p95_k{k}": pct(v, 95) for k, v in exact_ms.items()}
    base |= {f"exact1t_p50_k{DEPTH}": pct(one_ms, 50), f"exact1t_p95_k{DEPTH}": pct(one_ms, 95)}
    rows = []
    for name in libs:
        row = run_lib(LIBS[name], x, queries, truth) | base
        print(json.dumps(row), flush=True)
        size = f"{len(x) // 1000}k"
        emit(
            "embedded",
            f"ANN {row['lib']} at {size}: query p50 / p95 at recall's depth (ef {row['ef']})",
            f"{row[f'p50_k{DEPTH}']:.2f} / {row[f'p95_k{DEPTH}']:.2f} ms, recall@10 "
            f"{row['recall10']:.3f}, build {row['build_s']:.1f} s, {row['index_mb']:.0f} MB",
            baseline=f"exact numpy top-k {base[f'exact_p50_k{DEPTH}']:.2f} / "
            f"{base[f'exact_p95_k{DEPTH}']:.2f} ms",
            ratio=round(row[f"p95_k{DEPTH}"] / base[f"exact_p95_k{DEPTH}"], 3),
            goal="recall@10 >= 0.99",
            met=row["recall10"] >= 0.99,
        )
        rows.append(row)
    return rows


def bench_store(n: int, n_queries: int) -> dict[str, Any]:
    """The integrated path: a LocalStore of n memories searched with the index (the default
    threshold) and exactly (``ann_threshold=None``), the index built, saved and loaded."""
    from amem_graph.core.models import Memory, content_hash
    from amem_graph.stores.base import MemoryFilter, WriteBatch
    from amem_graph.stores.local.store import LocalStore

    x = clustered(n, seed=5)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    forced = min(n, ANN_THRESHOLD)  # a small store too goes through the index
    row: dict[str, Any] = {"lib": "store", "n": n}
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        path = os.path.join(tmp, "store.db")
        store = LocalStore(path, ann_threshold=None)
        store.ensure_embedder("bench", DIMS)
        for start in range(0, n, 5000):
            batch = [
                Memory(id=f"m{i}", content=f"m{i}", created_at=t0, valid_from=t0,
                       content_hash=content_hash(f"m{i}"), embedding=x[i].tolist())
                for i in range(start, min(n, start + 5000))
            ]  # fmt: skip
            store.apply(WriteBatch(memories=batch))
        store.close()
        rng = np.random.default_rng(9)
        qs = x[rng.choice(n, n_queries, replace=False)]
        qs = qs + rng.standard_normal(qs.shape).astype(np.float32) * (0.5 / np.sqrt(DIMS))
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        flt = MemoryFilter()
        exact, ann = LocalStore(path, ann_threshold=None), LocalStore(path, ann_threshold=forced)
        t = time.perf_counter()
        ann.vector_search(qs[0].tolist(), 10, flt)
        row["first_search_build_s"] = time.perf_counter() - t
        for k in (10, DEPTH):
            for name, st in (("exact", exact), ("ann", ann)):
                ms, hits = [], []
                for q in qs:
                    t = time.perf_counter()
                    hits.append([h for h, _ in st.vector_search(q.tolist(), k, flt)])
                    ms.append((time.perf_counter() - t) * 1000)
                row[f"{name}_p50_k{k}"], row[f"{name}_p95_k{k}"] = pct(ms, 50), pct(ms, 95)
                if name == "exact":
                    truth = hits
            got = [np.asarray([int(h[1:]) for h in g]) for g in hits]
            ref = [np.asarray([int(h[1:]) for h in g]) for g in truth]
            row[f"store_recall@{k}"] = recall(got, ref, k)
        ann.close()
        t = time.perf_counter()
        again = LocalStore(path, ann_threshold=forced)
        again.vector_search(qs[0].tolist(), 10, flt)
        row["reopen_first_search_s"] = time.perf_counter() - t
        row["reopen_sync"] = again._ann.last_sync if again._ann else None
        files = Path(tmp).glob("store.db.ann*")  # <db>.ann and the data file it names
        row["ann_files_mb"] = sum(f.stat().st_size for f in files) / 2**20
        again.close()
        exact.close()
    print(json.dumps(row), flush=True)
    return row


def table(path: str) -> str:
    """Markdown rows of a ``--out`` file (library rows; store rows in a second table)."""
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    head = (
        "| data | n | library | build s | index MB (RSS) | file MB | save / load s "
        "| add ms/1k | delete ms/1k | ef | recall@10 raw / store | p50 / p95 ms k=10 "
        f"| p50 / p95 ms k={DEPTH} | exact p50 / p95 ms k={DEPTH} (1 BLAS thread) |\n"
        + "|---" * 14
        + "|\n"
    )
    out = []
    for r in rows:
        if r["lib"] == "store":
            continue
        dele = "no" if r.get("delete_ms_per_1k") is None else f"{r['delete_ms_per_1k']:.1f}"
        one = r.get(f"exact1t_p50_k{DEPTH}")
        ones = "" if one is None else f" ({one:.1f} / {r[f'exact1t_p95_k{DEPTH}']:.1f})"
        out.append(
            f"| {r['data']} | {r['n']:,} | {r['lib']} | {r['build_s']:.1f} "
            f"| {r['index_mb']:.0f} | {r['file_mb']:.0f} | {r['save_s']:.2f} / {r['load_s']:.2f} "
            f"| {r['add_ms_per_1k']:.0f} | {dele} | {r['ef']} "
            f"| {r.get('recall10_raw', r['recall10']):.4f} / "
            f"{r.get('recall10_rescored_depth', r['recall10']):.4f} "
            f"| {r['p50_k10']:.2f} / {r['p95_k10']:.2f} "
            f"| {r[f'p50_k{DEPTH}']:.2f} / {r[f'p95_k{DEPTH}']:.2f} "
            f"| {r[f'exact_p50_k{DEPTH}']:.1f} / {r[f'exact_p95_k{DEPTH}']:.1f}{ones} |"
        )
    return head + "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,250000,1000000")
    ap.add_argument("--libs", default="all", help="comma list of " + ", ".join(LIBS))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--real", type=int, default=0, help="also a run on N MiniLM vectors")
    ap.add_argument("--store", type=int, default=0, help="also the integrated store at N")
    ap.add_argument("--out", default="", help="append JSON rows to this file")
    ap.add_argument("--table", default="", help="print a --out file as a markdown table")
    args = ap.parse_args()
    if args.table:
        print(table(args.table))
        return
    wanted = list(LIBS) if args.libs == "all" else args.libs.split(",")
    libs = [name for name in wanted if installed(name)]
    for name in sorted(set(wanted) - set(libs)):
        print(f"# {name}: not installed, skipped")
    print(f"# load average {os.getloadavg()}, depth {DEPTH}, M {CONNECTIVITY}, ef_add {EF_BUILD}")
    rows: list[dict[str, Any]] = []
    if args.real:
        x = real_vectors(args.real)
        for row in bench_size(x, libs, min(args.queries, len(x) // 10), seed=3):
            rows.append(row | {"data": "minilm"})
    if args.store:
        rows.append(bench_store(args.store, args.queries) | {"data": "clustered"})
    for n in [int(s) for s in args.sizes.split(",") if s]:
        x = clustered(n)
        rows += [r | {"data": "clustered"} for r in bench_size(x, libs, args.queries, seed=n)]
        del x
        gc.collect()
    print(f"# load average {os.getloadavg()}")
    if args.out:
        with open(args.out, "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
