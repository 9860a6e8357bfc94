"""Embedded-store specifics: persistence, WAL, and a second process writing the same file."""

from __future__ import annotations

import gc
import random
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from amem_graph import MemoryGraph, StoreError
from amem_graph.core.models import Memory, content_hash
from amem_graph.core.schema import EPISODE, TASK
from amem_graph.stores.base import EdgeWrite, MemoryFilter, MemoryUpdate, NodeWrite, WriteBatch
from amem_graph.stores.local import sqlite as local_sqlite
from amem_graph.stores.local.mirror import _Mirror
from amem_graph.stores.local.store import LocalStore


def test_memories_persist_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "memory.db"
    with MemoryGraph.open(path, embedder="hashing") as mg:
        mg.remember("persisted fact", id="p")
    with MemoryGraph.open(path, embedder="hashing") as mg:
        assert mg.get("p").content == "persisted fact"
        assert mg.recall("persisted fact")[0].memory.id == "p"
    mode = LocalStore(path)._db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_memory_mode_keeps_nothing(tmp_path: Path) -> None:
    with MemoryGraph.open(":memory:", embedder="hashing") as mg:
        mg.remember("ephemeral", id="e")
        assert mg.store.counts()["Memory"] == 1
    assert not list(tmp_path.iterdir())


def test_open_env_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMEM_STORE", str(tmp_path / "env.db"))
    with MemoryGraph.open(embedder="hashing") as mg:
        mg.remember("via env", id="v")
    assert (tmp_path / "env.db").exists()
    monkeypatch.delenv("AMEM_STORE")
    monkeypatch.chdir(tmp_path)
    with MemoryGraph.open(embedder="hashing") as mg:
        mg.remember("via default", id="d")
    assert (tmp_path / ".amem" / "memory.db").exists()


def test_directory_path_gives_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open the embedded store"):
        LocalStore(tmp_path)


def test_second_process_writes_are_seen_without_reopening(tmp_path: Path) -> None:
    """No stale reads: another process's commit shows up in this process's next recall."""
    path = tmp_path / "shared.db"
    mg = MemoryGraph.open(path, embedder="hashing")
    mg.remember("local fact about teapots", id="mine")
    assert [h.memory.id for h in mg.recall("teapots")] == ["mine"]
    script = textwrap.dedent(
        f"""
        from amem_graph import MemoryGraph
        with MemoryGraph.open({str(path)!r}, embedder="hashing") as other:
            other.remember_many([
                {{"content": "remote fact about teapots number %d" % i, "id": "remote-%d" % i}}
                for i in range(50)
            ])
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    ids = {h.memory.id for h in mg.recall("teapots", k=100)}
    assert "mine" in ids and {f"remote-{i}" for i in range(50)} <= ids
    mg.close()


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    MemoryGraph.open(path, embedder="hashing").close()
    script = textwrap.dedent(
        f"""
        import sys
        from amem_graph import MemoryGraph
        tag = sys.argv[1]
        with MemoryGraph.open({str(path)!r}, embedder="hashing") as mg:
            for i in range(40):
                mg.remember(f"writer {{tag}} note {{i}}", id=f"{{tag}}-{{i}}", agent=f"w{{tag}}")
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, tag]) for tag in "ab"]
    assert [p.wait(timeout=180) for p in procs] == [0, 0]
    with MemoryGraph.open(path, embedder="hashing") as mg:
        assert mg.store.counts()["Memory"] == 80
        assert mg.store.counts()["ATTRIBUTED_TO"] == 80


def test_the_mirror_is_built_with_the_cycle_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "gc.db"
    with MemoryGraph.open(path, embedder="hashing") as mg:
        mg.remember("a fact to build from", id="f")
    seen: list[bool] = []
    real_load = _Mirror.load

    def load(self: _Mirror, rows: list[object], text: bool = True) -> None:
        seen.append(gc.isenabled())
        real_load(self, rows, text)  # type: ignore[arg-type]

    monkeypatch.setattr(_Mirror, "load", load)
    assert gc.isenabled()
    with MemoryGraph.open(path, embedder="hashing") as mg:
        assert mg.recall("fact")[0].memory.id == "f"
    assert seen == [False] and gc.isenabled()
    monkeypatch.setattr(local_sqlite, "_COLLECT_AFTER", 1)
    with MemoryGraph.open(path, embedder="hashing") as mg:
        assert isinstance(mg.store, LocalStore)
        built = mg.store._fresh_mirror()  # collected once: kept objects in the oldest generation
        assert any(obj is built.bm25 for obj in gc.get_objects(generation=2))

    def broken(self: _Mirror, rows: list[object], text: bool = True) -> None:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(_Mirror, "load", broken)
    with MemoryGraph.open(path, embedder="hashing") as mg, pytest.raises(RuntimeError):
        mg.recall("fact")
    assert gc.isenabled()  # back on after a failed build


