"""Neo4j's fast ``import_memories`` (``stores/neo4j/bulk.py``) against the reference route.

The fast route builds rows from the batch's columns and formats every vector at once; it must
leave exactly what ``apply_as_batch`` (the same rows through ``WriteBatch``) leaves: every
node's labels and props (embeddings bit for bit), every edge's type, ends and props. Each
comparison imports one batch both ways into the same wiped database, from the same start.
The vector text tests need no server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from conftest import open_neo4j_store

from amem_graph import HashingEmbedder, MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.core.errors import ConflictError, NotFoundError
from amem_graph.core.models import Memory, content_hash
from amem_graph.core.schema import AGENT, EPISODE
from amem_graph.memory.bulk import plan_import
from amem_graph.stores.base import EdgeWrite, NodeWrite, WriteBatch
from amem_graph.stores.bulk import ImportBatch, apply_as_batch
from amem_graph.stores.neo4j import bulk as neo4j_bulk
from amem_graph.stores.neo4j.props import _unit_vector
from amem_graph.stores.neo4j.store import Neo4jStore
from amem_graph.stores.neo4j.vectext import unit_rows, vector_texts

T0 = datetime(2026, 5, 1, 9, tzinfo=UTC)
CET = timezone(timedelta(hours=1))

Snapshot = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]


@pytest.fixture
def neo() -> Iterator[Neo4jStore]:
    store = open_neo4j_store()
    yield store
    store.close()


def snapshot(store: Neo4jStore) -> Snapshot:
    """Every node (labels, props) and edge (type, ends, props) but the store's meta node."""
    db = store.database
    nodes, _, _ = store._driver.execute_query(
        "MATCH (n) WHERE NOT n:AmemMeta RETURN labels(n) AS l, properties(n) AS p", database_=db
    )
    edges, _, _ = store._driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN type(r) AS t, a.id AS a, b.id AS b, properties(r) AS p",
        database_=db,
    )
    node_rows = sorted((sorted(r["l"]), r["p"]["id"], sorted(r["p"].items())) for r in nodes)
    edge_rows = sorted((r["t"], r["a"], r["b"], sorted(r["p"].items())) for r in edges)
    return node_rows, edge_rows


def start_state(store: Neo4jStore) -> None:
    """What the import meets: an episode, an agent and a memory already stored."""
    old = Memory(
        id="old", content="an older memory", agent="ana", episode="ep-old",
        created_at=T0 - timedelta(days=1), valid_from=T0 - timedelta(days=1),
        content_hash=content_hash("an older memory"), embedding=[1.0] + [0.0] * 255,
    )  # fmt: skip
    store.apply(
        WriteBatch(
            memories=[old],
            nodes=[
                NodeWrite(AGENT, "ana", on_create={"name": "ana"}, props={"trust": 0.7}),
                NodeWrite(EPISODE, "ep-old", on_create={"scope": "plant", "agent": "ana"}),
            ],
            edges=[
                EdgeWrite("ATTRIBUTED_TO", "old", "ana"),
                EdgeWrite("PERFORMED_BY", "ep-old", "ana"),
            ],
        )
    )


def both_routes(store: Neo4jStore, batch: ImportBatch) -> tuple[Snapshot, Snapshot]:
    """The state after the fast route, then after the reference route, from the same start."""
    states = []
    for route in (store.import_memories, lambda b: apply_as_batch(store, b)):
        store.wipe()
        embedder = HashingEmbedder()
        store.ensure_embedder(embedder.name, embedder.dims)
        start_state(store)
        route(batch)
        states.append(snapshot(store))
    return states[0], states[1]


def make_batch(mg: MemoryGraph, n: int, **kwargs: Any) -> ImportBatch:
    layer = mg.note_layer if mg.config.notes.enabled else None
    texts = [f"row {i}: the {'blue' if i % 3 else 'red'} pump {i} hums at night" for i in range(n)]
    return plan_import(mg.embedder, mg.config, layer, texts, **kwargs)


def provenance(n: int) -> dict[str, Any]:
    """Rows by a few agents (one row with none), tasks and episodes, one episode already
    stored, times in two time zones."""
    return {
        "ids": [f"im{i}" for i in range(n)],
        "scope": [f"scope-{i % 3}" for i in range(n)],
        "agent": [None if i == 4 else ("ana", "ben", "cy")[i % 3] for i in range(n)],
        "task": [None if i % 5 == 0 else f"task-{i % 4}" for i in range(n)],
        "episode": ["ep-old" if i < 3 else (None if i == 7 else f"ep-{i // 6}") for i in range(n)],
        "timestamps": [
            (T0 + timedelta(seconds=i)).astimezone(CET if i % 2 else UTC) for i in range(n)
        ],
    }


