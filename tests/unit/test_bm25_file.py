"""The BM25 index saved beside the SQLite file: read back for the state it was written at,
brought up to date from the change log, and never read for another state."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from amem_graph import MemoryGraph
from amem_graph.stores.base import MemoryUpdate, WriteBatch
from amem_graph.stores.local import bm25_file
from amem_graph.stores.local.bm25 import SAVED, BM25Index
from amem_graph.stores.local.store import LocalStore

QUERIES = ["deploy cache", "rollback migration staging", "dogs walk park", "index", "zzz"]
WORDS = [
    "deploy",
    "cache",
    "index",
    "rollback",
    "migration",
    "staging",
    "dogs",
    "walk",
    "park",
    "server",
    "tenant",
]


def _text(i: int) -> str:
    rng = np.random.default_rng(i)
    return " ".join(rng.choice(WORDS, size=3 + i % 7).tolist()) + f" note{i % 13}"


@pytest.fixture(autouse=True)
def _save_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_file, "SAVE_MIN", 1)


def _store(mg: MemoryGraph) -> LocalStore:
    assert isinstance(mg.store, LocalStore)
    return mg.store


def _fill(path: Path, n: int = 120, scopes: int = 1) -> None:
    """``n`` memories dealt over ``scopes`` scopes ("s" alone by default)."""
    with MemoryGraph.open(path, embedder="hashing") as mg:
        scope = (lambda i: "s") if scopes == 1 else (lambda i: f"s{i % scopes}")
        mg.remember_many(
            [{"content": _text(i), "id": f"m{i}", "scope": scope(i)} for i in range(n)]
        )
        mg.recall("deploy")  # builds the mirror, which saves its index


def _assert_scores_as_built(store: LocalStore) -> None:
    """The mirror's BM25 scores every memory as an index built from the stored text does."""
    mirror = store._fresh_mirror()
    reference = BM25Index()
    rows = store._db.execute("SELECT id, search_text FROM memories").fetchall()
    reference.set_many([mirror.pos[r[0]] for r in rows], [r[1] for r in rows])
    n = len(mirror.ids)
    for query in QUERIES:
        assert np.array_equal(mirror.text_scores(query), reference.scores(query, n)), query
    assert (mirror.bm25.documents, mirror.bm25.total_length) == (
        reference.documents,
        reference.total_length,
    )


def _restored(store: LocalStore) -> int:
    """How many documents of the mirror's index came from the saved file."""
    return sum(terms is SAVED for terms in store._fresh_mirror().bm25.doc_terms)


