"""The SQLite file (schema, connection, error mapping, the recorded embedder) and keeping the
mirror in step with it: rebuilt when another connection committed, patched after our own."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TypeVar, cast

from amem_graph.core import codec
from amem_graph.core.errors import AmemGraphError, ConflictError, EmbedderMismatchError, StoreError
from amem_graph.stores.base import GraphStore
from amem_graph.stores.local.mirror import _Mirror

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


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _chunks(items: Sequence[_T], size: int = _CHUNK) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class LocalConnection:
    """The SQLite connection, its lock and the mirror every store method reads through."""

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
                    hint="open it with the embedder it was built with, or move it to another "
                    "model: `amem export --out g.jsonl`, then `amem --store NEW --embedder "
                    "NAME import g.jsonl --re-embed`",
                )

        self._guard("recording the embedder", run)

    def _whole(self) -> GraphStore:
        """This part as the whole store (each part is only ever mixed into ``LocalStore``), for
        the ``stores.base`` helpers made of single-path calls."""
        return cast("GraphStore", self)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()
                self._mirror = None
