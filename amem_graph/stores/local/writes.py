"""``apply`` and ``import_memories``: one ``BEGIN IMMEDIATE`` transaction each, logged, then the
mirror patched."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from amem_graph.core import codec
from amem_graph.core.errors import ConflictError, NotFoundError, ValidationError
from amem_graph.core.models import Memory
from amem_graph.core.schema import EDGE_TYPES, MEMORY
from amem_graph.core.text import search_text
from amem_graph.stores.base import SIBLING_EDGES, MemoryUpdate, NodeWrite, WriteBatch
from amem_graph.stores.bulk import ImportBatch, refuse_taken
from amem_graph.stores.local.imports import DOC_EXCLUDE, memory_rows, unit_blob
from amem_graph.stores.local.sqlite import CHANGE_LOG_KEEP, LocalConnection, _chunks, _epoch

_INSERT_MEMORY: Final = (
    "INSERT INTO memories(id, scope, status, agent, task, created_at, valid_from, valid_to, "
    "doc, search_text, embedding) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass
class _Change:
    """What one write changed, for the change log and the mirror patch."""

    memories: list[str]
    #: (type, src, dst, key) of each edge written
    edges: list[tuple[str, str, str, str]]
    deleted_edges: list[tuple[str, str, str, str]] = field(default_factory=list)
    deleted_memories: list[str] = field(default_factory=list)


class LocalWrites(LocalConnection):
    """Writes: all-or-nothing batches, edge endpoints checked, vectors stored unit-length."""

    def apply(self, batch: WriteBatch) -> None:
        if batch.is_empty():
            return
        change = _Change(
            memories=[m.id for m in batch.memories] + [u.id for u in batch.memory_updates],
            edges=[(e.type, e.src, e.dst, e.key) for e in batch.edges],
            deleted_edges=list(batch.delete_edges),
            deleted_memories=list(batch.delete_memories),
        )
        self._guard("writing a batch", lambda: self._commit(lambda: self._write(batch), change))

    def import_memories(self, batch: ImportBatch) -> None:
        """``GraphStore.import_memories``: rows written with ``executemany`` in one transaction,
        no ``Memory`` or ``EdgeWrite`` per row (the state ``apply`` leaves for the same rows)."""
        if not len(batch):
            return
        edges = [
            (etype, src, dst, "")
            for etype, (sources, targets) in batch.edges.items()
            for src, dst in zip(sources, targets, strict=True)
        ]

        def write() -> None:
            refuse_taken(batch.ids, self._existing(MEMORY, batch.ids))
            self._dims_match(batch.vectors.shape[1])
            self._db.executemany(_INSERT_MEMORY, memory_rows(batch))
            self._write(WriteBatch(nodes=list(batch.nodes)))
            # the sources are this batch's memories and episodes, the targets its nodes, so
            # every end exists; an episode's edge to its agent or task may exist already
            self._db.executemany(
                "INSERT INTO edges(type, src, dst, key, props) VALUES(?, ?, ?, ?, '{}') "
                "ON CONFLICT(type, src, dst, key) DO NOTHING",
                edges,
            )

        change = _Change(memories=list(batch.ids), edges=edges)
        self._guard("importing memories", lambda: self._commit(write, change))

    def _commit(self, write: Callable[[], None], change: _Change) -> None:
        """``write`` in one ``BEGIN IMMEDIATE`` transaction with its change-log row, then the
        mirror patched with what it changed."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            before = self._last_seq()
            write()
            seq = self._log_change(change)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        mirror = self._mirror
        if mirror is None:
            return
        # Our own commit does not bump data_version for this connection: patch the mirror.
        # The log row is ours; when nothing of another connection's came before it, the
        # mirror has seen everything up to it (else the next read catches up from the log).
        if before == self._seen_seq:
            self._seen_seq = seq
        self._refresh_rows(change.memories + change.deleted_memories)
        for etype, src, dst, _ in change.edges:
            mirror.add_edge(etype, src, dst)
        for etype, src, dst, _ in change.deleted_edges:
            mirror.remove_edge(etype, src, dst)
        for mid in change.deleted_memories:
            mirror.remove_memory(mid)

    def _dims_match(self, dims: int) -> None:
        """An import's vectors have the recorded embedder's dimension."""
        stored = self._dims()
        if stored and dims != stored:
            raise ValidationError(f"the import has {dims}-dim vectors; the store uses {stored}")

    def _write(self, batch: WriteBatch) -> None:
        db = self._db
        dims = self._dims()
        for m in batch.memories:
            self._insert_memory(m, dims)
        self._refuse_existing([n for n in batch.nodes if n.create_only])
        # json_patch merges props the way Neo4j's SET += does: a None value removes the key
        db.executemany(
            "INSERT INTO nodes(label, id, props) VALUES(?, ?, json_patch(json_patch('{}', ?), ?)) "
            "ON CONFLICT(label, id) DO UPDATE SET props = json_patch(nodes.props, ?)",
            [
                (n.label, n.id, codec.dumps(n.on_create), props, props)
                for n in batch.nodes
                for props in [codec.dumps(n.props)]
            ],
        )
        if batch.memory_updates:
            self._update_memories(batch.memory_updates, dims)
        self._check_endpoints(batch)
        db.executemany(
            "INSERT INTO edges(type, src, dst, key, props) VALUES(?, ?, ?, ?, json_patch('{}', ?)) "
            "ON CONFLICT(type, src, dst, key) DO UPDATE SET props = json_patch(edges.props, ?)",
            [
                (e.type, e.src, e.dst, e.key, props, props)
                for e in batch.edges
                for props in [codec.dumps(e.props)]
            ],
        )
        db.executemany(
            "DELETE FROM edges WHERE type=? AND src=? AND dst=? AND key=?", batch.delete_edges
        )
        if batch.delete_memories:
            self._delete_memories(batch.delete_memories)

    def _log_change(self, change: _Change) -> int:
        """Append what a write touched to the change log (readers in other processes patch
        their mirrors from it) and trim the log to its last ``CHANGE_LOG_KEEP`` rows. Only
        sibling edges are logged: they are the only edges a mirror holds."""
        edges = [e for e in (*change.edges, *change.deleted_edges) if e[0] in SIBLING_EDGES]
        touched = change.memories + change.deleted_memories
        body = {"m": list(dict.fromkeys(touched)), "e": edges}
        cur = self._db.execute("INSERT INTO changes(body) VALUES(?)", (codec.dumps(body),))
        seq = int(cur.lastrowid or 0)
        if seq % 100 == 0:
            self._db.execute("DELETE FROM changes WHERE seq <= ?", (seq - CHANGE_LOG_KEEP,))
        return seq

    def _refuse_existing(self, creates: Sequence[NodeWrite]) -> None:
        """Create-only nodes must be new (the write lock is held, so no one can slip in)."""
        by_label: dict[str, list[str]] = {}
        for n in creates:
            ids = by_label.setdefault(n.label, [])
            if n.id in ids:
                raise ConflictError(f"{n.label} {n.id!r} is created twice in one batch")
            ids.append(n.id)
        for label, ids in by_label.items():
            taken = sorted(self._existing(label, ids))
            if taken:
                raise ConflictError(f"{label} {taken[0]!r} already exists")

    def _existing(self, label: str, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for part in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(part))
            if label == MEMORY:
                sql, params = f"SELECT id FROM memories WHERE id IN ({marks})", list(part)
            else:
                sql = f"SELECT id FROM nodes WHERE label = ? AND id IN ({marks})"
                params = [label, *part]
            found.update(row["id"] for row in self._db.execute(sql, params))
        return found

    def _check_endpoints(self, batch: WriteBatch) -> None:
        """Every edge's two ends exist (nodes of this batch are already written)."""
        wanted: dict[str, list[str]] = {}
        for e in batch.edges:
            src_label, dst_label = e.labels
            wanted.setdefault(src_label, []).append(e.src)
            wanted.setdefault(dst_label, []).append(e.dst)
        found = {label: self._existing(label, ids) for label, ids in wanted.items()}
        for e in batch.edges:
            for label, nid in zip(e.labels, (e.src, e.dst), strict=True):
                if nid not in found[label]:
                    raise NotFoundError(f"{e.type} edge {e.src!r}->{e.dst!r}: no {label} {nid!r}")

    def _vector_blob(self, memory: Memory, dims: int) -> bytes | None:
        if memory.embedding is None:
            return None
        if len(memory.embedding) != dims:
            raise ValidationError(
                f"memory {memory.id!r} has a {len(memory.embedding)}-dim embedding; "
                f"the store uses {dims}"
            )
        vec = np.asarray(memory.embedding, dtype=np.float32)
        if not np.all(np.isfinite(vec)):
            raise ValidationError(f"memory {memory.id!r} has a non-finite embedding value")
        return unit_blob(vec)

    def _insert_memory(self, m: Memory, dims: int) -> None:
        doc = codec.dumps(m.model_dump(mode="json", exclude=set(DOC_EXCLUDE)))
        self._db.execute(
            _INSERT_MEMORY,
            (
                m.id,
                m.scope,
                m.status,
                m.agent,
                m.task,
                m.created_at.timestamp(),
                m.valid_from.timestamp(),
                _epoch(m.valid_to),
                doc,
                search_text(m),
                self._vector_blob(m, dims),
            ),
        )

    def _update_memories(self, updates: Sequence[MemoryUpdate], dims: int) -> None:
        """Read the rows once, apply the updates in order in Python, write them back at once."""
        rows: dict[str, tuple[int, dict[str, Any], bytes | None]] = {}
        for part in _chunks(list(dict.fromkeys(u.id for u in updates))):
            marks = ",".join("?" * len(part))
            for row in self._db.execute(
                f"SELECT rid, id, doc, embedding FROM memories WHERE id IN ({marks})", list(part)
            ):
                rows[row["id"]] = (row["rid"], codec.loads(row["doc"]), row["embedding"])
        current: dict[str, Memory] = {}
        for update in updates:
            if update.id not in rows:
                raise NotFoundError(f"no memory {update.id!r} to update")
            rid, data, blob = rows[update.id]
            data = {**data, **{k: v for k, v in update.changes.items() if k != "embedding"}}
            for name, amount in update.increments.items():
                data[name] = data.get(name, 0) + amount
            try:
                memory = Memory.model_validate(
                    {**data, "embedding": update.changes.get("embedding")}
                )
            except ValueError as exc:  # pydantic's error for a bad value in changes
                raise ValidationError(f"update of memory {update.id!r}: {exc}") from None
            if "embedding" in update.changes:
                blob = self._vector_blob(memory, dims)
            rows[update.id] = (rid, data, blob)
            current[update.id] = memory
        self._db.executemany(
            "UPDATE memories SET status=?, valid_to=?, doc=?, search_text=?, embedding=? "
            "WHERE rid=?",
            [
                (
                    m.status,
                    _epoch(m.valid_to),
                    codec.dumps(m.model_dump(mode="json", exclude=set(DOC_EXCLUDE))),
                    search_text(m),
                    rows[mid][2],
                    rows[mid][0],
                )
                for mid, m in current.items()
            ],
        )

    def _delete_memories(self, ids: Sequence[str]) -> None:
        src_types = [t for t, (s, _) in EDGE_TYPES.items() if s == MEMORY]
        dst_types = [t for t, (_, d) in EDGE_TYPES.items() if d == MEMORY]
        for mid in ids:
            row = self._db.execute("SELECT rid FROM memories WHERE id = ?", (mid,)).fetchone()
            if row is None:
                raise NotFoundError(f"no memory {mid!r} to delete")
            self._db.execute("DELETE FROM memories WHERE rid = ?", (row["rid"],))
            self._db.execute(
                f"DELETE FROM edges WHERE src = ? AND type IN ({','.join('?' * len(src_types))})",
                (mid, *src_types),
            )
            self._db.execute(
                f"DELETE FROM edges WHERE dst = ? AND type IN ({','.join('?' * len(dst_types))})",
                (mid, *dst_types),
            )
