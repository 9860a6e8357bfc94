"""``vector_search_many``: ingest's nearest-note searches, many vectors in ONE query.

Ingest links each new note to its nearest stored notes: one vector search per memory. As one
query per memory, a 500-memory batch cost 500 round trips and was most of ingest's time
(``bench/RESULTS.md``, Neo4j ingest). Each vector here gets exactly what ``vector_search``
would return: the same first fetch, exact re-scoring and tie order, decided as its loop decides
(starved: the hits, the exact scan, or a grown fetch by ``vector_search`` itself); the exact
scans go to ``exact_many``, which scores a batch against the admitted set read once.

One exception, for speed: a batch into a scope small enough that one exact pass over it costs
less than an ANN fetch per vector (``exact_many.pool_is_cheaper``) gets the exact top k where
``vector_search`` would ask the index, i.e. the answer the index approximates: at 100k, 1,000
new memories into a scope of 5-9k spent 22-28 s in index fetches (about 200 hits each), and
under 1.5 s in the exact pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, LiteralString

from neo4j import Record

from amem_graph.stores.base import MemoryFilter
from amem_graph.stores.neo4j.ann import ann_query
from amem_graph.stores.neo4j.connection import _Reader
from amem_graph.stores.neo4j.cypher import _cypher, _filter_clause
from amem_graph.stores.neo4j.exact_many import CHUNK, Hits, exact_many, pool_is_cheaper
from amem_graph.stores.neo4j.schema import VECTOR_INDEX
from amem_graph.stores.neo4j.search import (
    _MIN_FETCH,
    _OVERFETCH,
    _Q_COUNT_ADMITTED_VECTORS,
    Neo4jSearch,
    _top,
    after_starved,
)

#: the ANN call of ``_Q_VECTOR_ANN`` once per query vector (the subquery aggregates without a
#: grouping key, so an empty index still gives each vector its row)
_Q_ANN_MANY: Final = """
UNWIND range(0, size($qs) - 1) AS i
WITH i, $qs[i] AS q
CALL {
  WITH q
  %ANN%
  WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN m END) AS admitted
  RETURN raw, admitted
}
RETURN i, raw, size(admitted) AS found,
       [x IN admitted | [x.id, 2.0 * vector.similarity.cosine(x.embedding, q) - 1.0]] AS hits
"""


class Neo4jSearchMany(Neo4jSearch):
    """Many vector searches under one filter: a few ANN queries, one exact pass for the rest."""

    def vector_search_many(
        self, searches: Sequence[tuple[Sequence[float], MemoryFilter]], k: int
    ) -> list[Hits]:
        """``vector_search(v, k, flt)`` for each (v, flt), in order: one query per filter."""
        out: list[Hits] = [[] for _ in searches]
        by_filter: dict[MemoryFilter, list[int]] = {}
        for pos, (_, flt) in enumerate(searches):
            by_filter.setdefault(flt, []).append(pos)
        for flt, positions in by_filter.items():
            found = self._search_many([searches[p][0] for p in positions], k, flt)
            for pos, hits in zip(positions, found, strict=True):
                out[pos] = hits
        return out

    def _search_many(
        self, vectors: Sequence[Sequence[float]], k: int, flt: MemoryFilter
    ) -> list[Hits]:
        """``vector_search(v, k, flt)`` for each v under one filter, in few queries."""
        if k <= 0 or not vectors:
            return [[] for _ in vectors]
        if len(vectors) == 1:
            return [self.vector_search(vectors[0], k, flt)]

        def run() -> list[Hits]:
            units = [self._unit_query(v) for v in vectors]
            out: list[Hits | None] = [None] * len(vectors)
            todo = [i for i, q in enumerate(units) if q is not None]
            where, params = _filter_clause(flt)
            first = self._vector_fetch(flt, k) if todo else None
            if todo and first is not None and not self._exact_is_cheaper(flt, len(todo)):
                todo = self._ann_many(flt, where, params, units, todo, k, first, out)
            if todo:
                found = exact_many(self._read, where, params, [units[i] or [] for i in todo], k)
                for pos, hits in zip(todo, found, strict=True):
                    out[pos] = hits
            # zero query vectors, and those the filter starved past the exact scan's size
            return [
                self.vector_search(vectors[i], k, flt) if hits is None else hits
                for i, hits in enumerate(out)
            ]

        return self._guard("searching vectors", run)

    def _exact_is_cheaper(self, flt: MemoryFilter, queries: int) -> bool:
        """Whether ``queries`` searches under ``flt`` are cheaper as one exact pass than as
        ANN fetches (``exact_many.pool_is_cheaper``); only a scoped filter is counted."""
        counted = self._counted_scopes(flt)
        return counted is not None and pool_is_cheaper(counted[0], queries)

    def _ann_many(
        self,
        flt: MemoryFilter,
        where: LiteralString,
        params: dict[str, Any],
        units: Sequence[list[float] | None],
        todo: list[int],
        k: int,
        first: int,
        out: list[Hits | None],
    ) -> list[int]:
        """The first ANN fetch of each of ``todo``'s vectors (``CHUNK`` to a statement); the
        answers ``vector_search`` would take from it go to ``out``. Returns the positions its
        loop would then scan exactly; those it would grow the fetch for are left at None.

        A starved vector is decided as ``vector_search`` decides it (``after_starved``), from
        one count of the admitted vectors for all of them.
        """
        n = max(k * _OVERFETCH, _MIN_FETCH, first)
        query = ann_query(
            _Q_ANN_MANY, in_index=self._scope_in_index(flt), name=VECTOR_INDEX,
            index="$index", n="$n", q="q",
        ).replace("%FILTER%", where)  # fmt: skip
        args = {**params, "n": n, "index": VECTOR_INDEX}
        exact: list[int] = []
        starved: dict[int, Hits] = {}
        for start in range(0, len(todo), CHUNK):
            chunk = todo[start : start + CHUNK]
            chunk_args = {**args, "qs": [units[i] for i in chunk]}

            def read(tx: _Reader, a: dict[str, Any] = chunk_args) -> list[Record]:
                return list(tx.run(query, a))

            rows = self._read(read)
            for row in rows:
                pos = chunk[int(row["i"])]
                hits = [(str(i), float(s)) for i, s in row["hits"]]
                if row["found"] >= k:
                    out[pos] = _top(hits, k)
                elif row["raw"] < n:  # every indexed vector seen: ``vector_search`` scans
                    exact.append(pos)
                else:
                    starved[pos] = hits
        if starved:
            count_query = _cypher(_Q_COUNT_ADMITTED_VECTORS).replace("%FILTER%", where)
            counted = int(
                self._read(lambda tx: tx.run(count_query, params).single(strict=True))["n"]
            )
            for pos, hits in starved.items():
                after = after_starved(counted, len(hits), n)
                if after == "hits":
                    out[pos] = _top(hits, k)
                elif after == "exact":
                    exact.append(pos)
        return sorted(exact)
