"""``import_memories`` on Neo4j: an ``ImportBatch`` written from its columns, one transaction.

The reference route (``stores.bulk.apply_as_batch``) builds a Memory per row, then ``apply``
turns each back into props and formats its vector value by value. Here the template's props
are computed once and each row adds only its own fields (``ImportBatch.row``), the vectors are
formatted as one matrix (``vectext``), rows go in statements of ``CHUNK``, and the edges from
the new memories are CREATEd (they cannot exist yet; the others are MERGEd as ``apply`` does).
The state left is the reference's, property for property (tests/contract/test_import_neo4j.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final

import numpy as np
from neo4j import ManagedTransaction

from amem_graph.core.errors import ValidationError
from amem_graph.core.schema import EDGE_TYPES, MEMORY, check_label
from amem_graph.core.text import analyze, search_text_of
from amem_graph.stores.base import EdgeWrite
from amem_graph.stores.bulk import ImportBatch, refuse_taken
from amem_graph.stores.neo4j.cypher import _cypher
from amem_graph.stores.neo4j.props import (
    _MEMORY_TIMES,
    _TERMS_PROP,
    _ZERO_PROP,
    _memory_props,
    _storable,
    _time_pair,
)
from amem_graph.stores.neo4j.vectext import unit_rows, vector_texts
from amem_graph.stores.neo4j.writes import (
    _Q_CREATE_NODES,
    _Q_MERGE_EDGES,
    _Q_MERGE_NODES,
    _Q_WRITE_EDGES,
    _SET_TIMES,
    _VECTOR_EXPR,
    Neo4jWrites,
    _lock_order,
    _Plan,
)

#: rows per statement: keeps one statement's parameters (about 6 kB of vector text a memory)
#: to tens of MB on the server; 20k memories in one import ran at 183/s in statements of
#: 5000 and 147/s in statements of 1000 (load ~6, where the commit's index updates dominate)
CHUNK: Final = 5_000

_Q_TAKEN: Final = """
UNWIND range(0, size($ids) - 1) AS i
MATCH (m:Memory {id: $ids[i]})
RETURN m.id AS id ORDER BY i LIMIT 1
"""
#: the template's props once (``$shared``), each row's own fields over them
_Q_CREATE_MEMORIES: Final = """
UNWIND $rows AS row
CREATE (m:Memory)
SET m = $shared, m += row.props, %TIMES%
WITH m, row
CALL db.create.setNodeVectorProperty(m, 'embedding', %VECTOR%)
""".replace("%VECTOR%", _VECTOR_EXPR).replace("%TIMES%", _SET_TIMES)
#: an edge from a memory this import creates cannot exist yet: nothing to merge with
_Q_CREATE_EDGES: Final = _Q_WRITE_EDGES.replace("%V%", "CREATE")


def _chunks(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), CHUNK):
        yield rows[start : start + CHUNK]


def _shared_props(batch: ImportBatch) -> tuple[dict[str, Any], dict[str, Any]]:
    """The template's props without the per-row fields, and its times as ``_SET_TIMES``
    pairs (a row's own times replace them)."""
    props = _memory_props(batch.template)
    per_row = set(batch.row(0)) | set(_MEMORY_TIMES) | {_TERMS_PROP}
    shared = {k: v for k, v in props.items() if k not in per_row}
    return shared, {k: _time_pair(props[k]) for k in _MEMORY_TIMES}


def _search_terms(batch: ImportBatch, row: dict[str, Any]) -> str:
    """``_memory_props``'s search terms of a row: what ``search_text`` of its Memory gives."""
    t = batch.template
    note = (row["note_keywords"], row["note_tags"], row["note_context"])
    text = search_text_of(
        row["agent"], row["content"], t.keywords, t.tags, t.context,
        note if t.note_indexed else None, row["lead_in"],
    )  # fmt: skip
    return " ".join(analyze(text))


def check_vectors(batch: ImportBatch, dims: int) -> None:
    """``_unit_vector``'s refusals, for the whole matrix before anything is written."""
    vectors = batch.vectors
    if vectors.ndim != 2 or vectors.shape[0] != len(batch) or vectors.shape[1] != dims:
        got = vectors.shape[1] if vectors.ndim == 2 else 0
        raise ValidationError(
            f"memory {batch.ids[0]!r} has a {got}-dim embedding; the store uses {dims}"
        )
    bad = ~np.isfinite(vectors).all(axis=1)
    if bad.any():
        mid = batch.ids[int(bad.argmax())]
        raise ValidationError(f"memory {mid!r} has a non-finite embedding value")


def memory_chunks(batch: ImportBatch) -> Iterator[list[dict[str, Any]]]:
    """The ``$rows`` of ``_Q_CREATE_MEMORIES``, ``CHUNK`` at a time and no Memory model per row
    (checked with ``check_vectors`` first): props, times, vector text, zero flag as ``apply``."""
    _, times = _shared_props(batch)
    for start in range(0, len(batch), CHUNK):
        stop = min(start + CHUNK, len(batch))
        unit, zero = unit_rows(batch.vectors[start:stop])
        rows = []
        for i, text, is_zero in zip(
            range(start, stop), vector_texts(unit), zero.tolist(), strict=True
        ):
            props = batch.row(i)
            own = dict(times)
            for key in _MEMORY_TIMES:
                if key in props:
                    own[key] = _time_pair(props.pop(key))
            props[_TERMS_PROP] = _search_terms(batch, props)
            if is_zero:
                props[_ZERO_PROP] = True
            rows.append({"props": props, "times": own, "embedding": text})
        yield rows


def _edge_rows(etype: str, sources: Sequence[str], targets: Sequence[str]) -> list[dict[str, Any]]:
    """One row per distinct (src, dst), with ``EdgeWrite``'s default key and props (a repeated
    pair is one edge on the reference route too, which MERGEs)."""
    default = EdgeWrite(etype, "", "")  # checks the type
    props = _storable(default.props, f"{etype} edge", "key")
    pairs = dict.fromkeys(zip(sources, targets, strict=True))
    return [{"src": s, "dst": d, "key": default.key, "props": props} for s, d in pairs]


class Neo4jImport(Neo4jWrites):
    """``import_memories``: the columns of an ``ImportBatch`` as UNWIND rows, one transaction."""

    def import_memories(self, batch: ImportBatch) -> None:
        """All of the batch or none of it: any id already stored fails it with ConflictError."""
        if not len(batch) and not batch.nodes and not batch.edges:
            return

        def run() -> None:
            if len(batch):
                check_vectors(batch, self._recorded_dims())
            plan = self._provenance_plan(batch)
            self._write(lambda tx: self._write_import(tx, batch, plan))

        self._guard("importing memories", run)

    def _provenance_plan(self, batch: ImportBatch) -> _Plan:
        """The batch's nodes and edges as ``apply`` would order them (``_lock_order``)."""
        plan = _Plan()
        for n in batch.nodes:
            by_label = plan.creates if n.create_only else plan.nodes
            by_label.setdefault(n.label, []).append(self._node_row(n))
        for etype, (sources, targets) in batch.edges.items():
            if sources:
                plan.edges[etype] = _edge_rows(etype, sources, targets)
        _lock_order(plan)
        return plan

    def _write_import(self, tx: ManagedTransaction, batch: ImportBatch, plan: _Plan) -> None:
        """Inside the one transaction: refuse a stored id, then memories, nodes and edges."""
        if len(batch):
            self._refuse_taken(tx, batch.ids)
            self._write_memories(tx, batch)
        for label, node_rows in plan.creates.items():
            query = _cypher(_Q_CREATE_NODES, L=check_label(label))
            for part in _chunks(node_rows):
                tx.run(query, {"rows": part}).consume()
        for label, node_rows in plan.nodes.items():
            query = _cypher(_Q_MERGE_NODES, L=check_label(label))
            for part in _chunks(node_rows):
                tx.run(query, {"rows": part}).consume()
        new = set(batch.ids)
        for etype, edge_rows in plan.edges.items():
            self._write_edges(tx, etype, edge_rows, new)

    @staticmethod
    def _refuse_taken(tx: ManagedTransaction, ids: list[str]) -> None:
        """ConflictError naming the first id (in batch order) that is already stored."""
        first = tx.run(_Q_TAKEN, {"ids": ids}).single()
        refuse_taken(ids, () if first is None else (first["id"],))

    @staticmethod
    def _write_memories(tx: ManagedTransaction, batch: ImportBatch) -> None:
        """One statement per chunk, each sent before the next is built: the server writes one
        while the client formats the next (results in a transaction need not be read in
        turn); a failed statement raises when its result is read, still inside."""
        shared, _ = _shared_props(batch)
        sent = [
            tx.run(_Q_CREATE_MEMORIES, {"shared": shared, "rows": rows})
            for rows in memory_chunks(batch)
        ]
        for result in sent:
            result.consume()

    def _write_edges(
        self, tx: ManagedTransaction, etype: str, rows: list[dict[str, Any]], new: set[str]
    ) -> None:
        """CREATE when every source is a memory of this import, else MERGE; a missing
        endpoint fails the import as it fails ``apply``."""
        src_label, dst_label = EDGE_TYPES[etype]
        fresh = src_label == MEMORY and all(r["src"] in new for r in rows)
        template = _Q_CREATE_EDGES if fresh else _Q_MERGE_EDGES
        query = _cypher(template, S=src_label, D=dst_label, T=etype)
        for part in _chunks(rows):
            written = tx.run(query, {"rows": part}).single(strict=True)["n"]
            if written != len(part):
                self._raise_missing_endpoint(tx, etype, part)