@pytest.mark.neo4j
def test_fast_route_leaves_the_reference_state(neo: Neo4jStore) -> None:
    """Notes not indexed, precomputed vectors (one one-hot, one with tiny values, one zero
    row the memory layer would refuse but a store must still write as the reference does)."""
    mg = MemoryGraph(neo, HashingEmbedder())
    n = 40
    vectors = np.asarray(mg.embedder.embed_documents([f"v{i}" for i in range(n)]), np.float32)
    vectors[1] = 0.0
    vectors[1, 5] = 1.0
    vectors[2, 1:] *= np.float32(1e-5)  # after normalising: values far below 1e-4
    batch = make_batch(mg, n, vectors=vectors, **provenance(n))
    matrix = batch.vectors.copy()
    matrix[3] = 0.0
    fast, reference = both_routes(neo, dataclasses.replace(batch, vectors=matrix))
    assert fast == reference
    nodes, edges = fast
    assert len([r for r in nodes if r[0] == ["Memory"]]) == n + 1
    zero = next(r for r in nodes if r[1] == "im3")
    assert ("embedding_is_zero", True) in zero[2]
    assert {e[0] for e in edges} >= {"ATTRIBUTED_TO", "FOR_TASK", "GENERATED_IN", "PART_OF"}


@pytest.mark.neo4j
def test_fast_route_matches_with_indexed_notes_and_small_statements(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Notes feeding search_terms, embedded here, and statements of 7 rows each."""
    monkeypatch.setattr(neo4j_bulk, "CHUNK", 7)
    config = MemoryGraphConfig(notes=NotesConfig(index_notes=True))
    mg = MemoryGraph(neo, HashingEmbedder(), config)
    batch = make_batch(mg, 30, kind="procedural", **provenance(30))
    assert batch.template.note_indexed and batch.note_keywords[0]
    fast, reference = both_routes(neo, batch)
    assert fast == reference


@pytest.mark.neo4j
def test_an_existing_id_fails_the_whole_import(neo: Neo4jStore) -> None:
    mg = MemoryGraph(neo, HashingEmbedder())
    mg.remember("already here", id="im5")
    before = snapshot(neo)
    batch = make_batch(mg, 12, **provenance(12))
    with pytest.raises(ConflictError, match="memory 'im5' already exists; an import writes new"):
        neo.import_memories(batch)
    assert snapshot(neo) == before


@pytest.mark.neo4j
def test_a_missing_endpoint_fails_the_whole_import(neo: Neo4jStore) -> None:
    mg = MemoryGraph(neo, HashingEmbedder())
    batch = make_batch(mg, 5, agent="ana")
    before = snapshot(neo)
    edges = {**batch.edges, "FOR_TASK": ([batch.ids[0]], ["no-task"])}
    broken = dataclasses.replace(batch, edges=edges)
    with pytest.raises(NotFoundError, match="no Task 'no-task'"):
        neo.import_memories(broken)
    assert snapshot(neo) == before


def special_rows(dims: int) -> np.ndarray:
    """Random unit rows and the values where formatting goes wrong: one-hot, -1, -0.0, tiny
    and subnormal values, values at and next to 1e-4 and powers of ten, halves, zeros."""
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((40, dims)).astype(np.float32)
    rows[0] = 0.0
    rows[0, 3] = 1.0
    rows[1] = 0.0
    rows[1, 5] = -1.0
    rows[2, :20] = np.float32(2.0) ** -np.arange(1, 150, 7.5)[:20]
    rows[3, :] = np.float32(0.1)
    rows[3, 7] = -0.0
    below = np.nextafter(np.float32(1e-4), np.float32(0))
    rows[4, :] = np.float32(1e-4)
    rows[4, 1:10] = below
    rows[4, 10:20] = np.float32(9.9999999e-5)
    rows[4, 20:30] = np.float32(1e-45)
    rows[5, :] = rng.uniform(-1, 1, dims).astype(np.float32) * 10.0 ** rng.integers(-44, 0, dims)
    rows[6] = 0.0
    rows[7, :] = (np.arange(dims) % 10 - 5) * np.float32(0.5)
    return rows


def test_vector_texts_hold_the_reference_values() -> None:
    """Same float32 values as ``_unit_vector``'s text (same decimal numbers, bit for bit once
    parsed), the same zero rows, and exactly ``f'{v:+.8e}'`` per value."""
    dims = 64
    rows = special_rows(dims)
    unit, zero = unit_rows(rows)
    texts = vector_texts(unit)
    for row, text, is_zero in zip(rows, texts, zero.tolist(), strict=True):
        reference, ref_zero = _unit_vector(row.tolist(), dims, "row")
        assert is_zero == ref_zero
        ours = np.array([float(v) for v in text.split(",")], dtype=np.float32)
        theirs = np.array([float(v) for v in reference.split(",")], dtype=np.float32)
        assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))
        assert [float(v) for v in text.split(",")] == [float(v) for v in reference.split(",")]
    assert texts == [",".join(f"{v:+.8e}" for v in row) for row in unit.tolist()]


def test_vector_texts_of_many_random_rows() -> None:
    rows = np.random.default_rng(3).standard_normal((300, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    texts = vector_texts(unit_rows(rows)[0])
    for row, text in zip(rows, texts, strict=True):
        reference = _unit_vector(row.tolist(), 384, "row")[0]
        assert [float(v) for v in text.split(",")] == [float(v) for v in reference.split(",")]
