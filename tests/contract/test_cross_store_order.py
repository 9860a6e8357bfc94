"""The same data gives the same fused recall order on the embedded store and on Neo4j."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.stores.local.store import LocalStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "quality"))
from dataset import DEFAULT_PATH, load

CONVERSATIONS = ("c1", "c2")


@pytest.fixture
def pair(make_store, tmp_path: Path) -> Iterator[tuple[MemoryGraph, MemoryGraph]]:  # type: ignore[no-untyped-def]
    """One conversation set ingested identically into a local store and into Neo4j."""
    data = load(DEFAULT_PATH)
    items = []
    for conv in data.conversations:
        if conv.id not in CONVERSATIONS:
            continue
        for session in conv.sessions:
            for i, turn in enumerate(session.turns):
                items.append(
                    {
                        "content": turn.text,
                        "id": turn.id,
                        "agent": turn.speaker,
                        "episode": session.id,
                        "scope": conv.id,
                        "timestamp": session.datetime + timedelta(seconds=i),
                    }
                )
    graphs = (
        MemoryGraph(LocalStore(tmp_path / "local.db"), HashingEmbedder()),
        MemoryGraph(make_store(), HashingEmbedder()),
    )
    for mg in graphs:
        mg.remember_many(items)
    yield graphs
    graphs[0].close()


@pytest.mark.neo4j
@pytest.mark.parametrize("store_kind", ["neo4j"], indirect=True)
def test_fused_order_matches_across_stores(pair: tuple[MemoryGraph, MemoryGraph]) -> None:
    local, neo = pair
    questions = [q for q in load(DEFAULT_PATH).questions if q.conversation_id in CONVERSATIONS]
    as_of = max(m.created_at for m in local.store.find_memories(local.memory_filter("c1"))) + (
        timedelta(days=1)
    )
    compared = reordered = 0
    for q in questions:
        a = local.recall(q.question, k=10, scope=q.conversation_id, as_of=as_of, explain=True)
        b = neo.recall(q.question, k=10, scope=q.conversation_id, as_of=as_of, explain=True)
        compared += 1
        assert {h.memory.id for h in a} == {h.memory.id for h in b}, q.question
        explained_b = {h.memory.id: h.explanation for h in b}
        for hit in a:
            ea, eb = hit.explanation, explained_b[hit.memory.id]
            assert ea is not None and eb is not None
            assert set(ea.signals) == set(eb.signals), (q.question, hit.memory.id)
            for name, signal in ea.signals.items():
                assert signal.value == pytest.approx(eb.signals[name].value, rel=1e-4, abs=1e-6)
        if [h.memory.id for h in a] != [h.memory.id for h in b]:
            reordered += 1  # every raw value agrees, so only ties broke differently
    assert compared > 50
    assert reordered <= compared // 10
