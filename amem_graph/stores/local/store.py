"""The embedded default store: SQLite is the truth, numpy and networkx are its read caches.

- SQLite (WAL) holds nodes, edges, float32 vectors and each memory's searchable text. Every
  ``apply`` is one ``BEGIN IMMEDIATE`` transaction, so a batch is all-or-nothing and writers
  from several processes are serialised by SQLite (a writer waits up to ``busy_timeout``
  seconds, then gets ``ConflictError``): no write is lost.
- Vector search runs on a numpy matrix, BM25 on a numpy inverted index (``bm25.py``; FTS5's
  ``bm25()`` was ~10x slower at 100k memories) and traversal on a networkx graph, all mirrored
  from SQLite. Before every read the store checks ``PRAGMA data_version``; when another connection
  (or process) has committed, the mirrors are rebuilt, so reads are never stale. The store's own
  commits update the mirrors in place.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import networkx as nx
import numpy as np

from amem_graph.core import codec
from amem_graph.core.errors import (
    AmemGraphError,
    ConflictError,
    EmbedderMismatchError,
    NotFoundError,
    StoreError,
    ValidationError,
)
from amem_graph.core.models import Memory
from amem_graph.core.schema import EDGE_TYPES, MEMORY, check_identifier, check_label
from amem_graph.core.seeding import SeedPlan
from amem_graph.core.text import search_text
from amem_graph.stores.base import (
    SIBLING_EDGES,
    Direction,
    Edge,
    Expansion,
    MemoryFilter,
    MemoryUpdate,
    Neighbourhood,
    Node,
    NodeWrite,
    RankFields,
    SearchResult,
    WriteBatch,
    neighbourhood_by_parts,
    search_by_parts,
    search_expand_by_parts,
)
from amem_graph.stores.local.bm25 import BM25Index

SCHEMA_VERSION = "1"
_MIRROR_COLUMNS = (
    "id, scope, status, agent, task, created_at, valid_from, valid_to, search_text, embedding, "
    "coalesce(json_extract(doc, '$.importance'), 0.5) AS importance, "
    "coalesce(json_extract(doc, '$.successes'), 0) AS successes, "
    "coalesce(json_extract(doc, '$.failures'), 0) AS failures"
)
_CHUNK = 500
_T = TypeVar("_T")

_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories(
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    status TEXT NOT NULL,
    agent TEXT,
    task TEXT,
    created_at REAL NOT NULL,
    valid_from REAL NOT NULL,
    valid_to REAL,
    doc TEXT NOT NULL,
    search_text TEXT NOT NULL,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS memories_scope_status ON memories(scope, status);
CREATE INDEX IF NOT EXISTS memories_created ON memories(created_at);
CREATE TABLE IF NOT EXISTS nodes(
    label TEXT NOT NULL, id TEXT NOT NULL, props TEXT NOT NULL, PRIMARY KEY(label, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS edges(
    type TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL, key TEXT NOT NULL DEFAULT '',
    props TEXT NOT NULL, PRIMARY KEY(type, src, dst, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst, type);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src, type);
"""

