"""Reads answered from the mirror: vector and BM25 search, filters, ranking fields, statuses,
siblings and edges; ``search``, ``neighbourhood`` and ``search_expand`` made of those calls."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import numpy as np

from amem_graph.core import blas, codec
from amem_graph.core.errors import ValidationError, refuse_unless_positive
from amem_graph.core.schema import EDGE_TYPES
from amem_graph.core.seeding import SeedPlan
from amem_graph.stores.base import (
    SIBLING_EDGES,
    Direction,
    Edge,
    Expansion,
    MemoryFilter,
    Neighbourhood,
    RankFields,
    SearchResult,
    neighbourhood_by_parts,
    search_by_parts,
    search_expand_by_parts,
)
from amem_graph.stores.local.ann import (
    ANN_THRESHOLD,
    AnnIndex,
    ann_available,
    ann_top,
    warn_missing,
)
from amem_graph.stores.local.blocks import SCOPE_BLOCKS_BYTES
from amem_graph.stores.local.mirror import _STATUS_NAMES, _Mirror
from amem_graph.stores.local.sqlite import LocalConnection, _chunks
from amem_graph.stores.query_vector import unit_query

#: BLAS threads for a search's vector scores (``LocalSearch``'s ``blas_threads``)
SEARCH_BLAS_THREADS = 1
#: a matrix product's cosines differ from one vector's by far less than this (unit vectors,
#: float32): rows within it of the k-th best are scored again exactly
_SHORTLIST_MARGIN = 1e-3


class LocalSearch(LocalConnection):
    """Searches and walks on the numpy, BM25 and hub mirrors (edges from SQLite), under the filter.

    ``ann_threshold``: stores with at least this many memories search vectors through the
    ANN index (``ann.py``, persisted as ``<db>.ann``) when usearch is installed; smaller ones,
    and filters admitting few rows (the selective fast path), are searched exactly. ``None``
    keeps every search exact.

    ``scope_blocks_bytes``: memory for the vectors of scattered selective filters, gathered
    once and kept between recalls (``blocks.py``; the most recent one is kept whatever the
    budget). A tenant whose memories lie among other tenants' needs none: the mirror's build,
    or the first search that finds it scattered, sorts the vectors by scope (``row_order.py``;
    at 100k a copy of the vectors, ~0.4 s, once, and again after every eighth of the store
    is new). Filters
    on agents or tasks are what these blocks are for.

    ``blas_threads``: the BLAS threads a search's vector scores may use (``core/blas.py``;
    None: numpy's own setting). One by default: on an idle machine a second thread saves ~1 ms
    of a 10k recall (4.3 against 5.2 ms p50), then spins on a core for a while, and two
    processes recalling at once took 15.9 ms a recall each against 4.7 ms capped
    (``bench/bench_processes.py``). A batch's one shortlisting product (a write's note links)
    keeps numpy's setting: there a second thread halves the time.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        busy_timeout: float = 30.0,
        *,
        ann_threshold: int | None = ANN_THRESHOLD,
        scope_blocks_bytes: int = SCOPE_BLOCKS_BYTES,
        blas_threads: int | None = SEARCH_BLAS_THREADS,
    ) -> None:
        if ann_threshold is not None:
            refuse_unless_positive(ann_threshold, "ann_threshold", " or None")
        self.blas_threads = blas.checked_threads(blas_threads, "blas_threads")
        super().__init__(path, busy_timeout, scope_blocks_bytes=scope_blocks_bytes)
        self.ann_threshold = ann_threshold
        self._ann: AnnIndex | None = None

    def _ann_for(self, mirror: _Mirror) -> AnnIndex | None:
        """The ANN index synced with ``mirror``, or None when the search should be exact."""
        if self.ann_threshold is None or len(mirror.ids) < self.ann_threshold:
            return None
        if not ann_available():
            warn_missing()
            return None
        if self._ann is None or self._ann.dims != mirror.dims:
            where = None if self.path == ":memory:" else self.path + ".ann"
            self._ann = AnnIndex(mirror.dims, where)
        self._ann.sync(mirror)
        return self._ann

    def close(self) -> None:
        with self._lock:
            if self._ann is not None and not self._closed:
                self._ann.save()
            self._ann = None
        super().close()

    def edges(
        self,
        ids: Iterable[str],
        types: Sequence[str] | None = None,
        direction: Direction = "out",
    ) -> list[Edge]:
        wanted_types = list(EDGE_TYPES) if types is None else list(types)
        for t in wanted_types:
            if t not in EDGE_TYPES:
                raise ValidationError(f"unknown edge type {t!r}")
        id_list = list(dict.fromkeys(ids))

        def run() -> list[Edge]:
            with self._snapshot():  # the types' and both ends' reads: one state of the file
                return collect()

        def collect() -> list[Edge]:
            out: list[Edge] = []
            seen: set[tuple[str, str, str, str]] = set()
            ends = [("src", "out"), ("dst", "in")]
            for etype in wanted_types:
                # each id's out-edges, then its in-edges, ids in the order asked
                found: dict[tuple[str, str], list[Edge]] = {}
                for column, side in ends:
                    if direction in (side, "both"):
                        for e in self._edges_at(etype, column, id_list):
                            found.setdefault((e.src if side == "out" else e.dst, side), []).append(
                                e
                            )
                for nid in id_list:
                    for _, side in ends:
                        for e in found.get((nid, side), ()):
                            ident = (etype, e.src, e.dst, e.key)
                            if ident not in seen:
                                seen.add(ident)
                                out.append(e)
            return out

        return self._guard("reading edges", run)

    def _edges_at(self, etype: str, column: str, ids: Sequence[str]) -> list[Edge]:
        """The ``etype`` edges whose ``column`` (src or dst) is one of ``ids``, from SQLite
        (the primary key and ``edges_dst`` index serve both), in key order."""
        out: list[Edge] = []
        for part in _chunks(ids):
            marks = ",".join("?" * len(part))
            for row in self._db.execute(
                f"SELECT src, dst, key, props FROM edges WHERE type = ? AND {column} IN ({marks}) "
                "ORDER BY src, dst, key",
                [etype, *part],
            ):
                props = codec.loads(row["props"]) if row["props"] != "{}" else {}
                out.append(Edge(etype, row["src"], row["dst"], props, row["key"]))
        return out

    def vector_search(
        self, vector: Sequence[float], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]:
        return self.vector_search_many([(vector, flt)], k)[0]

    def vector_search_many(
        self, searches: Sequence[tuple[Sequence[float], MemoryFilter]], k: int
    ) -> list[list[tuple[str, float]]]:
        """``vector_search`` of each (vector, filter); ``vector_search`` is this with one.
        The vectors of one filter are scored in one matrix product, which shortlists each
        one's best rows; the shortlist is scored again exactly (a matrix product rounds
        differently in the last bits), so ranks and scores are those of a search alone. Past
        the ANN threshold each non-selective search goes through the index (one matrix
        product over a large store would cost more than the searches)."""
        if k <= 0:
            return [[] for _ in searches]

        def run() -> list[list[tuple[str, float]]]:
            mirror = self._fresh_mirror()
            out: list[list[tuple[str, float]]] = [[] for _ in searches]
            if not mirror.ids:
                return out
            queries = [unit_query(vector, mirror.dims) for vector, _ in searches]
            groups: dict[MemoryFilter, list[int]] = {}
            for j, (_, flt) in enumerate(searches):
                groups.setdefault(flt, []).append(j)
            for flt, js in groups.items():
                mask, pos = mirror.admitted(flt)
                pos = pos[mirror.has_vec[pos]]
                index = None if mirror.selective(len(pos)) else self._ann_for(mirror)
                if index is not None:
                    with blas.capped(self.blas_threads):
                        for j in js:
                            out[j] = ann_top(mirror, index, queries[j], k, mask, pos)
                    continue
                if len(js) == 1 or len(pos) <= k:
                    with blas.capped(self.blas_threads):
                        for j in js:
                            out[j] = mirror.top_at(pos, mirror.scope_cosines(queries[j], pos), k)
                    continue
                approx = mirror.cosines_many(np.stack([queries[j] for j in js]), pos)
                with blas.capped(self.blas_threads):
                    for col, j in enumerate(js):
                        scores = approx[:, col]
                        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
                        short = pos[scores >= cut - _SHORTLIST_MARGIN]
                        out[j] = mirror.top_at(short, mirror.gathered(queries[j], short), k)
            return out

        return self._guard("searching vectors", run)

    def text_search(self, query: str, k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        if k <= 0:
            return []

        def run() -> list[tuple[str, float]]:
            mirror = self._fresh_mirror()
            n = len(mirror.ids)
            mask, pos = mirror.admitted(flt)
            if mirror.selective(len(pos)):
                return mirror.top_of(mirror.text_scores_at(query, pos), k, pos)
            # every position scored: cut the top k on the whole array (0 where not admitted)
            # before gathering, since most documents may match a query of common words
            scores = mirror.text_scores(query)
            if len(pos) < n:
                scores[~mask[:n]] = 0.0
            return mirror.top_of(scores, k)

        return self._guard("searching text", run)

    def search(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
    ) -> SearchResult:
        return search_by_parts(self._whole(), vector, query, n_vector, n_text, flt)

    def neighbourhood(
        self, ids: Sequence[str], flt: MemoryFilter, limit: int, fetch: Sequence[str] = ()
    ) -> Neighbourhood:
        return neighbourhood_by_parts(self._whole(), ids, flt, limit, fetch)

    def search_expand(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
        plan: SeedPlan,
        names: Sequence[str] = (),
    ) -> Expansion:
        return search_expand_by_parts(
            self._whole(), vector, query, n_vector, n_text, flt, plan, names
        )

    def filter_ids(self, ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        id_list = list(ids)

        def run() -> set[str]:
            mirror = self._fresh_mirror()
            mask = mirror.mask(flt)
            return {i for i in id_list if i in mirror.pos and bool(mask[mirror.pos[i]])}

        return self._guard("filtering memories", run)

    def authors(self, agent_ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        wanted = list(dict.fromkeys(agent_ids))

        def run() -> set[str]:
            return self._fresh_mirror().authors(wanted, flt) if wanted else set()

        return self._guard("finding authors", run)

    def one_per_scope(self, flt: MemoryFilter) -> dict[str, str]:
        if flt.scopes is None:
            raise ValidationError("one_per_scope needs a filter with scopes")
        return self._guard("finding scopes", lambda: self._fresh_mirror().one_per_scope(flt))

    def rank_fields(self, ids: Iterable[str], flt: MemoryFilter) -> dict[str, RankFields]:
        id_list = list(dict.fromkeys(ids))

        def run() -> dict[str, RankFields]:
            mirror = self._fresh_mirror()
            mask = mirror.mask(flt)
            known = [(mid, i) for mid in id_list if (i := mirror.pos.get(mid)) is not None]
            at = np.fromiter((i for _, i in known), dtype=np.int64, count=len(known))
            keep = mask[at]
            at = at[keep]
            columns = zip(  # whole columns gathered at once: this runs for every candidate
                mirror.created_at[at].tolist(),
                mirror.importance[at].tolist(),
                mirror.successes[at].tolist(),
                mirror.failures[at].tolist(),
                strict=True,
            )
            ids = [mid for (mid, _), kept in zip(known, keep.tolist(), strict=True) if kept]
            return {mid: RankFields(*row) for mid, row in zip(ids, columns, strict=True)}

        return self._guard("reading ranking fields", run)

    def statuses(self, ids: Iterable[str]) -> dict[str, str]:
        id_list = list(ids)

        def run() -> dict[str, str]:
            mirror = self._fresh_mirror()
            return {
                i: _STATUS_NAMES[int(mirror.status[mirror.pos[i]])]
                for i in id_list
                if i in mirror.pos and mirror.alive[mirror.pos[i]]
            }

        return self._guard("reading statuses", run)

    def siblings(
        self, ids: Sequence[str], via: str, flt: MemoryFilter, limit: int
    ) -> dict[str, list[tuple[str, str]]]:
        if via not in SIBLING_EDGES:
            raise ValidationError(f"siblings via {via!r}: use one of {SIBLING_EDGES}")
        if limit <= 0:
            return {mid: [] for mid in ids}

        def run() -> dict[str, list[tuple[str, str]]]:
            mirror = self._fresh_mirror()
            mask = mirror.mask(flt)
            return {mid: mirror.siblings(mid, via, mask, limit) for mid in ids}

        return self._guard("finding siblings", run)
