"""``vector_search_many``: ingest's nearest-note searches, many vectors in ONE query.

Ingest links each new note to its nearest stored notes: one vector search per memory. As one
query per memory, a 500-memory batch cost 500 round trips and was most of ingest's time
(``bench/RESULTS.md``, Neo4j ingest). Each vector here gets exactly what ``vector_search``
would return: the same first fetch, exact re-scoring and tie order; a vector the filter starves
while the index holds more is redone by ``vector_search`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, LiteralString

from amem_graph.stores.base import MemoryFilter
from amem_graph.stores.neo4j.connection import _Reader
from amem_graph.stores.neo4j.cypher import _cypher, _filter_clause
from amem_graph.stores.neo4j.schema import VECTOR_INDEX
from amem_graph.stores.neo4j.search import _MIN_FETCH, _OVERFETCH, Neo4jSearch, _top

#: the ANN call of ``_Q_VECTOR_ANN`` once per query vector (the subquery aggregates without a
#: grouping key, so an empty index still gives each vector its row)
_Q_ANN_MANY: Final = """
UNWIND range(0, size($qs) - 1) AS i
WITH i, $qs[i] AS q
CALL {
  WITH q
  CALL db.index.vector.queryNodes($index, $n, q) YIELD node AS m
  WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN m END) AS admitted
  RETURN raw, admitted
}
RETURN i, raw, size(admitted) AS found,
       [x IN admitted | [x.id, 2.0 * vector.similarity.cosine(x.embedding, q) - 1.0]] AS hits
"""
#: the exact scan of ``_Q_VECTOR_EXACT`` once per query vector
_Q_EXACT_MANY: Final = """
UNWIND range(0, size($qs) - 1) AS i
WITH i, $qs[i] AS q
CALL {
  WITH q
  MATCH (m:Memory)
  WHERE %FILTER% AND m.embedding IS NOT NULL
  WITH m.id AS id, CASE WHEN m.embedding_is_zero THEN 0.0
                        ELSE 2.0 * vector.similarity.cosine(m.embedding, q) - 1.0 END AS score
  ORDER BY score DESC, id
  LIMIT $k
  RETURN collect([id, score]) AS hits
}
RETURN i, hits
"""

Hits = list[tuple[str, float]]


class Neo4jSearchMany(Neo4jSearch):
    """Many vector searches under one filter: one ANN query, one exact scan for the rest."""

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
            params.update({"k": int(k), "index": VECTOR_INDEX})
            first = self._vector_fetch(flt, k) if todo else None
            if todo and first is not None:
                n = max(k * _OVERFETCH, _MIN_FETCH, first)
                params["n"] = n
                query = _cypher(_Q_ANN_MANY).replace("%FILTER%", where)
                args = {**params, "qs": [units[i] for i in todo]}
                rows = self._read(lambda tx: list(tx.run(query, args)))
                exhausted: list[int] = []
                for row in rows:
                    pos = todo[int(row["i"])]
                    if row["found"] >= k:
                        out[pos] = _top([(str(i), float(s)) for i, s in row["hits"]], k)
                    elif row["raw"] < n:  # every indexed vector seen: ``vector_search`` scans
                        exhausted.append(pos)
                todo = exhausted
            if todo:
                exact = self._exact_many(where, params, [units[i] for i in todo])
                for pos, hits in zip(todo, exact, strict=True):
                    out[pos] = hits
            # zero query vectors, and those the filter starved while the index holds more
            return [
                self.vector_search(vectors[i], k, flt) if hits is None else hits
                for i, hits in enumerate(out)
            ]

        return self._guard("searching vectors", run)

    def _exact_many(
        self, where: LiteralString, params: dict[str, Any], units: list[list[float] | None]
    ) -> list[Hits]:
        """The exact top k of each unit vector among the admitted memories, in one query."""
        query = _cypher(_Q_EXACT_MANY).replace("%FILTER%", where)
        args = {**params, "qs": units}

        def read(tx: _Reader) -> list[Hits]:
            found = {int(r["i"]): r["hits"] for r in tx.run(query, args)}
            return [[(str(i), float(s)) for i, s in found[j]] for j in range(len(units))]

        return self._read(read)