def test_a_reopened_store_reads_its_saved_index_and_scores_as_a_fresh_build(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    _fill(path)
    assert (tmp_path / "m.db.bm25").exists()
    with MemoryGraph.open(path, embedder="hashing") as mg:
        store = _store(mg)
        assert _restored(store) == 120
        _assert_scores_as_built(store)
        assert mg.recall("rollback migration", k=3, scope="s")


def test_a_store_sorted_by_scope_as_it_is_built_restores_its_index_in_that_order(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    _fill(path, scopes=10)  # tenants writing at once: each scope's rows scattered
    for restored in (120, 0):  # read back, then (the file gone) built from text
        with MemoryGraph.open(path, embedder="hashing") as mg:
            store = _store(mg)
            mirror = store._fresh_mirror()
            assert mirror.permuted and mirror.sorted_upto == 120  # sorted as it was loaded
            assert _restored(store) == restored
            assert all((np.diff(p.docs[: p.n]) > 0).all() for p in mirror.bm25.postings.values())
            _assert_scores_as_built(store)
            for mid, blob in store._db.execute("SELECT id, embedding FROM memories"):
                stored = np.frombuffer(blob, dtype=np.float32)
                assert np.array_equal(mirror.vectors_at(np.array([mirror.pos[mid]]))[0], stored)
        (tmp_path / "m.db.bm25").unlink()
    with MemoryGraph.open(path, embedder="hashing") as mg:
        store = _store(mg)
        hits = mg.recall("rollback migration", k=5, scope="s3")
        assert hits and {h.memory.scope for h in hits} == {"s3"}
        mg.remember_many([{"content": _text(i), "id": f"n{i}", "scope": "s3"} for i in range(9)])
        _assert_scores_as_built(store)


def test_writes_after_the_save_are_applied_from_the_change_log(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _fill(path)
    with MemoryGraph.open(path, embedder="hashing") as mg:  # reads the file, writes more
        store = _store(mg)
        store._fresh_mirror()
        store.apply(WriteBatch(memory_updates=[MemoryUpdate("m3", {"content": "tenant walk"})]))
        store.apply(WriteBatch(memory_updates=[MemoryUpdate("m4", {"status": "archived"})]))
        mg.forget("m5", reason="test")
        mg.remember("a quokka joined the tenant", id="new", scope="s")
    with MemoryGraph.open(path, embedder="hashing") as mg:
        store = _store(mg)
        assert _restored(store) == 120 - 2  # m3 re-indexed, m5 gone; m4 kept its text
        _assert_scores_as_built(store)
        assert mg.recall("quokka", k=1, scope="s")[0].memory.id == "new"
        assert "m5" not in store._fresh_mirror().pos
        # a restored document re-indexed or removed again in this process
        store.apply(WriteBatch(memory_updates=[MemoryUpdate("m7", {"content": "park dogs"})]))
        mg.forget("m8", reason="test")
        _assert_scores_as_built(store)


def test_a_process_saves_at_close_what_its_own_writes_indexed(tmp_path: Path) -> None:
    path, saved = tmp_path / "m.db", tmp_path / "m.db.bm25"
    with MemoryGraph.open(path, embedder="hashing") as mg:
        mg.recall("deploy", scope="s")  # the mirror is built while the store is empty
        mg.remember_many([{"content": _text(i), "id": f"m{i}", "scope": "s"} for i in range(120)])
        assert not saved.exists()
    with MemoryGraph.open(path, embedder="hashing") as mg:
        assert _restored(_store(mg)) == 120
    saved.unlink()
    with (
        MemoryGraph.open(path, embedder="hashing") as mg,
        MemoryGraph.open(path, embedder="hashing") as other,
    ):
        _store(mg)._fresh_mirror()  # built from text, and saved
        saved.unlink()
        mg.remember_many([{"content": _text(i), "id": f"x{i}", "scope": "s"} for i in range(20)])
        # a write that builds no mirror (which would save its own index)
        _store(other).apply(WriteBatch(memory_updates=[MemoryUpdate("m1", {"content": "o"})]))
        assert _store(other)._mirror is None
    assert not saved.exists()  # unseen: catching up at close could mean a whole rebuild


def test_a_saved_index_of_another_state_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path, other = tmp_path / "m.db", tmp_path / "other.db"
    _fill(path)
    _fill(other, n=40)
    saved = (tmp_path / "m.db.bm25").read_bytes()

    def reopened_restores() -> int:
        with MemoryGraph.open(path, embedder="hashing") as mg:
            store = _store(mg)
            _assert_scores_as_built(store)
            return _restored(store)

    (tmp_path / "m.db.bm25").write_bytes((tmp_path / "other.db.bm25").read_bytes())
    assert reopened_restores() == 0  # another store's file (and it is written anew)
    assert reopened_restores() == 120
    with monkeypatch.context() as patched:
        patched.setattr(bm25_file, "_PROBE", "another analyzer's words")
        assert reopened_restores() == 0
    (tmp_path / "m.db.bm25").write_bytes(saved)
    with sqlite3.connect(path) as db:  # the log no longer reaches back to the saved row
        db.execute("DELETE FROM changes")
    assert reopened_restores() == 0
    (tmp_path / "m.db.bm25").write_bytes(b"not an index at all")
    with caplog.at_level(logging.WARNING):
        assert reopened_restores() == 0
    assert "unreadable" in caplog.text


def test_a_store_far_ahead_of_its_saved_index_builds_it_from_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.db"
    _fill(path, n=40)
    with monkeypatch.context() as patched, MemoryGraph.open(path, embedder="hashing") as mg:
        patched.setattr(bm25_file, "write_saved", lambda *args: None)  # a process that died
        store = _store(mg)
        store._fresh_mirror()
        mg.remember_many([{"content": _text(i), "id": f"x{i}"} for i in range(40, 60)])
    with MemoryGraph.open(path, embedder="hashing") as mg:  # 20 of 60 changed: over a quarter
        assert _restored(_store(mg)) == 0
        _assert_scores_as_built(_store(mg))


def test_small_stores_and_unwritable_places_keep_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(bm25_file, "SAVE_MIN", 121)
    _fill(tmp_path / "small.db")
    assert not (tmp_path / "small.db.bm25").exists()
    monkeypatch.setattr(bm25_file, "SAVE_MIN", 1)

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "read-only", dst)

    monkeypatch.setattr(bm25_file.os, "replace", refuse)
    with caplog.at_level(logging.WARNING):
        _fill(tmp_path / "ro.db")
    assert "cannot save the BM25 index" in caplog.text
    assert sorted(p.name for p in tmp_path.iterdir() if "ro.db" in p.name) == ["ro.db"] + [
        name for name in ("ro.db-shm", "ro.db-wal") if (tmp_path / name).exists()
    ]


def test_a_half_written_file_left_by_a_dead_process_is_removed(tmp_path: Path) -> None:
    old, fresh = tmp_path / "m.db.bm25.1-dead.tmp", tmp_path / "m.db.bm25.2-busy.tmp"
    for left in (old, fresh):
        left.write_bytes(b"half")
    os.utime(old, (0, 0))
    _fill(tmp_path / "m.db")
    assert not old.exists() and fresh.exists()  # another process may still be writing it


@pytest.mark.parametrize("spacing", [7, 10_000], ids=["dense rids", "sparse rids"])
def test_export_and_restore_keep_scores_removals_and_renumbering(spacing: int) -> None:
    texts = [_text(i) for i in range(60)]
    built = BM25Index()
    built.set_many(range(60), texts)
    built.set(5, "deploy deploy park")  # out of order: export sorts each term by rid
    rid_of_doc = np.arange(60, dtype=np.int64) * spacing + 3
    arrays = built.export(rid_of_doc)
    kept = np.delete(rid_of_doc, [10, 11])  # two documents gone since
    rows = np.random.default_rng(spacing).permutation(58)  # the rows sorted some other way
    restored = BM25Index.restore(arrays, kept, rows)
    reference = BM25Index()
    ref_texts = [t for d, t in enumerate(texts) if d not in (10, 11)]
    ref_texts[5] = "deploy deploy park"
    reference.set_many(range(58), ref_texts)
    for query in QUERIES:
        assert np.array_equal(restored.scores(query, 58)[rows], reference.scores(query, 58))
    assert restored.indexed_as(int(rows[5]), "deploy deploy park") and len(restored) == 58
    assert all((np.diff(p.docs[: p.n]) > 0).all() for p in restored.postings.values())
    restored.renumber(np.argsort(rows))  # back to the reference's numbering
    for index in (restored, reference):
        index.set(0, "tenant")
        index.remove(1)
        index.renumber(np.arange(58)[::-1].copy())
    for query in [*QUERIES, "tenant"]:
        assert np.array_equal(restored.scores(query, 58), reference.scores(query, 58))
    assert restored.postings["park"].ordered
