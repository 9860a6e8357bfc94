"""A million memories through the public API (issue 19, part 2), on any store.

    python bench/bench_million.py                       # embedded store, 1,000,000 memories
    python bench/bench_million.py --n 100000            # smaller
    python bench/bench_million.py --n 100000 --bulk     # ingest(..., bulk=True): no note links
    python bench/bench_million.py --route import        # import_memories: columns, notes, no links
    python bench/bench_million.py --route import-no-notes   # import_memories(notes=False)
    python bench/bench_million.py --neo4j bolt://127.0.0.1:7687   # the same on Neo4j (wiped)

The store is a parameter (``Target``): the embedded store at a temporary path, or a Neo4j URI
(``Neo4jTarget``: its hooks are the wipe, the size on disk and the child's open). Everything
else goes through ``MemoryGraph`` and so is the same for both.

What is reported, in this order:

* ingest: memories/s through ``--route`` (``ingest``, ``ingest(bulk=True)`` or
  ``import_memories`` with or without notes) in batches of ``--batch`` with precomputed vectors
  (``BenchEmbedder``: the model is not what is timed), over ``--scopes`` scopes (default 100),
  each scope with its own agents, tasks and episodes of 25 consecutive memories;
* size on disk (the SQLite file and its WAL, the saved BM25 index apart; Neo4j: the server's
  store files if ``--neo4j-data`` names the data directory);
* a cold reopen in a fresh process with the default embedder (MiniLM): open time, model load,
  the first recall (the embedded store builds its mirror there) and RSS after it (``VmRSS`` and
  the peak ``VmHWM``); the embedded store twice: the first open after an import builds its
  BM25 index from the text and saves it beside the file, the second reads it back;
* recall p50/p95, k=10, scoped (one scope) and unscoped (every scope), each beside numpy exact
  top-k over the same vectors at recall's own vector depth and at k=10, timed in alternating
  blocks in the same run (goal: p95 ratio <= 1.5 at recall's depth);
* trace of a leaf and impact of the root of a 10k derivation tree, then retract of the root with
  cascade (10k memories) and its restore.

The vectors are random unit vectors (the recall timings do not depend on their meaning); the
texts follow Zipf's law over 20k words (``bench/common.py``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_retract import build_tree
from bench_store import Side, alternate, neo4j_depths, neo4j_floor, numpy_topk, ratios
from common import EPISODE, clock, median, pct, vocabulary
from results import emit, within

from amem_graph import MemoryGraph, MemoryGraphConfig
from amem_graph.embeddings import MiniLMEmbedder
from amem_graph.recall.retriever import vector_depth

DIMS = 384
K = 10
TREE = 10_000


class BenchEmbedder:
    """Precomputed vectors by text, under the default embedder's name so the store can be
    reopened with the real model; a text it does not know gets a vector seeded by its hash."""

    name = MiniLMEmbedder.name
    dims = DIMS

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self._by_text = {t: i for i, t in enumerate(texts)}
        self._vectors = vectors

    def _one(self, text: str) -> np.ndarray:
        i = self._by_text.get(text)
        if i is not None:
            return self._vectors[i]  # type: ignore[no-any-return]
        rng = np.random.default_rng(zlib.crc32(text.encode()))
        vec = rng.standard_normal(self.dims).astype(np.float32)
        return vec / np.linalg.norm(vec)  # type: ignore[no-any-return]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return np.stack([self._one(t) for t in texts]).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text).tolist()  # type: ignore[no-any-return]


def big_corpus(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """``common.corpus`` drawn in one call (the per-text draw takes minutes at 1M)."""
    rng = np.random.default_rng(seed)
    words = np.asarray(vocabulary(20_000, rng))
    probs = 1.0 / np.arange(1, len(words) + 1) ** 1.05
    probs /= probs.sum()
    drawn = words[rng.choice(len(words), size=(n, 14), p=probs)]
    texts = [f"note {i}: " + " ".join(row) for i, row in enumerate(drawn.tolist())]
    vectors = rng.standard_normal((n, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, vectors


def row(i: int, text: str, scopes: int, t0: datetime) -> dict[str, object]:
    """One ingest item: episode ``i // 25``; its scope, agent and task follow from it."""
    g = i // EPISODE
    return {
        "content": text,
        "id": f"m{i}",
        "scope": f"scope-{g % scopes}",
        "agent": f"agent-{g % (scopes * 8)}",
        "task": f"task-{g % (scopes * 50)}",
        "episode": f"episode-{g}",
        "timestamp": t0 + timedelta(seconds=30 * i),
    }


