"""Vector and full-text search with the filter inside the query, and ``search`` over both."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal, LiteralString

from neo4j import Record

from amem_graph.core.text import BM25_K1 as K1
from amem_graph.stores.base import MemoryFilter, RankFields, SearchResult, search_by_parts
from amem_graph.stores.neo4j.ann import ann_query
from amem_graph.stores.neo4j.connection import _Reader
from amem_graph.stores.neo4j.cypher import (
    _RANK_FIELDS,
    _cypher,
    _filter_clause,
    lucene_query,
    text_index_query,
)
from amem_graph.stores.neo4j.plan import ANN_MAX, ScopeCounts, first_vector_fetch
from amem_graph.stores.neo4j.reads import Neo4jReads, _rank_fields
from amem_graph.stores.neo4j.schema import TEXT_INDEX, VECTOR_INDEX, Neo4jSchema
from amem_graph.stores.query_vector import unit_query

#: ``search`` asks each index for this many times the candidates wanted, in one query
FIRST_FETCH: Final = 1.25
#: Lucene's BM25 leaves out the constant (k1 + 1): scores are multiplied by it, so both stores
#: report the same value
_BM25_SCALE: Final = K1 + 1
#: what a search path's scores are multiplied by, per column prefix (vector, text)
_PATH_SCALE: Final = {"v_": 1.0, "t_": _BM25_SCALE}
#: searches: first over-fetch is max(k * _OVERFETCH, _MIN_FETCH) from the index, then x4
_OVERFETCH: Final = 2
_MIN_FETCH: Final = 32
#: when the ANN index under-delivers and at most this many memories are admitted, score them
#: all exactly instead of growing the ANN fetch
_EXACT_MAX: Final = 20_000


def after_starved(counted: int, seen: int, n: int) -> Literal["hits", "exact", "grow"]:
    """What a vector search does after a first ANN fetch of ``n`` that the filter starved
    (``seen`` hits admitted, ``counted`` admitted vectors in all): keep its hits when they are
    all there are, scan exactly when the admitted set is small (``_EXACT_MAX``) or the fetch
    is at its cap, else grow the fetch. Shared by ``vector_search`` and its batched twin."""
    if counted <= seen:
        return "hits"
    if counted <= _EXACT_MAX or n >= ANN_MAX:
        return "exact"
    return "grow"


def _top(pairs: Iterable[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    return sorted(pairs, key=lambda p: (-p[1], p[0]))[:k]


def _collect_hits(
    rows: Iterable[Sequence[Any]], fields: dict[str, RankFields], scale: float
) -> list[tuple[str, float]]:
    """(id, score x scale) of ``[id, score, <_RANK_FIELDS>]`` rows; their ranking fields go to
    ``fields``."""
    out: list[tuple[str, float]] = []
    for mid, score, *values in rows:
        fields[str(mid)] = _rank_fields(values)
        out.append((str(mid), float(score) * scale))
    return out


def _fetch_size(n: int) -> int:
    """How many hits a search path's first fetch asks its index for, to keep n."""
    return math.ceil(n * FIRST_FETCH)


def _first_fetch(
    rec: Record, prefix: str, n: int, fields: dict[str, RankFields], asked: int | None = None
) -> list[tuple[str, float]] | None:
    """The top n of a search path's first fetch of ``asked`` hits (default ``_fetch_size(n)``;
    columns ``<prefix>raw``/``<prefix>hits``), scaled by ``_PATH_SCALE``, their fields added
    to ``fields``; None when the filter starved it and the index may hold more (the path must
    be redone with a growing fetch). An exact scan reports ``raw`` 0: it is never starved."""
    hits = _top(_collect_hits(rec[f"{prefix}hits"], fields, _PATH_SCALE[prefix]), n)
    if len(hits) < n and rec[f"{prefix}raw"] >= (asked or _fetch_size(n)):
        return None
    return hits


_Q_VECTOR_ANN: Final = """
%ANN%
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN m END) AS admitted
RETURN raw, size(admitted) AS found,
       [x IN admitted | [x.id, 2.0 * vector.similarity.cosine(x.embedding, $q) - 1.0]] AS hits
"""
_Q_VECTOR_EXACT: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
WITH m.id AS id, CASE WHEN m.embedding_is_zero THEN 0.0
                      ELSE 2.0 * vector.similarity.cosine(m.embedding, $q) - 1.0 END AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
