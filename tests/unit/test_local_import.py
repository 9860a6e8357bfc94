"""The embedded store's fast import route (``LocalWrites.import_memories``): executemany rows
in one transaction, held to the state the reference route (``apply_as_batch``) leaves."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from amem_graph import MemoryGraph
from amem_graph.core import codec
from amem_graph.core.errors import ConflictError, ValidationError
from amem_graph.embeddings import HashingEmbedder
from amem_graph.memory.bulk import plan_import
from amem_graph.stores.base import SIBLING_EDGES
from amem_graph.stores.bulk import ImportBatch, apply_as_batch
from amem_graph.stores.local import LocalStore

T0 = datetime(2026, 5, 1, 9, tzinfo=UTC)
TEXTS = [f"pump {i} at the {'north' if i % 3 else 'south'} gate hums at {i} hz" for i in range(8)]
TEXTS.append('pump 8: Zoë said "the café\'s gate\\valve" \u2014 hums\nat 8 hz \U0001f600')
COLUMNS: dict[str, Any] = {
    "ids": [f"p{i}" for i in range(9)],
    "scope": ["plant", "plant", "plant", "yard", "yard", "yard", "plant", "plant", "yard"],
    "agent": ["ana", "ana", None, "ben", "ben", "ana", "cy", "cy", None],
    "task": ["pumps", "pumps", "pumps", None, "gates", "gates", "pumps", None, "gates"],
    "episode": ["e1", "e1", "e1", "e2", "e2", None, "e3", "e3", "e4"],
    "timestamps": [T0 + timedelta(minutes=i // 2) for i in range(9)],
}


def tables(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored row but the change log's sequence numbers."""
    db = sqlite3.connect(path)
    try:
        return {
            "memories": db.execute("SELECT * FROM memories ORDER BY rid").fetchall(),
            "nodes": db.execute("SELECT * FROM nodes ORDER BY label, id").fetchall(),
            "edges": db.execute("SELECT * FROM edges ORDER BY type, src, dst, key").fetchall(),
            "changes": db.execute("SELECT body FROM changes ORDER BY seq").fetchall(),
        }
    finally:
        db.close()


@pytest.fixture
def graphs(tmp_path: Path) -> Iterator[tuple[MemoryGraph, MemoryGraph]]:
    """(fast route, reference route) graphs on two files of the same embedder."""
    fast = MemoryGraph(LocalStore(tmp_path / "fast.db"), HashingEmbedder())
    slow = MemoryGraph(LocalStore(tmp_path / "slow.db"), HashingEmbedder())
    reference = slow.store

    def by_reference(batch: ImportBatch) -> None:
        apply_as_batch(reference, batch)

    slow.store.import_memories = by_reference  # type: ignore[method-assign]
    yield fast, slow
    fast.close()
    slow.close()


@pytest.mark.parametrize("notes", [True, False])
def test_the_fast_route_leaves_the_reference_routes_state(
    graphs: tuple[MemoryGraph, MemoryGraph], tmp_path: Path, notes: bool
) -> None:
    fast, slow = graphs
    for mg in (fast, slow):
        earlier = "an earlier memory on the north gate"
        mg.remember(earlier, scope="plant", agent="ana", episode="e1", timestamp=T0)
        mg.import_memories(TEXTS, notes=notes, **COLUMNS)
    # ids were generated for the earlier memory: compare everything else of its row
    got, want = tables(tmp_path / "fast.db"), tables(tmp_path / "slow.db")
    assert got["memories"][1:] == want["memories"][1:]
    assert got["nodes"] == want["nodes"]
    assert [e for e in got["edges"] if e[1] != got["memories"][0][1]] == [
        e for e in want["edges"] if e[1] != want["memories"][0][1]
    ]
    assert got["changes"][-1] == want["changes"][-1], "the import logs what apply logs"
    # the mirror (patched after the commit) answers as the reference's does
    for query, scope in (("north gate pump hums", "plant"), ("pump 4 gate", "yard")):
        hits = [[h.memory.id for h in mg.recall(query, scope=scope, k=5)] for mg in graphs]
        assert hits[0] == hits[1] and hits[0]
    assert fast.trace("p4").upstream.episode_ids == slow.trace("p4").upstream.episode_ids


def test_another_connection_sees_the_import_from_the_change_log(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    writer = MemoryGraph(LocalStore(path), HashingEmbedder())
    reader = MemoryGraph(LocalStore(path), HashingEmbedder())
    try:
        reader.remember("a memory the reader wrote", scope="plant")
        assert reader.recall("pump gate", scope="plant", k=3)  # its mirror is built now
        writer.import_memories(TEXTS, **COLUMNS)
        hits = [h.memory.id for h in reader.recall("pump 7 at the north gate", scope="plant")]
        assert "p7" in hits
        assert "e3" in reader.trace("p7").upstream.episode_ids
        body = codec.loads(tables(path)["changes"][-1][0])
        logged = {e[0] for e in body["e"]}
        assert logged and logged <= set(SIBLING_EDGES), "the log holds only what mirrors keep"
    finally:
        writer.close()
        reader.close()


def test_an_existing_id_fails_the_whole_import_and_leaves_the_mirror(
    graphs: tuple[MemoryGraph, MemoryGraph], tmp_path: Path
) -> None:
    fast, _ = graphs
    fast.import_memories(TEXTS[3:5], ids=["p3", "p4"], scope="yard")
    before = tables(tmp_path / "fast.db")
    counts = fast.store.counts()
    with pytest.raises(ConflictError, match="memory 'p3' already exists"):
        fast.import_memories(TEXTS, **COLUMNS)
    assert tables(tmp_path / "fast.db") == before
    assert fast.store.counts() == counts
    assert [h.memory.id for h in fast.recall("pump 5 gate", scope="plant")] == []


def test_vectors_of_another_dimension_are_refused_before_anything_is_written(
    graphs: tuple[MemoryGraph, MemoryGraph], tmp_path: Path
) -> None:
    fast, _ = graphs
    fast.remember("the store records its embedder here", scope="plant")
    before = tables(tmp_path / "fast.db")
    with pytest.raises(ValidationError, match="8-dim vectors; the store uses 256"):
        fast.store.import_memories(_plan(fast, dims=8))
    assert tables(tmp_path / "fast.db") == before


def _plan(mg: MemoryGraph, dims: int) -> ImportBatch:
    """An import batch of one row whose vector has ``dims`` values (the memory layer would
    refuse it; the store must too)."""
    return plan_import(
        HashingEmbedder(dims), mg.config, None, ["too narrow"], vectors=np.eye(1, dims)
    )