# -- the store under test ---------------------------------------------------------------------


class Target(Protocol):
    """Where the memories go: how to open it, measure it, and hand it to a child process."""

    label: str
    #: what ``MemoryGraph.open`` takes (a path or a URI)
    address: str

    def prepare(self) -> None:
        """Empty the store before the ingest."""

    def size_bytes(self) -> int | None:
        """Bytes on disk, if known."""

    def cleanup(self) -> None:
        """Leave nothing behind (unless asked to keep it)."""


@dataclass
class LocalTarget:
    address: str
    label: str = "embedded"

    def prepare(self) -> None:
        for suffix in ("", "-wal", "-shm", ".bm25", ".ann"):
            Path(self.address + suffix).unlink(missing_ok=True)
        for data in glob.glob(glob.escape(self.address) + ".ann.*"):  # the ANN graph's files
            Path(data).unlink(missing_ok=True)

    def size_bytes(self) -> int | None:
        return sum(
            Path(self.address + s).stat().st_size
            for s in ("", "-wal")
            if Path(self.address + s).exists()
        )

    def cleanup(self) -> None:
        self.prepare()


@dataclass
class Neo4jTarget:
    """Hook points for the Neo4j run: the database is wiped first; the size is the data
    directory's (``--neo4j-data``), which only a server on this machine has."""

    address: str
    data_dir: str | None = None
    label: str = "neo4j"

    def prepare(self) -> None:
        from amem_graph.stores.neo4j.store import Neo4jStore

        store = Neo4jStore.connect(self.address)
        try:
            store.wipe()
        finally:
            store.close()

    def size_bytes(self) -> int | None:
        if self.data_dir is None:
            return None
        return sum(p.stat().st_size for p in Path(self.data_dir).rglob("*") if p.is_file())

    def cleanup(self) -> None:
        """Kept: a later run (or a person) may want to look at it."""


# -- measurements ------------------------------------------------------------------------------


#: ingest routes: ``ingest`` (default), ``ingest(bulk=True)``, ``import_memories`` (notes on/off)
ROUTES = ("default", "bulk", "import", "import-no-notes")


def write_rows(
    mg: MemoryGraph, rows: list[dict[str, object]], vectors: np.ndarray, route: str
) -> None:
    """``rows`` (with their precomputed ``vectors``) through one of ``ROUTES``."""
    if route in ("default", "bulk"):
        mg.ingest(rows, **({"bulk": True} if route == "bulk" else {}))
        return
    mg.import_memories(
        [str(r["content"]) for r in rows],
        vectors=vectors,
        ids=[str(r["id"]) for r in rows],
        scope=[str(r["scope"]) for r in rows],
        agent=[str(r["agent"]) for r in rows],
        task=[str(r["task"]) for r in rows],
        episode=[str(r["episode"]) for r in rows],
        timestamps=[r["timestamp"] for r in rows],  # type: ignore[misc]
        notes=route == "import",
    )


