"""The exact top k of many query vectors among one filter's memories, without the server
scoring every pair.

Ingest's note-link searches into a small scope are exact scans (``plan.py``), one per new
memory. Scored in Cypher, a pair costs about 5-13 µs: a 1,000-memory batch into a scope of
2,000 was 2M pairs and ~20 s, and at 1M memories the statement passed the transaction timeout
(``bench/RESULTS.md``). Here the admitted vectors are read once (~75 µs each), every pair is
scored on the client, and only the pairs that can be in a top k (within ``MARGIN`` of the
client's k-th score) are scored again on the server by ``vector_search``'s own expression: each
answer is the one its exact scan gives, scores and tie order included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, LiteralString, TypeVar

import numpy as np

from amem_graph.stores.neo4j.connection import _Reader
from amem_graph.stores.neo4j.cypher import _cypher

#: from this many query vectors on, the admitted vectors are read and pairs scored here; fewer
#: are scored on the server (reading a vector costs about as much as 15 server pairs)
POOL_MIN: Final = 16
#: a pair within this of the client's k-th score is rescored on the server: the client's
#: float64 cosine and the server's float32 one differ by about 1e-6, and a member of the
#: server's top k can be at most twice that below the client's k-th score
MARGIN: Final = 1e-3
#: query vectors per statement, so that none grows with the batch
CHUNK: Final = 200
#: a batch's searches in a scope of at most this many memories take the exact pass even
#: where ``vector_search`` would ask the ANN index (the pool is read whole, ~30 MB at 20k)...
POOL_MAX: Final = 20_000
#: ...when the scope holds at most this many memories per query vector: reading a vector
#: costs ~75 µs here, an ANN fetch scaled to a small scope's share 10-60 ms (100k-1M memories)
POOL_PER_QUERY: Final = 50

Hits = list[tuple[str, float]]
_T = TypeVar("_T")
Read = Callable[[Callable[[_Reader], _T]], _T]

#: the exact scan of ``_Q_VECTOR_EXACT`` for each query vector, each admitted vector read once
_Q_EXACT_EVERY_PAIR: Final = """
CALL {
  MATCH (m:Memory)
  WHERE %FILTER% AND m.embedding IS NOT NULL
  RETURN collect([m.id, m.embedding, coalesce(m.embedding_is_zero, false)]) AS pool
}
UNWIND range(0, size($qs) - 1) AS i
WITH i, $qs[i] AS q, pool
CALL {
  WITH q, pool
  UNWIND pool AS p
  WITH p[0] AS id, CASE WHEN p[2] THEN 0.0
                        ELSE 2.0 * vector.similarity.cosine(p[1], q) - 1.0 END AS score
  ORDER BY score DESC, id
  LIMIT $k
  RETURN collect([id, score]) AS hits
}
RETURN i, hits
"""
#: the admitted vectors, for the client's scoring
_Q_POOL: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
RETURN m.id AS id, m.embedding AS embedding, coalesce(m.embedding_is_zero, false) AS zero
"""
#: ``_Q_VECTOR_EXACT`` for each query vector among its candidates (``$among[i]``)
_Q_EXACT_AMONG: Final = """
UNWIND range(0, size($qs) - 1) AS i
WITH i, $qs[i] AS q, $among[i] AS ids
CALL {
  WITH q, ids
  MATCH (m:Memory)
  WHERE m.id IN ids AND %FILTER% AND m.embedding IS NOT NULL
  WITH m.id AS id, CASE WHEN m.embedding_is_zero THEN 0.0
                        ELSE 2.0 * vector.similarity.cosine(m.embedding, q) - 1.0 END AS score
  ORDER BY score DESC, id
  LIMIT $k
  RETURN collect([id, score]) AS hits
}
RETURN i, hits
"""


def exact_many(
    read: Read[Any],
    where: LiteralString,
    params: dict[str, Any],
    units: Sequence[list[float]],
    k: int,
) -> list[Hits]:
    """The exact top ``k`` (score, then id) of each unit vector among the memories ``where``
    (with ``params``) admits; ``read`` runs a function on a read session (the store's
    ``_read``). The pool and the rescoring are separate reads: a memory written in between
    is seen as the pool read saw it."""
    if not units:
        return []
    if len(units) < POOL_MIN:
        return _chunked(read, _cypher(_Q_EXACT_EVERY_PAIR).replace("%FILTER%", where),
                        {**params, "k": int(k)}, units)  # fmt: skip
    pool_query = _cypher(_Q_POOL).replace("%FILTER%", where)
    rows = read(
        lambda tx: [(r["id"], r["embedding"], r["zero"]) for r in tx.run(pool_query, params)]
    )
    if not rows:
        return [[] for _ in units]
    ids = [str(mid) for mid, _, _ in rows]
    pool = _unit_rows(np.asarray([vec for _, vec, _ in rows], dtype=np.float64))
    pool[np.asarray([bool(zero) for _, _, zero in rows])] = 0.0  # scored 0, as the server does
    among: list[list[str]] = []
    for start in range(0, len(units), CHUNK):
        queries = _unit_rows(np.asarray(units[start : start + CHUNK], dtype=np.float64))
        among.extend(candidates(pool @ queries.T, ids, k))
    query = _cypher(_Q_EXACT_AMONG).replace("%FILTER%", where)
    return _chunked(read, query, {**params, "k": int(k)}, units, among)


def pool_is_cheaper(admitted: int, queries: int) -> bool:
    """Whether ``queries`` vectors are searched faster by one exact pass over ``admitted``
    memories than by an ANN fetch each (the exact answer is the one an ANN fetch approximates)."""
    return queries >= POOL_MIN and admitted <= min(POOL_MAX, queries * POOL_PER_QUERY)


def candidates(scores: np.ndarray, ids: Sequence[str], k: int) -> list[list[str]]:
    """For each column of ``scores`` (pool x queries), the ids that can be in its top ``k``:
    those within ``MARGIN`` of its k-th score (all when the pool holds at most k)."""
    n = scores.shape[0]
    if n <= k:
        return [list(ids) for _ in range(scores.shape[1])]
    kth = np.partition(scores, n - k, axis=0)[n - k]
    keep = scores >= kth - MARGIN
    return [[ids[int(i)] for i in np.flatnonzero(keep[:, j])] for j in range(scores.shape[1])]


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: np.ndarray = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return out


def _chunked(
    read: Read[Any],
    query: LiteralString,
    params: dict[str, Any],
    units: Sequence[list[float]],
    among: Sequence[list[str]] | None = None,
) -> list[Hits]:
    """``query`` over ``units`` (and their candidates) ``CHUNK`` at a time, answers in order."""
    out: list[Hits] = []
    for start in range(0, len(units), CHUNK):
        args = {**params, "qs": list(units[start : start + CHUNK])}
        if among is not None:
            args["among"] = list(among[start : start + CHUNK])

        def run(tx: _Reader, args: dict[str, Any] = args) -> list[Hits]:
            found = {int(r["i"]): r["hits"] for r in tx.run(query, args)}
            return [[(str(i), float(s)) for i, s in found[j]] for j in range(len(args["qs"]))]

        out.extend(read(run))
    return out
