"""Whole-graph export/import: lossless round trips between stores, and every refusal.

The rich graph is the poisoned-memory world plus what it lacks: an active and a restored
retraction, a forget, a contradiction edge, and a memory using every optional field.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import open_neo4j_store
from poisoning import build

from amem_graph import (
    ConflictError,
    EmbedderMismatchError,
    HashingEmbedder,
    MemoryGraph,
    StoreError,
    ValidationError,
)
from amem_graph.core import codec
from amem_graph.core.schema import EDGE_TYPES, NODE_LABELS
from amem_graph.stores.base import Edge, EdgeWrite, GraphStore, MemoryFilter, WriteBatch
from amem_graph.stores.local.store import LocalStore
from amem_graph.transfer.jsonl import FORMAT, export_graph, import_graph

T0 = datetime(2025, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)


def enrich(mg: MemoryGraph) -> dict[str, str]:
    """The poisoned world plus retractions (one restored), a forget and a contradiction."""
    build(mg)
    mg.remember(
        "ochre sparrow dial: rotate tokens every 90 days",
        id="full",
        agent="bob",
        task="deploy",
        episode="ep-reader1",
        kind="procedural",
        tags=["tokens", "rotation"],
        keywords=["ochre", "sparrow"],
        context="a memory with every optional field",
        derived_from=["clean"],
        source="https://wiki.example/tokens",
        timestamp=T0,
        valid_to=T0 + timedelta(days=90),
        importance=0.9,
    )
    mg.store.apply(WriteBatch(edges=[EdgeWrite("CONTRADICTS", "full", "derived1")]))
    active = mg.retract("poison", reason="evil source", by="analyst")
    undone = mg.retract("clean", reason="double check", cascade=False)
    mg.restore(undone.id, by="analyst", reason="checked")
    mg.forget("before-read", reason="erasure request")
    return {"active": active.id, "restored": undone.id}


def _plain(props: dict[str, Any]) -> dict[str, Any]:
    """Null and absent are the same property (Neo4j cannot store null)."""
    return {k: v for k, v in props.items() if v is not None}


def snapshot(store: GraphStore) -> dict[str, Any]:
    """Everything in a store, comparable across stores; embeddings kept apart for approx."""
    memories = sorted(store.find_memories(MemoryFilter(statuses=None)), key=lambda m: m.id)
    return {
        "embedder": store.embedder_info(),
        "memories": [m.model_dump(exclude={"embedding"}) for m in memories],
        "nodes": sorted((n.label, n.id, _plain(n.props)) for n in store.iter_nodes()),
        "edges": sorted((e.type, e.src, e.dst, e.key, _plain(e.props)) for e in store.iter_edges()),
        "counts": store.counts(),
    }


def vectors(store: GraphStore) -> dict[str, np.ndarray]:
    return {
        m.id: np.asarray(m.embedding)
        for m in store.find_memories(MemoryFilter(statuses=None))
        if m.embedding is not None
    }


def assert_same_graph(a: GraphStore, b: GraphStore) -> None:
    left, right = snapshot(a), snapshot(b)
    assert left["memories"] == right["memories"]
    assert left["nodes"] == right["nodes"]
    assert left["edges"] == right["edges"]
    assert left == right
    va, vb = vectors(a), vectors(b)
    assert va.keys() == vb.keys() and va
    for mid, vector in va.items():
        np.testing.assert_allclose(vb[mid], vector, atol=1e-6, err_msg=mid)


def assert_same_behaviour(a: MemoryGraph, b: MemoryGraph, ids: dict[str, str]) -> None:
    """What the facade derives from the graph is the same on both."""
    statuses = {m.id: m.status for m in a.store.find_memories(MemoryFilter(statuses=None))}
    assert statuses["poison"] == "retracted" and statuses["written1"] == "quarantined"
    assert statuses == {m.id: m.status for m in b.store.find_memories(MemoryFilter(statuses=None))}
    for rid in ids.values():
        assert a.retraction(rid) == b.retraction(rid)
    assert b.retraction(ids["restored"]).restored_at is not None
    assert [e.model_dump() for e in a.audit()] == [e.model_dump() for e in b.audit()]
    assert len(a.audit(kind="forget")) == 1
    for root in ("poison", "clean"):
        left, right = a.impact(root), b.impact(root)
        assert left.model_dump(exclude={"nodes"}) == right.model_dump(exclude={"nodes"})
        assert [(n.label, n.id) for n in left.nodes] == [(n.label, n.id) for n in right.nodes]
    assert [r.model_dump() for r in a.training_data()] == [
        r.model_dump() for r in b.training_data()
    ]
    for agent in ("mallory", "bob", "carol"):
        assert a.agent(agent) == b.agent(agent)
    for mg in (a, b):  # the vector and text indexes work on the imported graph
        assert [h.memory.id for h in mg.recall("copper meadow lantern", k=1)] == ["clean"]
        assert "poison" not in {h.memory.id for h in mg.recall("zebra quartz protocol")}


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Callable[[str], MemoryGraph]]:
    opened: list[MemoryGraph] = []

    def open_it(name: str) -> MemoryGraph:
        mg = MemoryGraph(LocalStore(tmp_path / f"{name}.db"), HashingEmbedder())
        opened.append(mg)
        return mg

    yield open_it
    for mg in opened:
        mg.close()


# -- round trips ------------------------------------------------------------------------------


def test_local_to_local_round_trip_is_lossless(
    local: Callable[[str], MemoryGraph], tmp_path: Path
) -> None:
    source = local("source")
    ids = enrich(source)
    out = tmp_path / "graph.jsonl"
    exported = export_graph(source.store, out)
    counts = source.store.counts()
    assert exported.memories == counts["Memory"]
    assert exported.nodes == sum(counts[k] for k in NODE_LABELS - {"Memory"} if k in counts)
    assert exported.edges == sum(counts[k] for k in EDGE_TYPES if k in counts)

    target_store = LocalStore(tmp_path / "target.db")
    imported = import_graph(target_store, out, batch_size=7)
    assert imported == exported
    target = MemoryGraph(target_store, HashingEmbedder())
    try:
        assert_same_graph(source.store, target.store)
        assert_same_behaviour(source, target, ids)
        full = target.get("full")
        assert full.valid_to == T0 + timedelta(days=90) and full.created_at == T0
        assert full.created_at.tzinfo is not None
        assert (full.kind, full.importance, full.tags) == (
            "procedural",
            0.9,
            ["tokens", "rotation"],
        )
    finally:
        target.close()


@pytest.mark.neo4j
def test_embedded_to_neo4j_to_embedded_round_trip_is_lossless(
    local: Callable[[str], MemoryGraph], tmp_path: Path
) -> None:
    source = local("source")
    ids = enrich(source)
    first, second = tmp_path / "from-local.jsonl", tmp_path / "from-neo4j.jsonl"
    export_graph(source.store, first)

    neo = open_neo4j_store()
    try:
        import_graph(neo, first, batch_size=5)
        neo_graph = MemoryGraph(neo, HashingEmbedder())
        assert_same_graph(source.store, neo)
        assert_same_behaviour(source, neo_graph, ids)
        export_graph(neo, second)
    finally:
        neo.close()

    back_store = LocalStore(tmp_path / "back.db")
    import_graph(back_store, second)
    back_graph = MemoryGraph(back_store, HashingEmbedder())
    try:
        assert_same_graph(source.store, back_store)
        assert_same_behaviour(source, back_graph, ids)
    finally:
        back_graph.close()


# -- the file -----------------------------------------------------------------------------------


def test_file_layout_tags_datetimes_and_packs_exact_vectors(
    local: Callable[[str], MemoryGraph], tmp_path: Path
) -> None:
    mg = local("one")
    enrich(mg)
    out = tmp_path / "g.jsonl"
    export_graph(mg.store, out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    header, trailer = lines[0], lines[-1]
    assert header["record"] == "header" and header["format"] == FORMAT and header["version"] == 1
    assert header["embedder"] == {"name": "hashing-256", "dims": 256}
    assert trailer["record"] == "end"
    kinds = [line["record"] for line in lines[1:-1]]
    assert kinds == sorted(kinds, key=["memory", "node", "edge"].index), "grouped in order"
    assert trailer == {
        "record": "end",
        "memories": kinds.count("memory"),
        "nodes": kinds.count("node"),
        "edges": kinds.count("edge"),
    }
    full = next(line for line in lines if line.get("id") == "full" and line["record"] == "memory")
    assert full["valid_to"] == {"$dt": (T0 + timedelta(days=90)).isoformat()}
    assert full["status"] == "active" and full["version"] == 1 and "confidence" not in full
    stored = np.asarray(mg.get("full").embedding, dtype=np.float32)
    packed = np.frombuffer(base64.b64decode(full["embedding"]), dtype="<f4")
    assert np.array_equal(packed, stored), "float32 vectors are exported bit for bit"
    poison = next(line for line in lines if line.get("id") == "poison")
    assert (poison["status"], poison["failures"]) == ("retracted", 1.0)


def test_export_writes_nothing_when_a_write_races_it(
    local: Callable[[str], MemoryGraph], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mg = local("one")
    build(mg)
    real = mg.store.iter_edges

    def racing() -> Iterator[Edge]:
        yield from real()
        yield Edge("DERIVED_FROM", "written-meanwhile", "poison", {})

    monkeypatch.setattr(mg.store, "iter_edges", racing)
    out = tmp_path / "g.jsonl"
    with pytest.raises(ConflictError, match="written-meanwhile"):
        export_graph(mg.store, out)
    assert list(tmp_path.glob("g.jsonl*")) == [] and list(tmp_path.glob(".g.jsonl*")) == []


def test_progress_reaches_the_total(local: Callable[[str], MemoryGraph], tmp_path: Path) -> None:
    mg = local("one")
    build(mg)
    seen: list[tuple[int, int]] = []
    report = export_graph(mg.store, tmp_path / "g.jsonl", progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (report.records, report.records)
    seen.clear()
    import_graph(
        LocalStore(":memory:"),
        tmp_path / "g.jsonl",
        batch_size=10,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1] == (report.records, report.records) and len(seen) >= report.records // 10


# -- refusals -----------------------------------------------------------------------------------


@pytest.fixture
def exported(local: Callable[[str], MemoryGraph], tmp_path: Path) -> Path:
    mg = local("source")
    build(mg)
    out = tmp_path / "g.jsonl"
    export_graph(mg.store, out)
    return out


def test_refuses_a_non_empty_store(store: GraphStore, exported: Path) -> None:
    mg = MemoryGraph(store, HashingEmbedder())
    mg.remember("already here", id="x")
    before = store.counts()
    with pytest.raises(ConflictError, match="not empty"):
        import_graph(store, exported)
    assert store.counts() == before


def test_refuses_a_store_with_another_embedder(store: GraphStore, exported: Path) -> None:
    store.ensure_embedder("other-model", 8)
    with pytest.raises(EmbedderMismatchError, match="hashing-256"):
        import_graph(store, exported)
    assert store.counts() == {} and store.embedder_info() == ("other-model", 8)


def _rewrite(path: Path, edit: Callable[[list[dict[str, Any]]], list[Any]]) -> Path:
    records = [codec.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    out = path.with_name("edited.jsonl")
    out.write_text(
        "\n".join(r if isinstance(r, str) else codec.dumps(r) for r in edit(records)) + "\n",
        encoding="utf-8",
    )
    return out


def _index(records: list[dict[str, Any]], kind: str, **match: Any) -> int:
    return next(
        i
        for i, r in enumerate(records)
        if r.get("record") == kind and all(r.get(k) == v for k, v in match.items())
    )


def _set(kind: str, field: str, value: Any, **match: Any) -> Callable[[list[Any]], list[Any]]:
    def edit(records: list[Any]) -> list[Any]:
        records[_index(records, kind, **match)][field] = value
        return records

    return edit


def _replace(kind: str, new: Any, **match: Any) -> Callable[[list[Any]], list[Any]]:
    def edit(records: list[Any]) -> list[Any]:
        records[_index(records, kind, **match)] = new
        return records

    return edit


def _move_a_node_first(records: list[Any]) -> list[Any]:
    node = records.pop(_index(records, "node"))
    records.insert(1, node)
    return records


def _drop_end(records: list[Any]) -> list[Any]:
    return records[:-1]


def _duplicate_memory(records: list[Any]) -> list[Any]:
    records.insert(2, dict(records[1]))
    return records


BAD_FILES = [
    pytest.param(_replace("memory", '{"record": "memory", ', id="poison"), "invalid JSON",
                 id="bad-json"),
    pytest.param(_replace("memory", ["a", "list"], id="poison"), "expected a JSON object",
                 id="not-object"),
    pytest.param(_set("memory", "record", "gadget", id="poison"), "unknown record 'gadget'",
                 id="unknown-record"),
    pytest.param(_set("memory", "status", "zombie", id="poison"), "status", id="bad-status"),
    pytest.param(_set("memory", "colour", "red", id="poison"), "colour", id="unknown-field"),
    pytest.param(_set("memory", "embedding", "AAAAAA==", id="poison"), "4 bytes, not the 1024",
                 id="short-vector"),
    pytest.param(_set("memory", "embedding", "***", id="poison"), "base64", id="not-base64"),
    pytest.param(_set("memory", "created_at", datetime(2025, 1, 1), id="poison"),
                 "no timezone", id="naive-time"),
    pytest.param(_duplicate_memory, "appears twice", id="duplicate-id"),
    pytest.param(_set("node", "label", "Gadget", id="mallory"), "unknown node label",
                 id="bad-label"),
    pytest.param(_set("edge", "dst", "ghost", type="DERIVED_FROM"), "not in the file",
                 id="dangling-edge"),
    pytest.param(_set("edge", "type", "LIKES", type="DERIVED_FROM"), "unknown edge type",
                 id="bad-edge-type"),
    pytest.param(_move_a_node_first, "line 3: memory record after node records",
                 id="out-of-order"),
    pytest.param(_drop_end, "without its end record", id="truncated"),
    pytest.param(_set("end", "edges", 1), "the end record counts 1 edges", id="count"),
    pytest.param(_set("header", "version", 99), "format version 99", id="version"),
    pytest.param(_set("header", "format", "csv"), "not an amem_graph export", id="not-export"),
    # issue 18.6: what remember refuses, import refuses too (it used to break the store later)
    pytest.param(_set("memory", "importance", float("nan"), id="poison"),
                 "importance nan is not a number within [0, 1]", id="nan-importance"),
    pytest.param(_set("memory", "successes", -2.0, id="poison"),
                 "successes -2.0 is not a finite count >= 0", id="negative-successes"),
    pytest.param(_set("memory", "id", "n 1", id="poison"), "'n 1' is not a valid name",
                 id="id-not-a-name"),
    pytest.param(_set("memory", "content", "other text", id="poison"),
                 "content_hash does not match", id="stale-hash"),
    pytest.param(_set("edge", "props", {"rank": "first", "score": 0.5}, type="READ"),
                 "rank 'first' is not a whole number >= 1", id="read-rank-text"),
    pytest.param(_set("node", "props", {"success": "no", "score": None}, label="Outcome"),
                 "success 'no' is not true or false", id="outcome-success-text"),
    pytest.param(_replace("memory", '{"record": "memory", "x": ' + "[" * 100_000 + "]" * 100_000
                          + "}", id="poison"), "nested too deeply", id="deep-nesting"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "problem"), BAD_FILES)
def test_a_bad_line_is_named_and_nothing_is_written(
    exported: Path, edit: Callable[[list[Any]], list[Any]], problem: str
) -> None:
    bad = _rewrite(exported, edit)
    target = LocalStore(":memory:")
    with pytest.raises(ValidationError, match=r"^line \d+: ") as caught:
        import_graph(target, bad, batch_size=1)
    assert problem in str(caught.value)
    number = int(str(caught.value).split(":")[0].removeprefix("line "))
    lines = bad.read_text(encoding="utf-8").splitlines()
    assert 1 <= number <= len(lines) + 1
    assert target.counts() == {} and target.embedder_info() is None


def test_bytes_that_are_not_utf8_are_named_by_line(exported: Path) -> None:
    lines = exported.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b"zebra" in line)
    lines[at] = lines[at].replace(b"zebra", b"zebra\xff\xfe", 1)
    bad = exported.with_name("bytes.jsonl")
    bad.write_bytes(b"".join(lines))
    target = LocalStore(":memory:")
    with pytest.raises(ValidationError, match=rf"^line {at + 1}: not valid UTF-8"):
        import_graph(target, bad)
    assert target.counts() == {}


def test_missing_file_is_a_validation_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="no export file"):
        import_graph(LocalStore(":memory:"), tmp_path / "nope.jsonl")


def test_a_failed_batch_keeps_earlier_ones_and_says_how_to_recover(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = LocalStore(":memory:")
    real = target.apply
    calls: list[int] = []

    def flaky(batch: WriteBatch) -> None:
        calls.append(1)
        if len(calls) == 3:
            raise StoreError("disk full")
        real(batch)

    monkeypatch.setattr(target, "apply", flaky)
    with pytest.raises(StoreError, match=r"disk full \(after 20 of \d+ records") as caught:
        import_graph(target, exported, batch_size=10)
    assert caught.value.hint is not None and "empty it" in caught.value.hint
    assert target.counts()["Memory"] == 8 and "DERIVED_FROM" not in target.counts()
    with pytest.raises(ConflictError, match="not empty"):
        import_graph(target, exported)


def test_atomic_import_is_all_or_nothing(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = LocalStore(":memory:")
    real = target.apply
    sizes: list[int] = []

    def record(batch: WriteBatch) -> None:
        sizes.append(len(batch.memories) + len(batch.nodes) + len(batch.edges))
        real(batch)

    monkeypatch.setattr(target, "apply", record)
    report = import_graph(target, exported, batch_size=None)
    assert sizes == [report.records]

    failing = LocalStore(":memory:")

    def fail(batch: WriteBatch) -> None:
        raise StoreError("no space")

    monkeypatch.setattr(failing, "apply", fail)
    with pytest.raises(StoreError, match="nothing was imported"):
        import_graph(failing, exported, batch_size=None)
    assert failing.counts() == {}


def test_batch_size_must_be_positive(exported: Path) -> None:
    with pytest.raises(ValidationError, match="batch_size"):
        import_graph(LocalStore(":memory:"), exported, batch_size=0)
