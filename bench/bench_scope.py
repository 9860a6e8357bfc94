"""Scoped recall among many tenants beside unscoped recall on a store of one tenant's size.

    python bench/bench_scope.py --tenants 100 --size 1000                 # embedded store
    python bench/bench_scope.py --tenants 10 --size 10000 --neo4j URI --no-local
    python bench/bench_scope.py --tenants 10 --size 10000 --neo4j URI --neo4j-small URI2 --no-local
    python bench/bench_scope.py --tenants 10 --size 10000 --interleaved  # scattered tenants

The big store holds ``tenants`` scopes of ``size`` memories each; a recall names one scope, so
it admits 1/tenants of the store. Its baseline is the same recall on a store that holds one
tenant only (``size`` memories, the same texts as tenant 0), the floor a scoped recall should
reach whatever else the store holds. Goal: scoped p95 <= 1.2 x the baseline's p95.

Embedded: both stores are open at once and timed in alternating blocks (``alternate``).
Neo4j Community has one database, so with one server the small store is loaded and timed,
then the big one, then the small one again; the baseline is the median of both small runs (it
brackets the big one in time, so a change in the machine's load shows as a gap between them,
which is printed).
With ``--neo4j-small URI`` the one-tenant store goes to a second server of the same make and
the two are timed in alternating blocks, as on the embedded store.
Each Neo4j load is settled before it is timed where the server allows (``settle``: indexes
online, then a checkpoint, which merges the many small Lucene segments a bulk load leaves).
Community 2026.x has no checkpoint procedure; there, settle both loads by a restart:

    python bench/bench_scope.py --tenants 10 --size 10000 --neo4j URI --neo4j-small URI2 \
        --no-local --keep          # load both, time them unsettled, leave them loaded
    # restart both servers (a clean shutdown checkpoints), then time the settled stores:
    python bench/bench_scope.py ... --no-local --reuse
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from neo4j.exceptions import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import BATCH, Side, alternate, ingest, ratios
from common import LookupEmbedder, corpus, holds, items, median, pct
from results import emit, within

from amem_graph import MemoryGraph
from amem_graph.stores.neo4j.store import Neo4jStore

QUERIES = 100


class Tenants:
    """``tenants`` x ``size`` memories, queries per tenant. Memory ``i`` is tenant ``i //
    size``'s, with the agent, task and episode ``items`` gives it (episodes of ``EPISODE``
    consecutive memories: a tenant's own when that divides ``size``). The rows are written
    tenant after tenant or, ``interleaved``, dealt round-robin (each tenant's next memory in
    turn, timestamps in that order), as a fleet writing at once would leave them: the same
    memories and hubs, only their places in the store differ. (Until 2026-12-07 the dealt
    rows took the hubs of their place in the write order, so each episode held 25 tenants'
    memories and the one-tenant store's episodes one memory each.)"""

    def __init__(self, tenants: int, size: int, queries: int, interleaved: bool = False) -> None:
        n = tenants * size
        texts, vectors = corpus(n)
        self.size, self.tenants, self.interleaved = size, tenants, interleaved
        memories = items(texts)  # memory i in tenant order (``row_of``)
        for i, row in enumerate(memories):
            row["scope"] = f"t{i // size}"
        #: the memories in the order they are written
        self.rows = memories
        if interleaved:
            stamps = [row["timestamp"] for row in memories]
            dealt = [self.row_of(t, o) for o in range(size) for t in range(tenants)]
            self.rows = [
                {**memories[i], "timestamp": at} for i, at in zip(dealt, stamps, strict=True)
            ]
        rng = np.random.default_rng(n + 1)
        self.scopes = [f"t{j}" for j in rng.integers(0, tenants, queries)]
        offsets = [int(rng.integers(0, size)) for _ in self.scopes]
        picks = [self.row_of(int(s[1:]), o) for s, o in zip(self.scopes, offsets, strict=True)]
        # the baseline asks tenant 0 the same words at the same offsets
        self.qtexts = [" ".join(texts[i].split()[2:5]) + f" q{j}" for j, i in enumerate(picks)]
        self.base_qtexts = [
            " ".join(texts[self.row_of(0, o)].split()[2:5]) + f" b{j}"
            for j, o in enumerate(offsets)
        ]
        qvecs = rng.standard_normal((2 * queries, vectors.shape[1])).astype(np.float32)
        qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
        self.embedder = LookupEmbedder(
            texts + self.qtexts + self.base_qtexts, np.vstack([vectors, qvecs])
        )

    def row_of(self, tenant: int, offset: int) -> int:
        """The number of a tenant's ``offset``-th memory (its text's in the corpus)."""
        return tenant * self.size + offset

    @property
    def small_rows(self) -> list[dict[str, object]]:
        """Tenant 0 alone, in the order the big store got them: the store of one scope's
        size."""
        return [row for row in self.rows if row["scope"] == "t0"]

    def scoped(self, mg: MemoryGraph, k: int) -> Side:
        return lambda i: mg.recall(self.qtexts[i], k=k, scope=self.scopes[i])

    def baseline(self, mg: MemoryGraph, k: int) -> Side:
        return lambda i: mg.recall(self.base_qtexts[i], k=k, scope="t0")


def line(
    name: str,
    w: Tenants,
    scoped: list[float],
    base: list[float],
    extra: str = "",
    variant: str = "",
) -> None:
    """The readable line and the RESULT figure (``variant``, say a budget, names its own row)."""
    layout = " interleaved" if w.interleaved else ""
    print(
        f"{name:6} {w.tenants}{layout} tenants x {w.size}: scoped recall p50 "
        f"{median(scoped):6.2f} ms p95 {pct(scoped, 95):6.2f} ms | one-tenant store p50 "
        f"{median(base):6.2f} ms p95 "
        f"{pct(base, 95):6.2f} ms | {ratios(scoped, base)}{extra}",
        flush=True,
    )
    emit(
        "embedded" if name == "local" else "neo4j",
        f"scoped recall p50 / p95, {w.tenants}{layout} scopes of {w.size} memories{variant}",
        f"{median(scoped):.1f} / {pct(scoped, 95):.1f} ms",
        baseline=f"one-scope store of {w.size}: {median(base):.1f} / {pct(base, 95):.1f} ms",
        **within(pct(scoped, 95) / pct(base, 95), 1.2),
    )


def bench_local(w: Tenants, k: int, queries: int, blocks_mb: int | None = None) -> None:
    options = {} if blocks_mb is None else {"scope_blocks_bytes": blocks_mb << 20}
    with (
        tempfile.TemporaryDirectory() as tmp,
        MemoryGraph.open(f"{tmp}/big.db", embedder=w.embedder, **options) as big,
        MemoryGraph.open(f"{tmp}/small.db", embedder=w.embedder, **options) as small,
    ):
        rate = ingest(big, w.rows)
        ingest(small, w.small_rows)
        scoped, base = alternate([w.scoped(big, k), w.baseline(small, k)], queries)
    variant = "" if blocks_mb is None else f", scope blocks {blocks_mb} MB"
    line("local", w, scoped, base, f" | ingest {rate:.0f} mem/s{variant}", variant)


def _neo4j_run(
    store: Neo4jStore, w: Tenants, rows: list[dict[str, object]], load: bool = True
) -> MemoryGraph:
    """The store loaded with ``rows``; unless ``load``, as a ``--keep`` run left it (which
    the caller checked holds them: say after a restart, which checkpoints, a settled index)."""
    if not load:
        return MemoryGraph(store, w.embedder)
    store.wipe()
    mg = MemoryGraph(store, w.embedder)  # after the wipe: it records the embedder
    for start in range(0, len(rows), BATCH):
        mg.remember_many(rows[start : start + BATCH])
    return mg


def settle(store: Neo4jStore) -> float | None:
    """Seconds spent waiting for the indexes to be online, then checkpointing the database
    where the server has ``db.checkpoint`` (5.x; Community 2026.x has none: there only the
    scheduled checkpoint merges, so its figures are unsettled: None, and the line says so)."""
    started = time.perf_counter()
    with store._driver.session(database=store.database) as session:
        session.run("CALL db.awaitIndexes(600)").consume()
        try:
            session.run("CALL db.checkpoint()").consume()
        except ClientError as exc:
            if exc.code != "Neo.ClientError.Procedure.ProcedureNotFound":
                raise
            return None
    return time.perf_counter() - started


def settled_note(settled: list[float | None]) -> str:
    """How long each load took to settle, for the result line (``settle``)."""
    if None in settled:
        return " | not settled (no db.checkpoint on this server)"
    return f" | settled in {' / '.join(f'{s:.1f}' for s in settled if s is not None)} s"


def bench_neo4j(w: Tenants, k: int, queries: int, uri: str) -> None:
    store = Neo4jStore.connect(uri)
    try:
        runs: dict[str, list[list[float]]] = {"small": [], "big": []}
        settled: list[float | None] = []
        for phase in ("small", "big", "small"):
            mg = _neo4j_run(store, w, w.small_rows if phase == "small" else w.rows)
            settled.append(settle(store))
            side = w.baseline(mg, k) if phase == "small" else w.scoped(mg, k)
            runs[phase].append(alternate([side], queries)[0])
        first, second = runs["small"]
        base = first + second
        gap = f" | the two one-tenant runs: p95 {pct(first, 95):.2f} / {pct(second, 95):.2f} ms"
        gap += settled_note(settled)
        line("neo4j", w, runs["big"][0], base, gap)
        store.wipe()
    finally:
        store.close()


def bench_neo4j_pair(
    w: Tenants, k: int, queries: int, uri: str, small_uri: str, keep: bool, reuse: bool
) -> None:
    """The big store on one server, the one-tenant store on another of the same make, both
    open at once and timed in alternating blocks, as on the embedded store: a change in the
    machine's load falls on both sides alike. ``keep`` leaves both loaded; ``reuse`` times
    what a ``keep`` run left when both still hold it (no load)."""
    big_store, small_store = Neo4jStore.connect(uri), Neo4jStore.connect(small_uri)
    try:
        loaded = not (reuse and holds(big_store, w.rows) and holds(small_store, w.small_rows))
        big = _neo4j_run(big_store, w, w.rows, load=loaded)
        small = _neo4j_run(small_store, w, w.small_rows, load=loaded)
        settled = [settle(big_store), settle(small_store)]
        note = settled_note(settled) if loaded else " | reused (no load)"
        scoped, base = alternate([w.scoped(big, k), w.baseline(small, k)], queries)
        line("neo4j", w, scoped, base, " | two servers, alternating blocks" + note)
        if not keep:
            big_store.wipe()
            small_store.wipe()
    finally:
        big_store.close()
        small_store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--size", type=int, default=1000, help="memories per tenant")
    parser.add_argument("--neo4j", default=None, help="bolt URI; the database is wiped")
    parser.add_argument(
        "--neo4j-small",
        default=None,
        help="a second server's bolt URI for the one-tenant store (wiped): both timed at once",
    )
    parser.add_argument("--no-local", action="store_true", help="skip the embedded store")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument(
        "--interleaved", action="store_true", help="tenants' rows dealt round-robin, not in runs"
    )
    parser.add_argument(
        "--scope-blocks-mb",
        type=int,
        default=None,
        help="embedded: the stores' scope_blocks_bytes in MB (default: the library's)",
    )
    parser.add_argument("--keep", action="store_true", help="two servers: leave both loaded")
    parser.add_argument(
        "--reuse", action="store_true", help="two servers: time what a --keep run left (no load)"
    )
    args = parser.parse_args()
    print(f"k={args.k} queries={args.queries} cpus={os.cpu_count()}", flush=True)
    w = Tenants(args.tenants, args.size, args.queries, args.interleaved)
    if not args.no_local:
        bench_local(w, args.k, args.queries, args.scope_blocks_mb)
    if args.neo4j and args.neo4j_small:
        bench_neo4j_pair(
            w, args.k, args.queries, args.neo4j, args.neo4j_small, args.keep, args.reuse
        )
    elif args.neo4j:
        bench_neo4j(w, args.k, args.queries, args.neo4j)


if __name__ == "__main__":
    main()
