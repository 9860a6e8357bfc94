"""``MemoryGraph.import_memories`` on every store: the columnar bulk route (issue 19).

It must leave what ``remember_many`` of the same rows leaves (content, provenance, notes,
searchability), refuse bad input naming the row, and write all of a batch or none of it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from amem_graph import MemoryGraph
from amem_graph.core.errors import ConflictError, ValidationError

T0 = datetime(2026, 5, 1, 9, tzinfo=UTC)


def rows(n: int) -> list[str]:
    return [f"import note {i}: the {'blue' if i % 2 else 'red'} valve {i} leaks" for i in range(n)]


def test_import_writes_memories_with_provenance_and_notes(mg: MemoryGraph) -> None:
    texts = rows(6)
    ids = mg.import_memories(
        texts,
        ids=[f"im{i}" for i in range(6)],
        scope="plant",
        agent=["ana", "ana", "ben", "ben", None, "ana"],
        task="valves",
        episode=["ep1", "ep1", "ep2", "ep2", "ep2", "ep3"],
        timestamps=[T0 + timedelta(minutes=i) for i in range(6)],
    )
    assert ids == [f"im{i}" for i in range(6)]
    got = mg.store.get_memories(ids)
    assert [got[i].content for i in ids] == texts
    assert got["im2"].agent == "ben" and got["im4"].agent is None
    assert got["im3"].created_at == T0 + timedelta(minutes=3)
    assert all(got[i].scope == "plant" and got[i].task == "valves" for i in ids)
    assert got["im0"].note_keywords, "notes=True gives each memory its note"
    assert got["im0"].embedding is not None
    assert abs(float(np.linalg.norm(got["im0"].embedding)) - 1.0) < 1e-5
    trace = mg.trace("im2")
    assert "ben" in trace.upstream.agent_ids
    assert "ep2" in trace.upstream.episode_ids
    assert "valves" in trace.upstream.task_ids
    hits = mg.recall("blue valve 3 leaks", scope="plant", k=3)
    assert "im3" in [h.memory.id for h in hits]


def test_import_takes_precomputed_vectors_and_can_skip_notes(mg: MemoryGraph) -> None:
    texts = rows(3)
    vectors = np.asarray(mg.embedder.embed_documents(texts), dtype=np.float32) * 3.0
    ids = mg.import_memories(texts, vectors=vectors, notes=False)
    got = mg.store.get_memories(ids)
    for mid, vec in zip(ids, vectors, strict=True):
        stored = np.asarray(got[mid].embedding)
        assert np.allclose(stored, vec / np.linalg.norm(vec), atol=1e-5)
        assert got[mid].note_keywords == [] and not got[mid].note_indexed
        assert got[mid].scope == mg.config.default_scope


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"contents": ["ok", "  "]}, "content 1"),
        ({"contents": "one string"}, "list of contents"),
        ({"contents": ["a", "b"], "ids": ["x", "x"]}, "appears twice"),
        ({"contents": ["a", "b"], "agent": ["ok", "bad name"]}, "agent 1"),
        ({"contents": ["a", "b"], "episode": ["e1"]}, "1 values for 2"),
        ({"contents": ["a"], "vectors": np.zeros((1, 3))}, "shape"),
        ({"contents": ["a"], "timestamps": [datetime(2026, 1, 1)]}, "timestamps 0"),
        ({"contents": ["a"], "kind": "gossip"}, "kind"),
    ],
)
def test_import_refuses_bad_input_and_writes_nothing(
    mg: MemoryGraph, kwargs: dict[str, object], message: str
) -> None:
    before = mg.store.counts()
    with pytest.raises(ValidationError, match=message):
        mg.import_memories(**kwargs)  # type: ignore[arg-type]
    assert mg.store.counts() == before


def test_import_with_an_existing_id_fails_whole(mg: MemoryGraph) -> None:
    mg.remember("already here", id="dup")
    before = mg.store.counts()
    with pytest.raises(ConflictError, match="dup"):
        mg.import_memories(["new one", "clash"], ids=["fresh", "dup"], agent="zed")
    assert mg.store.counts() == before
    assert mg.store.get_memories(["fresh"]) == {}


def test_import_of_nothing_writes_nothing(mg: MemoryGraph) -> None:
    before = mg.store.counts()
    assert mg.import_memories([]) == []
    assert mg.store.counts() == before
