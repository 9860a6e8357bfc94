"""Running the README quickstart twice stores nothing new (duplicates merge)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from amem_graph import MemoryGraph
from amem_graph.stores.base import MemoryFilter

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.slow
def test_quickstart_twice_is_idempotent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    quickstart = next(b for b in blocks if "MemoryGraph.open()" in b)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AMEM_STORE", raising=False)
    code = compile(quickstart, "README quickstart", "exec")
    exec(code, {})
    with MemoryGraph.open() as mg:
        first = {m.id: m.support for m in mg.store.find_memories(MemoryFilter(statuses=None))}
    exec(code, {})
    with MemoryGraph.open() as mg:
        second = {m.id: m.support for m in mg.store.find_memories(MemoryFilter(statuses=None))}
        episodes = mg.store.counts()["Episode"]
    assert set(second) == set(first) and len(first) == 3
    assert sorted(second.values()) == [1, 2, 2]  # vpn-note by id; the other two merged
    assert episodes == 2