def test_hub_members_placed_as_they_join_follow_every_later_write(tmp_path: Path) -> None:
    """A hub's member positions are kept as members join (appended) and leave (the hub is
    placed again when next walked): after random writes, every memory's siblings are those
    of a store built afresh from the same file."""
    rng = random.Random(7)
    path = tmp_path / "hubs.db"
    live = LocalStore(path)
    live.ensure_embedder("test", 2)
    hubs = [(EPISODE, "GENERATED_IN", f"e{i}") for i in range(3)] + [(TASK, "FOR_TASK", "t")]
    live.apply(WriteBatch(nodes=[NodeWrite(label, hub) for label, _, hub in hubs]))
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    ids: list[str] = []
    joined: list[tuple[str, str, str, str]] = []
    flt = MemoryFilter(statuses=None)
    for step in range(60):
        op = rng.random()
        if op < 0.55 or not joined:  # a new memory in one or two hubs
            mid = f"m{step}"
            at = t0 + timedelta(minutes=rng.randrange(1000))
            memory = Memory(
                id=mid, content=mid, created_at=at, valid_from=at, content_hash=content_hash(mid)
            )
            into = rng.sample(hubs, rng.randint(1, 2))
            edges = [EdgeWrite(via, mid, hub) for _, via, hub in into]
            live.apply(WriteBatch(memories=[memory], edges=edges))
            ids.append(mid)
            joined += [(via, mid, hub, "") for _, via, hub in into]
        elif op < 0.75:  # an existing memory joins another hub
            mid = rng.choice(ids)
            _, via, hub = rng.choice(hubs)
            live.apply(WriteBatch(edges=[EdgeWrite(via, mid, hub)]))
            joined.append((via, mid, hub, ""))
        elif op < 0.9:  # a memory leaves a hub
            key = joined.pop(rng.randrange(len(joined)))
            live.apply(WriteBatch(delete_edges=[key]))
        else:  # a memory deleted with its edges
            mid = ids.pop(rng.randrange(len(ids)))
            live.apply(WriteBatch(delete_memories=[mid]))
            joined = [key for key in joined if key[1] != mid]
        if step % 3 == 0:  # walk the hubs now and then: placed ones must follow the writes
            fresh = LocalStore(path)
            for via in ("GENERATED_IN", "FOR_TASK"):
                assert live.siblings(ids, via, flt, 50) == fresh.siblings(ids, via, flt, 50)
            fresh.close()
    live.close()


def test_scope_rows_placed_as_they_join_follow_every_later_write(tmp_path: Path) -> None:
    """A scope's rows are kept as memories join it, and a scope a row moved out of (a
    memory deleted, then written again elsewhere under its id) is placed again when next
    asked: after random writes, what each scope's filter admits is what a store built
    afresh from the same file admits, and what a scan of every memory says."""
    rng = random.Random(11)
    path = tmp_path / "scopes.db"
    live = LocalStore(path)
    live.ensure_embedder("test", 2)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    scopes = [f"s{i}" for i in range(8)]
    where: dict[str, tuple[str, str]] = {}  # memory id -> (scope, status)
    gone: list[str] = []

    def write(mid: str, scope: str) -> None:
        content = f"{mid} in {scope}"
        memory = Memory(
            id=mid,
            content=content,
            scope=scope,
            created_at=t0,
            valid_from=t0,
            content_hash=content_hash(content),
        )
        live.apply(WriteBatch(memories=[memory]))
        where[mid] = (scope, "active")

    for i in range(40):  # a big scope (not selective) and seven small ones
        write(f"m{i}", "s0" if i % 2 else rng.choice(scopes))
    for step in range(80):
        op, ids = rng.random(), sorted(where)
        if op < 0.4:
            write(f"n{step}", rng.choice(scopes))
        elif op < 0.6 and gone:  # an id deleted before, written again in another scope
            write(gone.pop(rng.randrange(len(gone))), rng.choice(scopes))
        elif op < 0.8:
            mid = rng.choice(ids)
            live.apply(WriteBatch(memory_updates=[MemoryUpdate(mid, {"status": "retracted"})]))
            where[mid] = (where[mid][0], "retracted")
        else:
            mid = rng.choice(ids)
            live.apply(WriteBatch(delete_memories=[mid]))
            del where[mid]
            gone.append(mid)
        if step % 4 == 0:
            fresh = LocalStore(path)
            every = sorted(where) + gone
            for asked in [(s,) for s in scopes] + [("s1", "s2"), ("s0", "s4"), ("s3", "nowhere")]:
                flt = MemoryFilter(scopes=asked)
                scanned = {m for m, (s, st) in where.items() if s in asked and st == "active"}
                assert live.filter_ids(every, flt) == scanned
                assert fresh.filter_ids(every, flt) == scanned
            fresh.close()
    live.close()
