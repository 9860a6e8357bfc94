"""``apply``: a ``WriteBatch`` as ONE managed write transaction, UNWIND per label and type."""

from __future__ import annotations

from typing import Any, Final

import pydantic
from neo4j import ManagedTransaction

from amem_graph.core.errors import NotFoundError, StoreError, ValidationError
from amem_graph.core.models import Memory
from amem_graph.core.schema import EDGE_TYPES, MEMORY_STATUSES, check_label
from amem_graph.stores.base import EdgeWrite, MemoryUpdate, NodeWrite, WriteBatch
from amem_graph.stores.neo4j.cypher import _MEMORY_PROJECTION, _cypher
from amem_graph.stores.neo4j.props import (
    _MEMORY_TIMES,
    _ZERO_PROP,
    _memory_data,
    _memory_props,
    _memory_row,
    _storable,
    _unit_vector,
)
from amem_graph.stores.neo4j.schema import Neo4jSchema

#: float counters the in-place path adds to
_COUNTERS: Final = ("successes", "failures")
#: fields the in-place path may set (text, times and embeddings need the full path)
_SCALAR_FIELDS: Final = frozenset({"status", "successes", "failures", "importance", "version"})


def _is_scalar_update(update: MemoryUpdate) -> bool:
    return (
        set(update.changes) <= _SCALAR_FIELDS
        and set(update.increments) <= {"successes", "failures", "version"}
        and not set(update.changes) & set(update.increments)
    )


def _check_scalar_changes(update: MemoryUpdate) -> None:
    """The checks Memory validation would make, for the fields the in-place path sets."""
    status = update.changes.get("status")
    if status is not None and status not in MEMORY_STATUSES:
        raise ValidationError(f"update of memory {update.id!r}: unknown status {status!r}")
    for name in ("successes", "failures", "importance"):
        value = update.changes.get(name)
        if name in update.changes and (not isinstance(value, int | float) or value < 0):
            raise ValidationError(f"update of memory {update.id!r}: bad {name} {value!r}")
    version = update.changes.get("version")
    if "version" in update.changes and (not isinstance(version, int) or version < 1):
        raise ValidationError(f"update of memory {update.id!r}: bad version {version!r}")


#: vectors travel as text (9 significant digits per float32 value: exact) parsed by the
#: server; packing Python float lists was the client's biggest cost when ingesting
_VECTOR_EXPR: Final = "[x IN split(row.embedding, ',') | toFloat(x)]"

_SET_TIMES: Final = ", ".join(
    f"m.{name} = CASE WHEN row.times.{name} IS NULL THEN null ELSE datetime("
    f"{{epochSeconds: row.times.{name}[0], nanosecond: row.times.{name}[1]}}) END"
    for name in _MEMORY_TIMES
)

_Q_CREATE_MEMORIES: Final = """
UNWIND $rows AS row
CREATE (m:Memory)
SET m = row.props, %TIMES%
WITH m, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(m, 'embedding', %VECTOR%)
""".replace("%VECTOR%", _VECTOR_EXPR).replace("%TIMES%", _SET_TIMES)
_Q_MERGE_NODES: Final = """
UNWIND $rows AS row
MERGE (n:%L% {id: row.id})
ON CREATE SET n += row.on_create
SET n += row.props
"""
#: create-only nodes: the id's uniqueness constraint refuses one that exists (ConstraintError)
_Q_CREATE_NODES: Final = """
UNWIND $rows AS row
CREATE (n:%L% {id: row.id})
SET n += row.on_create
SET n += row.props
"""
_Q_LOCK_MEMORIES: Final = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})
SET m._amem_lock = true
REMOVE m._amem_lock
RETURN m {%P%} AS props
""".replace("%P%", _MEMORY_PROJECTION)
_Q_UPDATE_MEMORIES: Final = """
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
SET m += row.props, %TIMES%
""".replace("%TIMES%", _SET_TIMES)
#: status, counters and scalars set in place: no read-back, no re-validation of the whole node
_Q_SET_SCALARS: Final = """
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
SET m._amem_lock = true
REMOVE m._amem_lock
SET m += row.set,
    m.successes = coalesce(m.successes, 0.0) + row.inc.successes,
    m.failures = coalesce(m.failures, 0.0) + row.inc.failures,
    m.version = coalesce(m.version, 1) + row.inc.version