#: mirror column -> value of an empty slot
_GROW_FILL: dict[str, float] = {
    "vectors": 0.0,
    "alive": 0.0,
    "has_vec": 0.0,
    "scope": -1,
    "status": -1,
    "agent": -1,
    "task": -1,
    "valid_from": 0.0,
    "valid_to": np.inf,
    "created_at": 0.0,
    "importance": 0.0,
    "successes": 0.0,
    "failures": 0.0,
}
_STATUS_CODES = {"active": 0, "quarantined": 1, "retracted": 2, "superseded": 3}
_STATUS_NAMES = {code: name for name, code in _STATUS_CODES.items()}


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _chunks(items: Sequence[_T], size: int = _CHUNK) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class _Mirror:
    """numpy columns for filtered vector search plus a networkx graph of all edges."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.pos: dict[str, int] = {}
        self.ids: list[str] = []
        cap = 1024
        self.vectors = np.zeros((cap, dims), dtype=np.float32)
        self.alive = np.zeros(cap, dtype=bool)
        self.has_vec = np.zeros(cap, dtype=bool)
        self.scope = np.full(cap, -1, dtype=np.int32)
        self.status = np.full(cap, -1, dtype=np.int8)
        self.agent = np.full(cap, -1, dtype=np.int32)
        self.task = np.full(cap, -1, dtype=np.int32)
        self.valid_from = np.zeros(cap, dtype=np.float64)
        self.valid_to = np.full(cap, np.inf, dtype=np.float64)
        self.created_at = np.zeros(cap, dtype=np.float64)
        #: what recall's priors read (``RankFields``), so ranking needs no document
        self.importance = np.zeros(cap, dtype=np.float64)
        self.successes = np.zeros(cap, dtype=np.float64)
        self.failures = np.zeros(cap, dtype=np.float64)
        #: via edge type -> hub id -> member memory ids, and memory id -> its hubs
        self.members: dict[str, dict[str, set[str]]] = {t: {} for t in SIBLING_EDGES}
        self.hubs: dict[str, dict[str, set[str]]] = {t: {} for t in SIBLING_EDGES}
        self.codes: dict[str, dict[str, int]] = {"scope": {}, "agent": {}, "task": {}}
        self.graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self.bm25 = BM25Index()
        self._masks: dict[MemoryFilter, np.ndarray] = {}
        self._hub_pos: dict[tuple[str, str], np.ndarray] = {}

    def _code(self, column: str, value: str | None) -> int:
        if value is None:
            return -1
        book = self.codes[column]
        return book.setdefault(value, len(book))

    def _grow(self, needed: int) -> None:
        cap = len(self.alive)
        if needed <= cap:
            return
        new = max(needed, cap * 2)
        for name, fill in _GROW_FILL.items():
            old = getattr(self, name)
            arr = np.full((new, *old.shape[1:]), fill, dtype=old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)

    def upsert(self, row: sqlite3.Row) -> None:
        self._masks.clear()
        mid = row["id"]
        i = self.pos.get(mid)
        if i is None:
            i = len(self.ids)
            self._grow(i + 1)
            self.ids.append(mid)
            self.pos[mid] = i
        self.alive[i] = True
        blob = row["embedding"]
        if blob is not None and len(blob) == 4 * self.dims:
            self.vectors[i] = np.frombuffer(blob, dtype=np.float32)
            self.has_vec[i] = True
        else:
            self.has_vec[i] = False
        self.scope[i] = self._code("scope", row["scope"])
        self.status[i] = _STATUS_CODES[row["status"]]
        self.agent[i] = self._code("agent", row["agent"])
        self.task[i] = self._code("task", row["task"])
        self.valid_from[i] = row["valid_from"]
        self.valid_to[i] = np.inf if row["valid_to"] is None else row["valid_to"]
        self.created_at[i] = row["created_at"]
        self.importance[i] = row["importance"]
        self.successes[i] = row["successes"]
        self.failures[i] = row["failures"]
        if self.bm25.text(i) != row["search_text"]:  # status and credit changes keep the text
            self.bm25.set(i, row["search_text"])

    def drop(self, mid: str) -> None:
        self._masks.clear()
        i = self.pos.get(mid)
        if i is not None:
            self.alive[i] = False
            self.has_vec[i] = False
            self.bm25.remove(i)

    def _codes_for(self, column: str, values: Sequence[str]) -> list[int]:
        book = self.codes[column]
        return [book[v] for v in values if v in book]

    def mask(self, flt: MemoryFilter) -> np.ndarray:
        """Positions the filter admits. The part without ``as_of`` is memoised until the next
        change (a handful of filters are in use at a time); validity is cheap and per call."""
        key = replace(flt, as_of=None)
        cached = self._masks.get(key)
        if cached is None:
            if len(self._masks) > 32:
                self._masks.clear()
            cached = self._masks[key] = self._compute_mask(key)
        if flt.as_of is None:
            return cached
        n = len(self.ids)
        t = flt.as_of.timestamp()
        return cached & (self.valid_from[:n] <= t) & (self.valid_to[:n] > t)

    def _compute_mask(self, flt: MemoryFilter) -> np.ndarray:
        n = len(self.ids)
        m = self.alive[:n].copy()
        if flt.scopes is not None:
            m &= np.isin(self.scope[:n], self._codes_for("scope", flt.scopes))
        if flt.statuses is not None:
            codes = [_STATUS_CODES[s] for s in flt.statuses if s in _STATUS_CODES]
            m &= np.isin(self.status[:n], codes)
        if flt.agents is not None:
            m &= np.isin(self.agent[:n], self._codes_for("agent", flt.agents))
        if flt.tasks is not None:
            m &= np.isin(self.task[:n], self._codes_for("task", flt.tasks))
        return m

    def top_k(self, scores: np.ndarray, mask: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k best admitted positions, by score then id."""
        allowed = np.flatnonzero(mask)
        if not len(allowed):
            return []
        if len(allowed) > k:
            part = np.argpartition(-scores[allowed], k - 1)[:k]
            cutoff = scores[allowed[part]].min()
            allowed = allowed[scores[allowed] >= cutoff]  # keep ties at the cut for id order
        ranked = sorted(allowed.tolist(), key=lambda i: (-float(scores[i]), self.ids[i]))[:k]
        return [(self.ids[i], float(scores[i])) for i in ranked]

    def add_edge(self, etype: str, src: str, dst: str, key: str, props: dict[str, Any]) -> None:
        src_label, dst_label = EDGE_TYPES[etype]
        self.graph.add_edge((src_label, src), (dst_label, dst), key=(etype, key), props=props)
        if etype in self.members:
            self.members[etype].setdefault(dst, set()).add(src)
            self.hubs[etype].setdefault(src, set()).add(dst)
            self._hub_pos.pop((etype, dst), None)

    def remove_edge(self, etype: str, src: str, dst: str, key: str) -> None:
        src_label, dst_label = EDGE_TYPES[etype]
        if self.graph.has_edge((src_label, src), (dst_label, dst), key=(etype, key)):
            self.graph.remove_edge((src_label, src), (dst_label, dst), key=(etype, key))
        if etype in self.members:
            self.members[etype].get(dst, set()).discard(src)
            self.hubs[etype].get(src, set()).discard(dst)
            self._hub_pos.pop((etype, dst), None)

    def siblings(self, mid: str, via: str, mask: np.ndarray, limit: int) -> list[tuple[str, str]]:
        """Admitted memories sharing a ``via`` hub with ``mid``, nearest in time first."""
        i = self.pos.get(mid)
        if i is None:
            return []
        t = self.created_at[i]
        found: list[tuple[float, str, str]] = []
        for hub in sorted(self.hubs[via].get(mid, ())):
            idx = self._hub_pos.get((via, hub))
            if idx is None:
                members = self.members[via].get(hub, set())
                idx = np.fromiter((self.pos[o] for o in members), dtype=np.int64)
                self._hub_pos[(via, hub)] = idx
            idx = idx[mask[idx] & (idx != i)]
            if len(idx) > limit:
                gaps = np.abs(self.created_at[idx] - t)
                cut = np.partition(gaps, limit - 1)[limit - 1]
                idx = idx[gaps <= cut]
            for j in idx.tolist():
                found.append((abs(float(self.created_at[j]) - t), self.ids[j], hub))
        found.sort()
        seen: set[str] = set()
        out: list[tuple[str, str]] = []
        for _, other, hub in found:
            if other not in seen:
                seen.add(other)
                out.append((other, hub))
                if len(out) == limit:
                    break
        return out