"""
_Q_VECTOR_ZERO_QUERY: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
RETURN m.id AS id, 0.0 AS score
ORDER BY id
LIMIT $k
"""
_Q_COUNT_ADMITTED_VECTORS: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
RETURN count(m) AS n
"""
_Q_TEXT: Final = """
CALL db.index.fulltext.queryNodes($index, $q, {limit: $n}) YIELD node AS m, score
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN [m.id, score] END) AS hits
RETURN raw, hits
"""
#: ``search``'s vector part: exact cosines (as ``_Q_VECTOR_ANN``) and the ranking fields
_Q_SEARCH_VECTOR: Final = """
%ANN%
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN m END) AS admitted
RETURN raw AS v_raw,
       [m IN admitted | [m.id, 2.0 * vector.similarity.cosine(m.embedding, $v_q) - 1.0,
                         %FIELDS%]] AS v_hits
"""
#: ``search``'s vector part over a small selective scope: every admitted cosine (as
#: ``_Q_VECTOR_EXACT``), the top ``$v_n`` with their ranking fields; complete, so never redone.
#: One row even when nothing is admitted: a literal returned beside ``collect`` would be a
#: grouping key, and no rows would make no groups
_Q_SEARCH_VECTOR_EXACT: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
WITH m, CASE WHEN m.embedding_is_zero THEN 0.0
             ELSE 2.0 * vector.similarity.cosine(m.embedding, $v_q) - 1.0 END AS score
ORDER BY score DESC, m.id
LIMIT $v_n
WITH collect([m.id, score, %FIELDS%]) AS v_hits
RETURN 0 AS v_raw, v_hits
"""
_Q_SEARCH_TEXT: Final = """
CALL db.index.fulltext.queryNodes($t_index, $t_q, {limit: $t_n}) YIELD node AS m, score
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN [m.id, score, %FIELDS%] END) AS hits
RETURN raw AS t_raw, hits AS t_hits
"""