def ingest(
    mg: MemoryGraph, rows: list[dict[str, object]], vectors: np.ndarray, batch: int, route: str
) -> float:
    """Memories per second through ``route``, printing progress every 10% of the rows."""
    t = time.perf_counter()
    step = max(len(rows) // 10, batch)
    for start in range(0, len(rows), batch):
        write_rows(mg, rows[start : start + batch], vectors[start : start + batch], route)
        done = start + batch
        if done % step < batch:
            rate = done / (time.perf_counter() - t)
            print(f"  ingested {min(done, len(rows)):>8}  {rate:8.0f} mem/s", flush=True)
    return len(rows) / (time.perf_counter() - t)


def child_open(address: str, query: str, scope: str) -> None:
    """In a fresh process: open with the default embedder, load the model, one recall; print
    the timings and RSS as one JSON line."""
    t = time.perf_counter()
    mg = MemoryGraph.open(address)
    opened = time.perf_counter() - t
    t = time.perf_counter()
    mg.embedder.embed_query("warm up the model")
    model = time.perf_counter() - t
    t = time.perf_counter()
    mg.recall(query, k=K, scope=scope)
    first = time.perf_counter() - t
    t = time.perf_counter()
    mg.recall(query + " again", k=K, scope=scope)
    second = time.perf_counter() - t
    status = Path("/proc/self/status").read_text()
    mem = {
        line.split(":")[0]: int(line.split()[1]) / 1024
        for line in status.splitlines()
        if line.startswith(("VmRSS", "VmHWM"))
    }
    mg.close()
    print(
        json.dumps(
            {"open_s": opened, "model_s": model, "first_recall_s": first, "second_recall_s": second}
            | {"rss_mb": mem["VmRSS"], "peak_mb": mem["VmHWM"]}
        )
    )


def cold_reopen(target: Target, query: str, scope: str) -> dict[str, float]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child-open",
            target.address,
            *("--query", query, "--scope", scope),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def line(name: str, rec: list[float], base: list[float], bname: str) -> str:
    return (
        f"  {name:9} recall p50 {median(rec):7.2f} p95 {pct(rec, 95):7.2f} ms | {bname:24} "
        f"p50 {median(base):7.2f} p95 {pct(base, 95):7.2f} ms | {ratios(rec, base)}"
    )


def bench_recall(
    mg: MemoryGraph,
    vectors: np.ndarray,
    rows: list[dict[str, object]],
    scopes: int,
    queries: int,
    store: str = "embedded",
) -> None:
    rng = np.random.default_rng(1)
    qidx = rng.integers(0, len(rows), queries)
    qtexts = [" ".join(str(rows[i]["content"]).split()[2:5]) + f" q{j}" for j, i in enumerate(qidx)]
    qvecs = np.stack([np.asarray(mg.embedder.embed_query(q), dtype=np.float32) for q in qtexts])
    depth = vector_depth(mg.config.retrieval, K)
    every = [f"scope-{s}" for s in range(scopes)]
    scope_of = np.asarray([int(str(r["scope"]).split("-")[1]) for r in rows])
    one_scope = "scope-0"
    scoped_vectors = np.ascontiguousarray(vectors[scope_of == 0])
    # the unscoped bound's floor: an exact top-k at recall's depth (embedded); on Neo4j the bare
    # calls recall is made of, at its depths (bench_store's floor)
    floor_name = f"numpy top-k k={depth}"
    floor = numpy_topk(vectors, qvecs, depth)
    if store == "neo4j":
        v_depth, t_depth = neo4j_depths(mg, K)
        floor_name = f"queryNodes k={v_depth} + fulltext {t_depth}"
        floor = neo4j_floor(mg.store, qvecs, qtexts, v_depth, t_depth)
    sides: list[Side] = [
        lambda i: mg.recall(qtexts[i], k=K, scope=one_scope),
        numpy_topk(scoped_vectors, qvecs, min(depth, len(scoped_vectors) - 1)),
        numpy_topk(scoped_vectors, qvecs, min(K, len(scoped_vectors) - 1)),
        lambda i: mg.recall(qtexts[i], k=K, scope=every),
        floor,
        numpy_topk(vectors, qvecs, K),
    ]
    s_rec, s_deep, s_k, u_rec, u_deep, u_k = alternate(sides, queries)
    print(f"recall k={K}, {queries} queries, vector depth {depth}:")
    print(line(f"scoped ({len(scoped_vectors)})", s_rec, s_deep, f"numpy top-k k={depth}"))
    print(line("", s_rec, s_k, f"numpy top-k k={K}"))
    print(line(f"unscoped ({len(vectors)})", u_rec, u_deep, floor_name))
    print(line("", u_rec, u_k, f"numpy top-k k={K}"), flush=True)
    size = f"{len(vectors) // 1000}k"
    for name, rec, base, bname, bound in (
        (
            f"scoped recall at {size} (a scope of {len(scoped_vectors)})",
            s_rec,
            s_deep,
            f"numpy top-k k={depth}",
            None,
        ),
        (f"unscoped recall at {size}", u_rec, u_deep, floor_name, 1.5),
    ):
        ratio = pct(rec, 95) / pct(base, 95)
        emit(
            store,
            f"{name}, p50 / p95 (million bench)",
            f"{median(rec):.1f} / {pct(rec, 95):.1f} ms",
            baseline=f"{bname}: {median(base):.2f} / {pct(base, 95):.2f} ms",
            **(within(ratio, bound) if bound else {"ratio": round(ratio, 2)}),
        )


def bench_provenance(mg: MemoryGraph, store: str = "embedded") -> None:
    t = time.perf_counter()
    root = build_tree(mg, "tree", TREE, fanout=10)
    built = time.perf_counter() - t
    leaf = f"tree-t{TREE - 1}"
    trace_ms = clock(mg.trace, leaf)
    impact_ms = clock(mg.impact, root)
    t = time.perf_counter()
    report = mg.retract(root, reason="bench: a 10k cascade")
    retract_s = time.perf_counter() - t
    t = time.perf_counter()
    mg.restore(report.id, reason="bench: undo")
    restore_s = time.perf_counter() - t
    print(
        f"provenance: tree of {TREE} built in {built:.1f} s | trace of a leaf {trace_ms:.1f} ms | "
        f"impact of the root {impact_ms:.1f} ms | retract with cascade {retract_s:.2f} s "
        f"({len(report.retracted)} memories) | restore {restore_s:.2f} s",
        flush=True,
    )
    emit(
        store,
        f"provenance at {mg.store.counts().get('Memory', 0) // 1000}k: trace, impact, "
        f"retract + restore of a {TREE // 1000}k cascade",
        f"{trace_ms:.0f} ms, {impact_ms:.0f} ms, {retract_s:.1f} s + {restore_s:.1f} s",
    )


def run(target: Target, args: argparse.Namespace) -> None:
    print(
        f"== {target.label}: n={args.n} scopes={args.scopes} batch={args.batch} route={args.route}"
    )
    print(f"load average at start: {os.getloadavg()}", flush=True)
    t = time.perf_counter()
    texts, vectors = big_corpus(args.n)
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    rows = [row(i, text, args.scopes, t0) for i, text in enumerate(texts)]
    print(f"corpus generated in {time.perf_counter() - t:.1f} s", flush=True)
    embedder = BenchEmbedder(texts, vectors)
    size = target.size_bytes()
    shown = "unknown" if size is None else f"{size / 2**20:.0f} MB ({size / args.n:.0f} B/memory)"
    if args.reuse:
        print(f"reusing the store as it is (no ingest) | size on disk {shown}", flush=True)
        measure(target, args, embedder, texts, vectors, rows)
        return
    target.prepare()
    lead_in = {} if args.lead_in is None else {"episode_lead_in": args.lead_in}
    config = MemoryGraphConfig(**lead_in)
    mg = MemoryGraph.open(target.address, embedder=embedder, config=config)
    rate = ingest(mg, rows, vectors, args.batch, args.route)
    t = time.perf_counter()
    mg.close()  # the embedded store saves its BM25 index here (``<db>.bm25``)
    closed = time.perf_counter() - t
    size = target.size_bytes()
    shown = "unknown" if size is None else f"{size / 2**20:.0f} MB ({size / args.n:.0f} B/memory)"
    index = Path(target.address + ".bm25")
    saved = f" | BM25 index file {index.stat().st_size / 2**20:.0f} MB" if index.exists() else ""
    print(
        f"ingest {rate:.0f} mem/s | size on disk {shown}{saved} | close {closed:.1f} s", flush=True
    )
    route = {
        "default": "default route",
        "bulk": "bulk=True",
        "import": "import_memories",
        "import-no-notes": "import_memories, notes=False",
    }[args.route]
    goal = 5_000 if target.label == "neo4j" else 10_000
    emit(
        target.label,
        f"ingest at {args.n // 1000}k ({route}), size on disk",
        f"{rate:.0f} memories/s, {shown}",
        goal=f">= {goal} memories/s",
        met=rate >= goal,
    )
    measure(target, args, embedder, texts, vectors, rows)


def measure(
    target: Target,
    args: argparse.Namespace,
    embedder: BenchEmbedder,
    texts: list[str],
    vectors: np.ndarray,
    rows: list[dict[str, object]],
) -> None:
    """Everything after the ingest: cold reopen, recall, provenance."""
    query = " ".join(texts[0].split()[2:5])
    # the embedded store's first open after an import builds its BM25 index from the text and
    # saves it (``<db>.bm25``); the next open reads it
    for again in (False, True) if target.label == "embedded" else (False,):
        cold = cold_reopen(target, query, "scope-0")
        what = "again (the saved BM25 index read)" if again else "(default embedder)"
        print(
            f"cold reopen {what}: open {cold['open_s']:.2f} s | model load "
            f"{cold['model_s']:.2f} s | first recall {cold['first_recall_s']:.2f} s | second "
            f"recall {cold['second_recall_s'] * 1000:.1f} ms | RSS {cold['rss_mb']:.0f} MB "
            f"(peak {cold['peak_mb']:.0f} MB)",
            flush=True,
        )
        name = "cold reopen again, the saved BM25 index read" if again else "cold reopen"
        emit(
            target.label,
            f"{name} at {args.n // 1000}k: open, first recall, RSS (default embedder)",
            f"{cold['open_s']:.2f} s, {cold['first_recall_s']:.2f} s, {cold['rss_mb']:.0f} MB",
            baseline="",
            **(
                {"goal": "RSS <= 600 MB", "met": cold["rss_mb"] <= 600} if args.n == 100_000 else {}
            ),
        )
    with MemoryGraph.open(target.address, embedder=embedder) as mg:
        bench_recall(mg, vectors, rows, args.scopes, args.queries, target.label)
        if not args.no_provenance:
            bench_provenance(mg, target.label)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    if not (args.keep or args.reuse):
        target.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--scopes", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--route", choices=ROUTES, default="default", help="how memories go in")
    parser.add_argument("--bulk", action="store_true", help="the same as --route bulk")
    parser.add_argument("--path", default=None, help="embedded store file (default: a temp dir)")
    parser.add_argument("--neo4j", default=None, help="a bolt:// or neo4j:// URI (wiped first)")
    parser.add_argument("--neo4j-data", default=None, help="the server's data dir, for its size")
    parser.add_argument("--keep", action="store_true", help="leave the store in place")
    parser.add_argument(
        "--reuse", action="store_true", help="measure a kept store (--path, same --n) as it is"
    )
    parser.add_argument("--no-provenance", action="store_true", help="skip trace/impact/retract")
    parser.add_argument(
        "--lead-in", type=int, default=None, help="MemoryGraphConfig.episode_lead_in at ingest"
    )
    parser.add_argument("--child-open", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--query", default="", help=argparse.SUPPRESS)
    parser.add_argument("--scope", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bulk:
        args.route = "bulk"
    if args.child_open:
        child_open(args.child_open, args.query, args.scope)
        return
    if args.neo4j:
        run(Neo4jTarget(args.neo4j, args.neo4j_data), args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        run(LocalTarget(args.path or f"{tmp}/million.db"), args)


if __name__ == "__main__":
    main()