class LocalStore:
    """SQLite + numpy + networkx store; ``path=":memory:"`` keeps everything in RAM."""

    backend = "local"

    def __init__(self, path: str | os.PathLike[str] = ":memory:", busy_timeout: float = 30.0):
        self.path = str(path)
        self._lock = threading.RLock()
        try:
            if self.path != ":memory:":
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            self._db.row_factory = sqlite3.Row
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(_DDL)
            self._db.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?)",
                (SCHEMA_VERSION,),
            )
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open the embedded store at {self.path}: {exc}",
                hint="check the path is a writable file, not a directory or a foreign file",
            ) from exc
        self._mirror: _Mirror | None = None
        self._seen_version: int | None = None
        self._closed = False

    # -- plumbing -------------------------------------------------------------------------

    def _guard(self, what: str, fn: Callable[[], _T]) -> _T:
        """Run ``fn`` under the lock, turning sqlite3 errors into AmemGraphErrors."""
        with self._lock:
            if self._closed:
                raise StoreError("the store is closed")
            try:
                return fn()
            except AmemGraphError:
                raise
            except sqlite3.IntegrityError as exc:
                raise ConflictError(f"{what} conflicts with stored data: {exc}") from exc
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    raise ConflictError(
                        f"{what}: the store is busy (another writer holds it)",
                        hint="retry, or raise busy_timeout",
                    ) from exc
                raise StoreError(f"{what} failed: {exc}") from exc
            except sqlite3.Error as exc:
                raise StoreError(f"{what} failed: {exc}") from exc

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def _dims(self) -> int:
        dims = self._meta("embedder_dims")
        return int(dims) if dims is not None else 0

    def _fresh_mirror(self) -> _Mirror:
        """The mirrors, rebuilt if any other connection committed since they were built."""
        version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        if self._mirror is None or version != self._seen_version:
            self._mirror = self._build_mirror()
            self._seen_version = version
        return self._mirror

    def _build_mirror(self) -> _Mirror:
        mirror = _Mirror(self._dims() or 1)
        for row in self._db.execute(f"SELECT {_MIRROR_COLUMNS} FROM memories"):
            mirror.upsert(row)
        for row in self._db.execute("SELECT type, src, dst, key, props FROM edges"):
            mirror.add_edge(
                row["type"], row["src"], row["dst"], row["key"], codec.loads(row["props"])
            )
        return mirror

    def _refresh_rows(self, ids: Iterable[str]) -> None:
        if self._mirror is None:
            return
        wanted = list(dict.fromkeys(ids))
        for part in _chunks(wanted):
            marks = ",".join("?" * len(part))
            found = set()
            for row in self._db.execute(
                f"SELECT {_MIRROR_COLUMNS} FROM memories WHERE id IN ({marks})",
                list(part),
            ):
                self._mirror.upsert(row)
                found.add(row["id"])
            for mid in set(part) - found:
                self._mirror.drop(mid)

    # -- embedder -------------------------------------------------------------------------

    def embedder_info(self) -> tuple[str, int] | None:
        def run() -> tuple[str, int] | None:
            name = self._meta("embedder_name")
            return None if name is None else (name, self._dims())

        return self._guard("reading the embedder", run)

    def ensure_embedder(self, name: str, dims: int) -> None:
        def run() -> None:
            recorded = self.embedder_info()
            if recorded is None:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)",
                        [("embedder_name", name), ("embedder_dims", str(dims))],
                    )
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._mirror = None
                return
            if recorded != (name, dims):
                raise EmbedderMismatchError(
                    f"the store at {self.path} was built with embedder {recorded[0]!r} "
                    f"({recorded[1]} dims), not {name!r} ({dims} dims)",
                    hint=f"open it with the embedder it was built with, or export and re-import "
                    f"into a new store to re-embed with {name!r}",
                )

        self._guard("recording the embedder", run)

    # -- writes ---------------------------------------------------------------------------

    def apply(self, batch: WriteBatch) -> None:
        if batch.is_empty():
            return

        def run() -> None:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                self._write(batch)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            # Our own commit does not bump data_version for this connection: patch mirrors.
            if self._mirror is not None:
                touched = [m.id for m in batch.memories] + [u.id for u in batch.memory_updates]
                self._refresh_rows(touched + list(batch.delete_memories))
                for e in batch.edges:
                    self._mirror.add_edge(e.type, e.src, e.dst, e.key, dict(e.props))
                for etype, src, dst, key in batch.delete_edges:
                    self._mirror.remove_edge(etype, src, dst, key)
                for mid in batch.delete_memories:
                    node = (MEMORY, mid)
                    if self._mirror.graph.has_node(node):
                        self._mirror.graph.remove_node(node)

        self._guard("writing a batch", run)

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
            "ON CONFLICT(type, src, dst, key) DO UPDATE SET props = json_patch(edges.props, "
            "excluded.props)",
            [(e.type, e.src, e.dst, e.key, codec.dumps(e.props)) for e in batch.edges],
        )
        db.executemany(
            "DELETE FROM edges WHERE type=? AND src=? AND dst=? AND key=?", batch.delete_edges
        )
        if batch.delete_memories:
            self._delete_memories(batch.delete_memories)

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
        norm = float(np.linalg.norm(vec))
        if norm > 0:
            vec = vec / norm
        return vec.tobytes()

    def _insert_memory(self, m: Memory, dims: int) -> None:
        doc = codec.dumps(m.model_dump(mode="json", exclude={"embedding", "confidence"}))
        self._db.execute(
            "INSERT INTO memories(id, scope, status, agent, task, created_at, valid_from, "
            "valid_to, doc, search_text, embedding) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    codec.dumps(m.model_dump(mode="json", exclude={"embedding", "confidence"})),
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

    # -- reads ----------------------------------------------------------------------------

    @staticmethod
    def _memory_from_row(row: sqlite3.Row, with_embedding: bool = True) -> Memory:
        memory = Memory.model_validate_json(row["doc"])
        blob = row["embedding"] if with_embedding else None
        if blob is not None:
            vector = np.frombuffer(blob, dtype=np.float32).tolist()
            memory = memory.model_copy(update={"embedding": vector})
        return memory

    def get_memories(self, ids: Sequence[str], *, embeddings: bool = True) -> dict[str, Memory]:
        column = "embedding" if embeddings else "NULL AS embedding"

        def run() -> dict[str, Memory]:
            out: dict[str, Memory] = {}
            unique = list(dict.fromkeys(ids))
            for part in _chunks(unique):
                marks = ",".join("?" * len(part))
                for row in self._db.execute(
                    f"SELECT doc, {column} FROM memories WHERE id IN ({marks})", list(part)
                ):
                    m = self._memory_from_row(row)
                    out[m.id] = m
            return out

        return self._guard("reading memories", run)

    @staticmethod
    def _filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for column, values in (
            ("scope", flt.scopes),
            ("status", flt.statuses),
            ("agent", flt.agents),
            ("task", flt.tasks),
        ):
            if values is not None:
                clauses.append(f"{alias}.{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        if flt.as_of is not None:
            t = flt.as_of.timestamp()
            clauses.append(
                f"{alias}.valid_from <= ? AND ({alias}.valid_to IS NULL OR {alias}.valid_to > ?)"
            )
            params.extend([t, t])
        return (" AND ".join(clauses) or "1"), params

    def find_memories(self, flt: MemoryFilter, limit: int | None = None) -> list[Memory]:
        def run() -> list[Memory]:
            where, params = self._filter_sql(flt)
            sql = f"SELECT doc, embedding FROM memories m WHERE {where} ORDER BY created_at, id"
            if limit is not None:
                sql += " LIMIT ?"
                params.append(int(limit))
            return [self._memory_from_row(r) for r in self._db.execute(sql, params)]

        return self._guard("listing memories", run)

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, Node]:
        check_label(label)

        def run() -> dict[str, Node]:
            out: dict[str, Node] = {}
            for part in _chunks(list(dict.fromkeys(ids))):
                marks = ",".join("?" * len(part))
                for row in self._db.execute(
                    f"SELECT id, props FROM nodes WHERE label = ? AND id IN ({marks})",
                    [label, *part],
                ):
                    out[row["id"]] = Node(label, row["id"], codec.loads(row["props"]))
            return out

        return self._guard(f"reading {label} nodes", run)

    def find_nodes(self, label: str, where: Mapping[str, Any] | None = None) -> list[Node]:
        check_label(label)
        conditions = dict(where or {})
        for key in conditions:
            check_identifier(key, "property name")

        def run() -> list[Node]:
            nodes = [
                Node(label, row["id"], codec.loads(row["props"]))
                for row in self._db.execute(
                    "SELECT id, props FROM nodes WHERE label = ? ORDER BY id", (label,)
                )
            ]
            return [n for n in nodes if all(n.props.get(k) == v for k, v in conditions.items())]

        return self._guard(f"listing {label} nodes", run)

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
            graph = self._fresh_mirror().graph
            out: list[Edge] = []
            seen: set[tuple[str, str, str, str]] = set()
            for etype in wanted_types:
                src_label, dst_label = EDGE_TYPES[etype]
                for nid in id_list:
                    found: list[tuple[Any, Any, Any, Any]] = []
                    if direction in ("out", "both") and graph.has_node((src_label, nid)):
                        found += graph.out_edges((src_label, nid), keys=True, data="props")
                    if direction in ("in", "both") and graph.has_node((dst_label, nid)):
                        found += graph.in_edges((dst_label, nid), keys=True, data="props")
                    for u, v, key, props in found:
                        if key[0] != etype:
                            continue
                        ident = (etype, u[1], v[1], key[1])
                        if ident not in seen:
                            seen.add(ident)
                            out.append(Edge(etype, u[1], v[1], dict(props), key[1]))
            return out

        return self._guard("reading edges", run)

    def vector_search(
        self, vector: Sequence[float], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]:
        if k <= 0:
            return []

        def run() -> list[tuple[str, float]]:
            mirror = self._fresh_mirror()
            n = len(mirror.ids)
            if n == 0:
                return []
            q = np.asarray(vector, dtype=np.float32)
            if q.shape != (mirror.dims,):
                raise ValidationError(
                    f"query vector has {q.size} dimensions, the store uses {mirror.dims}"
                )
            if not np.all(np.isfinite(q)):
                raise ValidationError("query vector has a non-finite value")
            norm = float(np.linalg.norm(q))
            if norm > 0:
                q = q / norm
            scores = mirror.vectors[:n] @ q
            return mirror.top_k(scores, mirror.mask(flt) & mirror.has_vec[:n], k)

        return self._guard("searching vectors", run)

    def text_search(self, query: str, k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        if k <= 0:
            return []

        def run() -> list[tuple[str, float]]:
            mirror = self._fresh_mirror()
            n = len(mirror.ids)
            scores = mirror.bm25.scores(query, n)
            return mirror.top_k(scores, mirror.mask(flt) & (scores > 0), k)

        return self._guard("searching text", run)

    def search(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
    ) -> SearchResult:
        return search_by_parts(self, vector, query, n_vector, n_text, flt)

    def neighbourhood(
        self, ids: Sequence[str], flt: MemoryFilter, limit: int, fetch: Sequence[str] = ()
    ) -> Neighbourhood:
        return neighbourhood_by_parts(self, ids, flt, limit, fetch)

    def search_expand(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
        plan: SeedPlan,
    ) -> Expansion:
        return search_expand_by_parts(self, vector, query, n_vector, n_text, flt, plan)

    def filter_ids(self, ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        id_list = list(ids)

        def run() -> set[str]:
            mirror = self._fresh_mirror()
            mask = mirror.mask(flt)
            return {i for i in id_list if i in mirror.pos and bool(mask[mirror.pos[i]])}

        return self._guard("filtering memories", run)

    def rank_fields(self, ids: Iterable[str], flt: MemoryFilter) -> dict[str, RankFields]:
        id_list = list(dict.fromkeys(ids))

        def run() -> dict[str, RankFields]:
            mirror = self._fresh_mirror()
            mask = mirror.mask(flt)
            out: dict[str, RankFields] = {}
            for mid in id_list:
                i = mirror.pos.get(mid)
                if i is not None and mask[i]:
                    out[mid] = RankFields(
                        float(mirror.created_at[i]),
                        float(mirror.importance[i]),
                        float(mirror.successes[i]),
                        float(mirror.failures[i]),
                    )
            return out

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

    def counts(self) -> dict[str, int]:
        def run() -> dict[str, int]:
            out: dict[str, int] = {}
            n = self._db.execute("SELECT count(*) FROM memories").fetchone()[0]
            if n:
                out[MEMORY] = int(n)
            for row in self._db.execute("SELECT label, count(*) AS c FROM nodes GROUP BY label"):
                out[row["label"]] = int(row["c"])
            for row in self._db.execute("SELECT type, count(*) AS c FROM edges GROUP BY type"):
                out[row["type"]] = int(row["c"])
            return out

        return self._guard("counting", run)

    def iter_nodes(self) -> Iterator[Node]:
        rows = self._guard(
            "exporting nodes",
            lambda: self._db.execute(
                "SELECT label, id, props FROM nodes ORDER BY label, id"
            ).fetchall(),
        )
        for row in rows:
            yield Node(row["label"], row["id"], codec.loads(row["props"]))

    def iter_edges(self) -> Iterator[Edge]:
        rows = self._guard(
            "exporting edges",
            lambda: self._db.execute(
                "SELECT type, src, dst, key, props FROM edges ORDER BY type, src, dst, key"
            ).fetchall(),
        )
        for row in rows:
            yield Edge(row["type"], row["src"], row["dst"], codec.loads(row["props"]), row["key"])

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()
                self._mirror = None