class Neo4jSearch(Neo4jSchema, Neo4jReads):
    """Index searches: over-fetch under the filter, exact cosines, an exact scan if starved."""

    def _unit_query(self, vector: Sequence[float]) -> list[float] | None:
        """The query vector checked and normalised; None when no memory can have a vector
        (no embedder recorded) or the query is all zeros (every cosine is 0)."""
        info = self._recorded_embedder()
        if info is None:
            return None
        q = unit_query(vector, info[1])
        return [float(v) for v in q.tolist()] if q.any() else None

    def _scope_in_index(self, flt: MemoryFilter) -> bool:
        """Whether the vector index applies ``flt``'s scopes itself (``ann.py``)."""
        return flt.scopes is not None and self._index_filters_scope()

    def _ann(self, template: LiteralString, flt: MemoryFilter, prefix: str = "") -> LiteralString:
        """``template``'s ``%ANN%`` filled for ``flt``, on parameters ``$<prefix>index``,
        ``$<prefix>n`` and ``$<prefix>q``."""
        index, n, q = ("$v_index", "$v_n", "$v_q") if prefix == "v_" else ("$index", "$n", "$q")
        return ann_query(
            template, in_index=self._scope_in_index(flt), name=VECTOR_INDEX, index=index, n=n, q=q
        )

    def _vector_fetch(self, flt: MemoryFilter, n: int) -> int | None:
        """How many hits the vector index is first asked for to keep n under ``flt``; None
        when the filter's scopes are few memories of a big store: scan them exactly. An index
        that filters by scope is asked for as many as without a filter."""
        first = _fetch_size(n)
        if self._scope_in_index(flt):
            return first
        counted = self._counted_scopes(flt)
        return first if counted is None else first_vector_fetch(first, *counted)

    def _counted_scopes(self, flt: MemoryFilter) -> tuple[int, int] | None:
        """(memories in the filter's scopes, memories in the store), cached for a while
        (``plan.COUNT_TTL``); None when the filter names no scopes."""
        if flt.scopes is None:
            return None
        counts: ScopeCounts | None = self.__dict__.get("_scope_counts")
        if counts is None:
            counts = self.__dict__.setdefault("_scope_counts", ScopeCounts())

        def count(query: LiteralString, params: dict[str, Any]) -> tuple[int, int]:
            rec = self._read(lambda tx: tx.run(query, params).single(strict=True))
            return int(rec["admitted"]), int(rec["total"])

        return counts.get(flt.scopes, count)

    def vector_search(
        self, vector: Sequence[float], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]:
        if k <= 0:
            return []

        def run() -> list[tuple[str, float]]:
            q = self._unit_query(vector)
            where, params = _filter_clause(flt)
            params["k"] = int(k)
            if q is None:
                if self._recorded_embedder() is None:
                    return []  # no embedder recorded: no memory can have a vector
                # every cosine is 0: the embedded store ranks by id
                query = _cypher(_Q_VECTOR_ZERO_QUERY).replace("%FILTER%", where)
                return self._read(lambda tx: self._pairs(tx, query, params))
            params["q"] = q
            params["index"] = VECTOR_INDEX
            first = self._vector_fetch(flt, k)
            if first is None:
                exact = _cypher(_Q_VECTOR_EXACT).replace("%FILTER%", where)
                return self._read(lambda tx: self._pairs(tx, exact, params))
            ann = self._ann(_Q_VECTOR_ANN, flt).replace("%FILTER%", where)
            return self._read(lambda tx: self._vector_search(tx, k, ann, where, params, first))

        return self._guard("searching vectors", run)

    def search(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
    ) -> SearchResult:
        """Each index call with the filter and the ranking fields in one query; the vector and
        the text query run at once, in two sessions.

        The first fetch from each index is ``FIRST_FETCH`` times what is asked; when the filter
        left too few of them and the index may hold more, that path is redone by
        ``vector_search``/``text_search``, which grow the fetch (and scan exactly if need be).
        """
        lucene = lucene_query(query) if n_text > 0 else ""

        def run() -> SearchResult:
            q = self._unit_query(vector) if vector is not None and n_vector > 0 else None
            if q is None and vector is not None and n_vector > 0:
                return search_by_parts(self._whole(), vector, query, n_vector, n_text, flt)
            where, params = _filter_clause(flt)
            fields: dict[str, RankFields] = {}
            calls: list[Callable[[], list[tuple[str, float]]]] = []
            if q is not None:
                v_fetch = self._vector_fetch(flt, n_vector)
                v_params = {**params, "v_q": q, "v_index": VECTOR_INDEX}
                v_query = (
                    self._ann(_Q_SEARCH_VECTOR, flt, "v_")
                    if v_fetch is not None
                    else _Q_SEARCH_VECTOR_EXACT
                )
                calls.append(
                    lambda: self._search_part(
                        v_query, "v_", where, v_params, n_vector, fields,
                        lambda: self.vector_search(q, n_vector, flt),
                        v_fetch or _fetch_size(n_vector),
                    )
                )  # fmt: skip
            if lucene:
                t_q = text_index_query(lucene, flt.scopes)
                t_params = {**params, "t_q": t_q, "t_index": TEXT_INDEX}
                calls.append(
                    lambda: self._search_part(
                        _Q_SEARCH_TEXT, "t_", where, t_params, n_text, fields,
                        lambda: self.text_search(query, n_text, flt),
                        _fetch_size(n_text),
                    )
                )  # fmt: skip
            results = self._concurrently(calls)
            by_vector = results.pop(0) if q is not None else []
            by_text = results.pop(0) if lucene else []
            missing = [i for i, _ in by_vector + by_text if i not in fields]
            if missing:
                fields.update(self.rank_fields(missing, flt))
            return SearchResult(by_vector, by_text, fields)

        return self._guard("searching", run)

    def _search_part(
        self,
        template: LiteralString,
        prefix: str,
        where: LiteralString,
        params: dict[str, Any],
        n: int,
        fields: dict[str, RankFields],
        redo: Callable[[], list[tuple[str, float]]],
        asked: int,
    ) -> list[tuple[str, float]]:
        """One index path of ``search`` (its parameters and columns named with ``prefix``):
        the top n admitted (id, scaled score) of a first fetch of ``asked``, their fields
        added to ``fields``; ``redo`` when the filter starved the first fetch."""
        cypher = template.replace("%FIELDS%", _RANK_FIELDS).replace("%FILTER%", where)
        args = {**params, f"{prefix}n": asked}
        rec = self._read(lambda tx: tx.run(cypher, args).single(strict=True))
        found: dict[str, RankFields] = {}
        hits = _first_fetch(rec, prefix, n, found, asked)
        if hits is None:
            hits = redo()
        fields.update(found)  # dict updates are atomic under the GIL
        return hits

    @staticmethod
    def _pairs(
        tx: _Reader, query: LiteralString, params: dict[str, Any]
    ) -> list[tuple[str, float]]:
        return [(str(r["id"]), float(r["score"])) for r in tx.run(query, params)]

    def _vector_search(
        self,
        tx: _Reader,
        k: int,
        ann: LiteralString,
        where: LiteralString,
        params: dict[str, Any],
        first: int,
    ) -> list[tuple[str, float]]:
        """ANN (the query ``ann``) with over-fetch, filter inside; exact scan of the admitted
        set when it starves.

        Every admitted candidate is re-scored with the exact cosine (the index's own scores
        are quantised and vary with the fetch size), so a memory's score does not depend on k,
        ties break by id, and scores match the embedded store's.
        """
        n = max(k * _OVERFETCH, _MIN_FETCH, first)
        counted: int | None = None
        while True:
            rec = tx.run(ann, {**params, "n": n}).single(strict=True)
            hits = [(str(i), float(s)) for i, s in rec["hits"]]
            if rec["found"] >= k:
                return _top(hits, k)
            if rec["raw"] < n:
                break  # every indexed vector was seen; all-zero embeddings are not indexed
            if counted is None:
                count_query = _cypher(_Q_COUNT_ADMITTED_VECTORS).replace("%FILTER%", where)
                counted = int(tx.run(count_query, params).single(strict=True)["n"])
                after = after_starved(counted, len(hits), n)
                if after == "hits":
                    return _top(hits, k)
                if after == "exact":
                    break
            elif n >= ANN_MAX:
                break
            n = min(n * 4, ANN_MAX)
        exact = _cypher(_Q_VECTOR_EXACT).replace("%FILTER%", where)
        return self._pairs(tx, exact, params)

    def raw_vector_query(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """A bare ``db.index.vector.queryNodes`` call (no filter, no re-scoring), for benchmarks.

        Scores are ``2s - 1`` of the index's score, i.e. the index's (quantised) cosine.
        """
        if k <= 0:
            return []
        params = {"index": VECTOR_INDEX, "n": int(k), "q": [float(v) for v in vector]}

        def read(tx: _Reader) -> list[tuple[str, float]]:
            return [
                (str(r["id"]), 2.0 * float(r["score"]) - 1.0)
                for r in tx.run(
                    "CALL db.index.vector.queryNodes($index, $n, $q) YIELD node, score "
                    "RETURN node.id AS id, score",
                    params,
                )
            ]

        return self._guard("searching the vector index", lambda: self._read(read))

    def text_search(self, query: str, k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        lucene = lucene_query(query)
        if not lucene or k <= 0:
            return []
        where, params = _filter_clause(flt)
        params.update({"index": TEXT_INDEX, "q": text_index_query(lucene, flt.scopes)})
        cypher = _cypher(_Q_TEXT).replace("%FILTER%", where)

        def read(tx: _Reader) -> list[tuple[str, float]]:
            n = max(k * _OVERFETCH, _MIN_FETCH)
            while True:
                rec = tx.run(cypher, {**params, "n": n}).single(strict=True)
                hits = [(str(i), float(s) * _BM25_SCALE) for i, s in rec["hits"]]
                if len(hits) >= k or rec["raw"] < n:
                    return _top(hits, k)
                n *= 4

        return self._guard("searching text", lambda: self._read(read))

    def raw_text_query(self, query: str, k: int) -> list[tuple[str, float]]:
        """A bare ``db.index.fulltext.queryNodes`` call (no filter), for benchmarks: the text
        half of recall's floor."""
        lucene = lucene_query(query)
        if not lucene or k <= 0:
            return []
        params = {"index": TEXT_INDEX, "n": int(k), "q": text_index_query(lucene, None)}

        def read(tx: _Reader) -> list[tuple[str, float]]:
            return [
                (str(r["id"]), float(r["score"]) * _BM25_SCALE)
                for r in tx.run(
                    "CALL db.index.fulltext.queryNodes($index, $q, {limit: $n}) "
                    "YIELD node, score RETURN node.id AS id, score",
                    params,
                )
            ]

        return self._guard("searching the text index", lambda: self._read(read))