RETURN collect(m.id) AS found
"""
_Q_SET_VECTORS: Final = """
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
CALL db.create.setNodeVectorProperty(m, 'embedding', %VECTOR%)
""".replace("%VECTOR%", _VECTOR_EXPR)
#: edges of one type between existing ends; ``%V%`` is MERGE, or CREATE where none can exist
_Q_WRITE_EDGES: Final = """
UNWIND $rows AS row
MATCH (a:%S% {id: row.src})
MATCH (b:%D% {id: row.dst})
%V% (a)-[r:%T% {key: row.key}]->(b)
SET r += row.props
RETURN count(*) AS n
"""
_Q_MERGE_EDGES: Final = _Q_WRITE_EDGES.replace("%V%", "MERGE")
_Q_MISSING_ENDPOINT: Final = """
UNWIND $rows AS row
OPTIONAL MATCH (a:%S% {id: row.src})
OPTIONAL MATCH (b:%D% {id: row.dst})
WITH row, a, b WHERE a IS NULL OR b IS NULL
RETURN row.src AS src, row.dst AS dst, a IS NULL AS no_src
LIMIT 1
"""
_Q_DELETE_EDGES: Final = """
UNWIND $rows AS row
MATCH (a:%S% {id: row.src})-[r:%T% {key: row.key}]->(b:%D% {id: row.dst})
DELETE r
"""
_Q_FOUND_MEMORIES: Final = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})
RETURN collect(m.id) AS found
"""
_Q_DELETE_MEMORIES: Final = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})
DETACH DELETE m
"""


class _Plan:
    """A WriteBatch turned into parameter rows, validated before the database is touched."""

    def __init__(self) -> None:
        self.memories: list[dict[str, Any]] = []
        self.nodes: dict[str, list[dict[str, Any]]] = {}
        self.creates: dict[str, list[dict[str, Any]]] = {}
        self.updates: list[MemoryUpdate] = []
        self.edges: dict[str, list[dict[str, Any]]] = {}
        self.delete_edges: dict[str, list[dict[str, Any]]] = {}
        self.delete_memories: list[str] = []
        #: the recorded embedder's dimension (0 when the batch has no vectors to check)
        self.dims = 0


def _lock_order(plan: _Plan) -> None:
    """Labels, types and rows in one global order (stable: a repeated row keeps its place), so
    concurrent batches lock shared hubs (Agent, Task, Episode) in the same order and do not
    deadlock each other; four writers were retried by the driver after deadlocks."""
    for by_name in (plan.creates, plan.nodes):
        for rows in by_name.values():
            rows.sort(key=lambda r: r["id"])
        ordered = dict(sorted(by_name.items()))
        by_name.clear()
        by_name.update(ordered)
    for by_type in (plan.edges, plan.delete_edges):
        for rows in by_type.values():
            rows.sort(key=lambda r: (r["dst"], r["src"]))
        ordered = dict(sorted(by_type.items()))
        by_type.clear()
        by_type.update(ordered)


class Neo4jWrites(Neo4jSchema):
    """Writes: a batch is validated into rows, then sent in one transaction function."""

    def apply(self, batch: WriteBatch) -> None:
        if batch.is_empty():
            return

        def run() -> None:
            dims = self._recorded_dims() if self._needs_dims(batch) else 0
            plan = self._plan(batch, dims)
            self._write(lambda tx: self._apply_plan(tx, plan))

        self._guard("writing a batch", run)

    def _recorded_dims(self) -> int:
        """The recorded embedder's dimension, which every written vector must have."""
        dims = self._dims()
        if dims == 0:
            raise StoreError(
                "this Neo4j store has no embedder recorded (wiped since it was opened?): "
                "open it again through MemoryGraph, which records its embedder"
            )
        return dims

    @staticmethod
    def _needs_dims(batch: WriteBatch) -> bool:
        return any(m.embedding is not None for m in batch.memories) or any(
            u.changes.get("embedding") is not None for u in batch.memory_updates
        )

    def _plan(self, batch: WriteBatch, dims: int) -> _Plan:
        plan = _Plan()
        plan.dims = dims
        for m in batch.memories:
            props = _memory_props(m)
            vector: str | None = None
            if m.embedding is not None:
                vector, zero = _unit_vector(m.embedding, dims, f"memory {m.id!r}")
                if zero:
                    props[_ZERO_PROP] = True
            plan.memories.append({**_memory_row(props), "embedding": vector})
        for n in batch.nodes:
            rows = plan.creates if n.create_only else plan.nodes
            rows.setdefault(n.label, []).append(self._node_row(n))
        plan.updates = list(batch.memory_updates)
        for e in batch.edges:
            plan.edges.setdefault(e.type, []).append(self._edge_row(e))
        for etype, src, dst, key in batch.delete_edges:
            if etype not in EDGE_TYPES:
                raise ValidationError(f"unknown edge type {etype!r}")
            plan.delete_edges.setdefault(etype, []).append({"src": src, "dst": dst, "key": key})
        seen: set[str] = set()
        for mid in batch.delete_memories:
            if mid in seen:  # the embedded store finds nothing left to delete the second time
                raise NotFoundError(f"no memory {mid!r} to delete")
            seen.add(mid)
        plan.delete_memories = list(batch.delete_memories)
        _lock_order(plan)
        return plan

    @staticmethod
    def _node_row(n: NodeWrite) -> dict[str, Any]:
        where = f"{n.label} {n.id!r}"
        return {
            "id": n.id,
            "props": _storable(n.props, where, "id"),
            "on_create": _storable(n.on_create, where, "id"),
        }

    @staticmethod
    def _edge_row(e: EdgeWrite) -> dict[str, Any]:
        where = f"{e.type} edge {e.src!r}->{e.dst!r}"
        return {"src": e.src, "dst": e.dst, "key": e.key, "props": _storable(e.props, where, "key")}

    def _apply_plan(self, tx: ManagedTransaction, plan: _Plan) -> None:
        """The whole batch inside one transaction function: raising anywhere rolls it back."""
        if plan.memories:
            tx.run(_Q_CREATE_MEMORIES, {"rows": plan.memories}).consume()
        for label, rows in plan.creates.items():  # before merges of the same label
            tx.run(_cypher(_Q_CREATE_NODES, L=check_label(label)), {"rows": rows}).consume()
        for label, rows in plan.nodes.items():
            tx.run(_cypher(_Q_MERGE_NODES, L=check_label(label)), {"rows": rows}).consume()
        if plan.updates:
            self._apply_updates(tx, plan.updates, plan.dims)
        for etype, rows in plan.edges.items():
            src_label, dst_label = EDGE_TYPES[etype]
            query = _cypher(_Q_MERGE_EDGES, S=src_label, D=dst_label, T=etype)
            merged = tx.run(query, {"rows": rows}).single(strict=True)["n"]
            if merged != len(rows):
                self._raise_missing_endpoint(tx, etype, rows)
        for etype, rows in plan.delete_edges.items():
            src_label, dst_label = EDGE_TYPES[etype]
            query = _cypher(_Q_DELETE_EDGES, S=src_label, D=dst_label, T=etype)
            tx.run(query, {"rows": rows}).consume()
        if plan.delete_memories:
            rec = tx.run(_Q_FOUND_MEMORIES, {"ids": plan.delete_memories}).single(strict=True)
            found = set(rec["found"])
            for mid in plan.delete_memories:
                if mid not in found:
                    raise NotFoundError(f"no memory {mid!r} to delete")
            tx.run(_Q_DELETE_MEMORIES, {"ids": plan.delete_memories}).consume()

    @staticmethod
    def _raise_missing_endpoint(
        tx: ManagedTransaction, etype: str, rows: list[dict[str, Any]]
    ) -> None:
        src_label, dst_label = EDGE_TYPES[etype]
        query = _cypher(_Q_MISSING_ENDPOINT, S=src_label, D=dst_label)
        rec = tx.run(query, {"rows": rows}).single()
        if rec is None:  # every endpoint exists: a row matched twice cannot happen (unique ids)
            raise StoreError(f"{etype} edges: wrote a different number of edges than asked")
        label, nid = (src_label, rec["src"]) if rec["no_src"] else (dst_label, rec["dst"])
        raise NotFoundError(f"{etype} edge {rec['src']!r}->{rec['dst']!r}: no {label} {nid!r}")

    def _apply_updates(
        self, tx: ManagedTransaction, updates: list[MemoryUpdate], dims: int
    ) -> None:
        """Scalar-only updates (status, counters) in place; the rest read-modify-write."""
        simple = [u for u in updates if _is_scalar_update(u)]
        if simple:
            self._apply_scalar_updates(tx, simple)
        rest = [u for u in updates if not _is_scalar_update(u)]
        if rest:
            self._apply_full_updates(tx, rest, dims)

    @staticmethod
    def _apply_scalar_updates(tx: ManagedTransaction, updates: list[MemoryUpdate]) -> None:
        """One SET per memory under its write lock: increments add atomically, nothing is read
        back to the client (a 10k-memory retraction would otherwise ship every node twice)."""
        rows = []
        for u in updates:
            _check_scalar_changes(u)
            inc = {name: float(u.increments.get(name, 0)) for name in _COUNTERS}
            inc["version"] = int(u.increments.get("version", 0))
            rows.append({"id": u.id, "set": dict(u.changes), "inc": inc})
        found = set(tx.run(_Q_SET_SCALARS, {"rows": rows}).single(strict=True)["found"])
        for u in updates:
            if u.id not in found:
                raise NotFoundError(f"no memory {u.id!r} to update")

    def _apply_full_updates(
        self, tx: ManagedTransaction, updates: list[MemoryUpdate], dims: int
    ) -> None:
        """Read-modify-write under the memories' write locks, so increments never lose one."""
        ids = list(dict.fromkeys(u.id for u in updates))
        current: dict[str, dict[str, Any]] = {}
        for rec in tx.run(_Q_LOCK_MEMORIES, {"ids": ids}):
            props = _memory_data(rec["props"])
            props.pop("embedding", None)
            current[str(props["id"])] = props
        vectors: dict[str, str | None] = {}
        zero: dict[str, bool] = {}
        for u in updates:
            data = current.get(u.id)
            if data is None:
                raise NotFoundError(f"no memory {u.id!r} to update")
            data.update({k: v for k, v in u.changes.items() if k != "embedding"})
            for name, amount in u.increments.items():
                data[name] = (data.get(name) or 0) + amount
            try:
                validated = Memory.model_validate(data)
            except pydantic.ValidationError as exc:
                raise ValidationError(f"update of memory {u.id!r}: {exc}") from None
            current[u.id] = _memory_props(validated)
            if "embedding" in u.changes:
                new = u.changes["embedding"]
                if new is None:
                    vectors[u.id], zero[u.id] = None, False
                else:
                    vectors[u.id], zero[u.id] = _unit_vector(new, dims, f"memory {u.id!r}")
        rows = []
        for mid in ids:
            props = dict(current[mid])
            if mid in vectors:
                props[_ZERO_PROP] = True if zero[mid] else None
                if vectors[mid] is None:
                    props["embedding"] = None
            rows.append({"id": mid, **_memory_row(props)})
        tx.run(_Q_UPDATE_MEMORIES, {"rows": rows}).consume()
        vector_rows = [{"id": mid, "embedding": v} for mid, v in vectors.items() if v is not None]
        if vector_rows:
            tx.run(_Q_SET_VECTORS, {"rows": vector_rows}).consume()
