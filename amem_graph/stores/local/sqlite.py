"""The SQLite file (schema, connection, error mapping, the recorded embedder) and keeping the
mirror in step with it: patched after our own commits, and after another connection's from the
change log that every write appends to in its own transaction (rebuilt only when the log no
longer reaches back to what the mirror has seen)."""

from __future__ import annotations

import gc
import logging
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TypeVar, cast

import numpy as np

from amem_graph.core import codec
from amem_graph.core.errors import (
    AmemGraphError,
    ConflictError,
    EmbedderMismatchError,
    StoreError,
    refuse_unless_positive,
)
from amem_graph.stores.base import SIBLING_EDGES, GraphStore
from amem_graph.stores.local import bm25_file
from amem_graph.stores.local.blocks import SCOPE_BLOCKS_BYTES
from amem_graph.stores.local.bm25 import BM25Index
from amem_graph.stores.local.heap import release_freed
from amem_graph.stores.local.mirror import _Mirror

SCHEMA_VERSION = "1"
#: what the mirror reads of a memory, but its text
_MIRROR_FIELDS = (
    "rid, id, scope, status, agent, task, created_at, valid_from, valid_to, embedding, "
    "coalesce(json_extract(doc, '$.importance'), 0.5) AS importance, "
    "coalesce(json_extract(doc, '$.successes'), 0) AS successes, "
    "coalesce(json_extract(doc, '$.failures'), 0) AS failures"
)
_MIRROR_COLUMNS = _MIRROR_FIELDS + ", search_text"
_CHUNK = 500
#: rows read per step when the mirror is built whole
_BUILD_CHUNK = 20_000
#: change-log rows (one per committed batch) kept for readers in other processes; a reader
#: further behind than this rebuilds its mirror whole
CHANGE_LOG_KEEP = 2000
#: a saved BM25 index naming changes to more than this share of the memories is not read:
#: the index is built from the text (and saved again)
_SAVED_STALE_SHARE = 0.25
#: the BM25 index is saved again once over this share of its documents were indexed from
#: text since it was last saved or read
_RESAVE_SHARE = 0.1
#: a build of this many memories or more ends with one full collection, which puts what it
#: kept in the oldest generation at once. Left to age, those objects were walked by the first
#: young collection after the build and again by a full one a few recalls later: pauses of
#: 300-550 ms inside two of the first recalls after opening 1M memories (bench/RESULTS.md,
#: "The BM25 index saved beside the file"). Small builds skip it: a full collection walks
#: every object of the process, the caller's too.
_COLLECT_AFTER = 20_000
_T = TypeVar("_T")
log = logging.getLogger(__name__)

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
CREATE TABLE IF NOT EXISTS changes(seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL);
"""


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _chunks(items: Sequence[_T], size: int = _CHUNK) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the mirror is built: the build makes a few objects
    a memory (ids, postings, hub sets), all of them kept, and each full collection on the way
    walks every one made so far (100k memories: 14 of them, 50-230 ms each, over 1.5 s of an
    open). It is switched back on as it was, whatever happens."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class LocalConnection:
    """The SQLite connection, its lock and the mirror every store method reads through."""

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        busy_timeout: float = 30.0,
        *,
        scope_blocks_bytes: int = SCOPE_BLOCKS_BYTES,
    ):
        refuse_unless_positive(scope_blocks_bytes, "scope_blocks_bytes", " (bytes)")
        #: the mirror's budget for scattered scopes' vectors kept between recalls
        self.scope_blocks_bytes = scope_blocks_bytes
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
            self._db.executemany(
                "INSERT OR IGNORE INTO meta(key, value) VALUES(?, ?)",
                [("schema_version", SCHEMA_VERSION), ("store_uid", uuid.uuid4().hex)],
            )
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open the embedded store at {self.path}: {exc}",
                hint="check the path is a writable file, not a directory or a foreign file",
            ) from exc
        self._mirror: _Mirror | None = None
        self._seen_version: int | None = None
        #: the last change-log row the mirror holds
        self._seen_seq = 0
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
        """The mirror, caught up with every other connection's commits since it was read.

        ``PRAGMA data_version`` tells whether anyone else committed; if so, the change log
        names what changed and only those memories and edges are read again (``_catch_up``),
        in one read transaction. Every read runs under the store's lock, so no thread of this
        process sees a mirror half patched; a patch that fails part way drops the mirror,
        which the next read builds whole.
        """
        version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        if self._mirror is None:
            self._mirror = self._build_mirror()
        elif version != self._seen_version:
            try:
                self._catch_up(self._mirror)
            except BaseException:
                self._mirror = None
                raise
        self._seen_version = version
        return self._mirror

    def _last_seq(self) -> int:
        return int(self._db.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0])

    def _build_mirror(self) -> _Mirror:
        """Rows and edges read in one read transaction: one snapshot, so a commit by another
        process between the two reads cannot leave edges to memories the mirror lacks. The
        BM25 index is read from ``<db>.bm25`` when that holds this store's state, else built
        from the memories' text (and saved, for a store of ``bm25_file.SAVE_MIN`` or more)."""
        with self._snapshot(), _collector_paused():
            self._seen_seq = self._last_seq()
            count = int(self._db.execute("SELECT count(*) FROM memories").fetchone()[0])
            saved = self._saved_text(count)
            mirror = _Mirror(self._dims() or 1, self.scope_blocks_bytes)
            mirror.reserve(count)
            scopes = self._db.execute("SELECT scope FROM memories ORDER BY rid").fetchall()
            mirror.sort_before_load([r[0] for r in scopes])
            fields = _MIRROR_COLUMNS if saved is None else _MIRROR_FIELDS
            rows = self._db.execute(f"SELECT {fields} FROM memories ORDER BY rid")
            while part := rows.fetchmany(_BUILD_CHUNK):
                mirror.load(part, text=saved is None)
            if saved is None:  # documents indexed in position order, into rows sorted by scope
                mirror.bm25.order_postings()
            marks = ",".join("?" * len(SIBLING_EDGES))
            edges = self._db.execute(
                f"SELECT type, src, dst FROM edges WHERE type IN ({marks})", SIBLING_EDGES
            )
            while found := edges.fetchmany(_BUILD_CHUNK):
                mirror.load_edges([(r[0], r[1], r[2]) for r in found])
            if saved is not None:
                self._restore_text(mirror, *saved)
            mirror.loaded()
        if count >= _COLLECT_AFTER and gc.isenabled():
            gc.collect()
        self._save_text(mirror)
        return mirror

    def _save_text(self, mirror: _Mirror) -> None:
        """Save the mirror's BM25 index as of the change-log row it has seen (``bm25_file``)
        when over ``_RESAVE_SHARE`` of it was indexed from text since it was last saved or
        read: after a build from text, or a process's own big ingest (saved at ``close``)."""
        n, index = len(mirror.ids), mirror.bm25
        if self.path == ":memory:" or n < bm25_file.SAVE_MIN or index.unsaved <= n * _RESAVE_SHARE:
            return
        body = self._change_body(self._seen_seq)
        if body is None:
            return
        rid_of_doc = np.empty(n, dtype=np.int64)
        rid_of_doc[mirror.vec_row[:n]] = mirror.rid[:n]
        path = self.path + ".bm25"
        bm25_file.write_saved(path, self._uid(), self._seen_seq, body, index, rid_of_doc)
        index.unsaved = 0
        release_freed()  # the export's arrays

    def _uid(self) -> str:
        return self._meta("store_uid") or ""

    def _change_body(self, seq: int) -> str | None:
        """The body of change-log row ``seq``; None once the log no longer holds it."""
        row = self._db.execute("SELECT body FROM changes WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else str(row["body"])

    def _saved_text(self, count: int) -> tuple[bm25_file.SavedIndex, set[str]] | None:
        """The saved BM25 index of this store, and the memories changed since it was saved
        (none when there is no usable file, or it is too far behind to be worth reading)."""
        if self.path == ":memory:" or count < bm25_file.SAVE_MIN:
            return None
        saved = bm25_file.read_saved(self.path + ".bm25", self._uid(), self._change_body)
        if saved is None:
            return None
        changed: set[str] = set()
        for (body,) in self._db.execute(
            "SELECT body FROM changes WHERE seq > ? ORDER BY seq", (saved.seq,)
        ):
            changed.update(codec.loads(body)["m"])
            if len(changed) > count * _SAVED_STALE_SHARE:
                return None
        return saved, changed

    def _restore_text(
        self, mirror: _Mirror, saved: bm25_file.SavedIndex, changed: set[str]
    ) -> None:
        """Put the saved index in the mirror, then index again from their stored text the
        memories changed since it was saved and any row it does not hold."""
        n = len(mirror.ids)
        mirror.bm25 = index = BM25Index.restore(saved.arrays, mirror.rid[:n], mirror.vec_row[:n])
        stale = {i for mid in changed if (i := mirror.pos.get(mid)) is not None}
        stale.update(i for i, terms in enumerate(index.doc_terms) if terms is None)
        at = sorted(stale)
        doc_of_rid = dict(zip(mirror.rid[at].tolist(), mirror.vec_row[at].tolist(), strict=True))
        for part in _chunks(list(doc_of_rid)):
            marks = ",".join("?" * len(part))
            for rid, text in self._db.execute(
                f"SELECT rid, search_text FROM memories WHERE rid IN ({marks})", list(part)
            ):
                doc = doc_of_rid[rid]
                if not index.indexed_as(doc, text):
                    index.set(doc, text)

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """The reads inside see one state of the file: a read transaction, unless one (or a
        write) is already open on this connection."""
        own = not self._db.in_transaction
        if own:
            self._db.execute("BEGIN")
        try:
            yield
        finally:
            if own:
                self._db.execute("COMMIT")

    def _catch_up(self, mirror: _Mirror) -> None:
        """Apply the change log past ``_seen_seq``: each named memory and edge is read as it is
        now (so applying a change twice, or one of our own, changes nothing), all in one read
        transaction. A log trimmed past what the mirror has seen, or a newly recorded
        embedder, means a whole rebuild."""
        with self._snapshot():
            first = self._db.execute("SELECT min(seq) FROM changes").fetchone()[0]
            rows = self._db.execute(
                "SELECT seq, body FROM changes WHERE seq > ? ORDER BY seq", (self._seen_seq,)
            ).fetchall()
            behind = rows and first is not None and int(first) > self._seen_seq + 1
            if behind or (self._dims() or 1) != mirror.dims:
                self._mirror = self._build_mirror()
                return
            memories: dict[str, None] = {}
            edges: dict[tuple[str, str, str, str], None] = {}
            for row in rows:
                body = codec.loads(row["body"])
                memories.update(dict.fromkeys(body["m"]))
                edges.update(dict.fromkeys(tuple(e) for e in body["e"]))
            for mid in self._refresh_rows(memories):
                mirror.remove_memory(mid)
            # logs written before only sibling edges were logged hold the others too
            self._refresh_edges(mirror, [key for key in edges if key[0] in SIBLING_EDGES])
            if rows:
                self._seen_seq = int(rows[-1]["seq"])

    def _refresh_edges(self, mirror: _Mirror, keys: Sequence[tuple[str, str, str, str]]) -> None:
        """Each sibling edge's hub membership as stored now (kept, or removed when gone)."""
        for part in _chunks(keys):
            where = " OR ".join("(type=? AND src=? AND dst=? AND key=?)" for _ in part)
            params = [v for key in part for v in key]
            found = {
                (row["type"], row["src"], row["dst"], row["key"])
                for row in self._db.execute(
                    f"SELECT type, src, dst, key FROM edges WHERE {where}", params
                )
            }
            for key in part:
                if key in found:
                    mirror.add_edge(*key[:3])
                else:
                    mirror.remove_edge(*key[:3])

    def _refresh_rows(self, ids: Iterable[str]) -> set[str]:
        """Re-read these memories into the mirror; the ones no longer stored (dropped)."""
        gone: set[str] = set()
        if self._mirror is None:
            return gone
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
                gone.add(mid)
        return gone

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
                self._save_on_close()
                self._closed = True
                self._db.close()
                self._mirror = None

    def _save_on_close(self) -> None:
        """Save the BM25 index a process grew by its own writes (an ingest), so the next open
        reads it rather than the text again; not when another connection committed since the
        mirror last looked (catching up could mean a whole rebuild, at close)."""
        if self._mirror is None:
            return
        try:
            if int(self._db.execute("PRAGMA data_version").fetchone()[0]) == self._seen_version:
                self._save_text(self._mirror)
        except Exception as exc:  # a cache not saved never fails the close
            log.warning("the BM25 index of %s was not saved: %s", self.path, exc)
