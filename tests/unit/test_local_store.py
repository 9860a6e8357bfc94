"""Embedded-store specifics: persistence, WAL, and a second process writing the same file."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from amem_graph import MemoryGraph, StoreError
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

    def load(self: _Mirror, rows: list[object]) -> None:
        seen.append(gc.isenabled())
        real_load(self, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(_Mirror, "load", load)
    assert gc.isenabled()
    with MemoryGraph.open(path, embedder="hashing") as mg:
        assert mg.recall("fact")[0].memory.id == "f"
    assert seen == [False] and gc.isenabled()

    def broken(self: _Mirror, rows: list[object]) -> None:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(_Mirror, "load", broken)
    with MemoryGraph.open(path, embedder="hashing") as mg, pytest.raises(RuntimeError):
        mg.recall("fact")
    assert gc.isenabled()  # back on after a failed build
