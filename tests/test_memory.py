"""The MemoryGraph facade on every store: remember, recall, episodes, bad input."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from amem_graph import (
    ConflictError,
    HashingEmbedder,
    MemoryGraph,
    MemoryGraphConfig,
    NotFoundError,
    ValidationError,
)
from amem_graph.stores.base import GraphStore

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def snapshot(mg: MemoryGraph) -> tuple[dict[str, int], list[str]]:
    """Counts plus every memory id: what 'nothing changed' is checked against."""
    from amem_graph.stores.base import MemoryFilter

    ids = [m.id for m in mg.store.find_memories(MemoryFilter(statuses=None))]
    return mg.store.counts(), ids


def test_remember_keeps_caller_id_and_provenance(mg: MemoryGraph) -> None:
    m = mg.remember(
        "The staging database password rotates every Monday",
        agent="planner",
        task="t1",
        scope="default",
        kind="semantic",
        tags=["ops", "db"],
        source="https://example.org/runbook?page=2",
        timestamp=T0,
        id="my-id",
    )
    assert m.id == "my-id"
    got = mg.get("my-id")
    assert got.content == m.content
    assert got.agent == "planner" and got.task == "t1"
    assert got.tags == ["ops", "db"]
    assert got.created_at == T0 and got.created_at.tzinfo is not None
    assert got.status == "active" and got.confidence == pytest.approx(0.5)
    assert got.embedding is not None and len(got.embedding) == mg.embedder.dims
    out = {(e.type, e.dst) for e in mg.store.edges(["my-id"], None, "out")}
    assert ("ATTRIBUTED_TO", "planner") in out
    assert ("FOR_TASK", "t1") in out
    assert any(t == "FROM_SOURCE" for t, _ in out)


def test_derived_from_links_and_unknown_parent_is_rejected(mg: MemoryGraph) -> None:
    mg.remember("Parent fact about caching", id="p1")
    mg.remember("Child insight from the parent", id="c1", derived_from=["p1"], kind="insight")
    assert [e.dst for e in mg.store.edges(["c1"], ["DERIVED_FROM"])] == ["p1"]
    before = snapshot(mg)
    with pytest.raises(NotFoundError, match="unknown memory 'nope'"):
        mg.remember("orphan", derived_from=["nope"])
    assert snapshot(mg) == before


def test_remember_same_id_same_content_is_idempotent(mg: MemoryGraph) -> None:
    first = mg.remember("Idempotent text", id="x1", timestamp=T0)
    before = snapshot(mg)
    again = mg.remember("Idempotent text", id="x1")
    assert again.id == first.id and again.created_at == T0
    assert snapshot(mg) == before


def test_remember_same_id_other_content_conflicts(mg: MemoryGraph) -> None:
    mg.remember("Original", id="x1")
    with pytest.raises(ConflictError, match="'x1' already exists with different content"):
        mg.remember("Changed", id="x1")
    assert mg.get("x1").content == "Original"


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "content is empty"), ("   \n\t", "content is empty")],
)
def test_blank_content_is_rejected(mg: MemoryGraph, content: str, message: str) -> None:
    mg.remember("kept", id="keep")
    before = snapshot(mg)
    with pytest.raises(ValidationError, match=message):
        mg.remember(content)
    assert snapshot(mg) == before


def test_overlong_content_is_rejected(store: GraphStore) -> None:
    mg = MemoryGraph(store, HashingEmbedder(), MemoryGraphConfig(max_content_length=100))
    mg.remember("kept", id="keep")
    before = snapshot(mg)
    with pytest.raises(ValidationError, match="content is 101 characters, the limit is 100"):
        mg.remember("x" * 101)
    assert snapshot(mg) == before
    assert mg.remember("y" * 100).content == "y" * 100


def test_default_content_limit_is_32000(mg: MemoryGraph) -> None:
    with pytest.raises(ValidationError, match="limit is 32000"):
        mg.remember("z" * 32_001)


def test_naive_timestamp_and_bad_names_are_rejected(mg: MemoryGraph) -> None:
    with pytest.raises(ValidationError, match="has no timezone"):
        mg.remember("text", timestamp=datetime(2026, 1, 1))
    with pytest.raises(ValidationError, match="agent"):
        mg.remember("text", agent="bad agent name")
    with pytest.raises(ValidationError, match="scope"):
        mg.remember("text", scope="")
    with pytest.raises(ValidationError, match="kind"):
        mg.remember("text", kind="opinion")  # type: ignore[arg-type]


def test_remember_many_is_all_or_nothing(mg: MemoryGraph) -> None:
    mg.remember("existing", id="e0")
    before = snapshot(mg)
    items = [
        {"content": "good one", "agent": "a", "id": "x1", "timestamp": T0},
        {"content": "good two", "agent": "a", "id": "x2"},
        {"content": "   ", "agent": "a", "id": "x3"},
    ]
    with pytest.raises(ValidationError, match="item 2: content: content is empty"):
        mg.remember_many(items)
    assert snapshot(mg) == before
    with pytest.raises(ValidationError, match="item 1: id 'x1' repeats item 0"):
        mg.remember_many([{"content": "a", "id": "x1"}, {"content": "b", "id": "x1"}])
    with pytest.raises(ValidationError, match="item 0: colour: Extra inputs are not permitted"):
        mg.remember_many([{"content": "a", "colour": "red"}])
    assert snapshot(mg) == before
    stored = mg.remember_many(items[:2])
    assert [m.id for m in stored] == ["x1", "x2"]
    assert mg.get("x1").created_at == T0


def test_remember_many_orders_parents_within_batch(mg: MemoryGraph) -> None:
    stored = mg.remember_many(
        [{"content": "root", "id": "r"}, {"content": "leaf", "id": "l", "derived_from": ["r"]}]
    )
    assert [m.id for m in stored] == ["r", "l"]
    with pytest.raises(ValidationError, match="must come earlier"):
        mg.remember_many(
            [{"content": "leaf2", "id": "l2", "derived_from": ["r2"]}, {"content": "r", "id": "r2"}]
        )


class _BrokenEmbedder(HashingEmbedder):
    def __init__(self, bad: Sequence[float]) -> None:
        super().__init__(256)
        self.bad = list(bad)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.bad for _ in texts]


@pytest.mark.parametrize(
    ("vector", "message"),
    [
        ([math.nan] + [0.1] * 255, "value 0 is nan"),
        ([0.1] * 255 + [math.inf], "value 255 is inf"),
        ([0.1] * 10, "has 10 dimensions, the store uses 256"),
    ],
)
def test_bad_vectors_are_rejected(store: GraphStore, vector: list[float], message: str) -> None:
    good = MemoryGraph(store, HashingEmbedder(256))
    good.remember("kept", id="keep")
    before = snapshot(good)
    bad = MemoryGraph(store, _BrokenEmbedder(vector))
    with pytest.raises(ValidationError, match=message):
        bad.remember("poisoned vector")
    assert snapshot(good) == before


def test_get_unknown_id_raises_not_found(mg: MemoryGraph) -> None:
    with pytest.raises(NotFoundError, match="no memory with id 'ghost'") as info:
        mg.get("ghost")
    assert isinstance(info.value, KeyError)


def test_recall_finds_and_scopes(mg: MemoryGraph) -> None:
    mg.remember("Kubernetes pods restart when the liveness probe fails", id="k8s", scope="ops")
    mg.remember("Bananas are rich in potassium", id="fruit", scope="ops")
    mg.remember("Kubernetes liveness probe secret notes", id="other", scope="elsewhere")
    hits = mg.recall("liveness probe kubernetes", k=5, scope="ops")
    assert hits[0].memory.id == "k8s"
    assert all(h.memory.scope == "ops" for h in hits)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(hits[i].score >= hits[i + 1].score for i in range(len(hits) - 1))
    assert hits[0].explanation is None


def test_recall_validates_input(mg: MemoryGraph) -> None:
    with pytest.raises(ValidationError, match="query is empty"):
        mg.recall("   ")
    with pytest.raises(ValidationError, match="k must be at least 1"):
        mg.recall("x", k=0)
    with pytest.raises(ValidationError, match="unknown recall option"):
        mg.recall("x", colour="red")


def test_recall_respects_validity_window(mg: MemoryGraph) -> None:
    mg.remember(
        "The office is in Berlin",
        id="old",
        timestamp=T0,
        valid_to=T0 + timedelta(days=30),
    )
    mg.remember("The office is in Lisbon", id="new", timestamp=T0 + timedelta(days=30))
    then = {h.memory.id for h in mg.recall("where is the office", as_of=T0 + timedelta(days=1))}
    now = {h.memory.id for h in mg.recall("where is the office", as_of=T0 + timedelta(days=60))}
    assert then == {"old"}
    assert now == {"new"}


def test_episode_logs_reads_writes_and_outcome(mg: MemoryGraph) -> None:
    mg.remember("Deploys go through the blue pool", id="d1", agent="planner")
    with mg.episode(agent="deployer", task="ship-42", id="ep1") as ep:
        hits = ep.recall("how do deploys go", k=3)
        written = ep.remember("Deployed build 42 through the blue pool")
        outcome = ep.outcome(success=True, detail="green")
    assert hits and hits[0].memory.id == "d1"
    reads = mg.store.edges(["ep1"], ["READ"])
    assert {e.dst for e in reads} == {h.memory.id for h in hits}
    first = next(e for e in reads if e.dst == "d1")
    assert first.props["rank"] == 1 and first.props["query"] == "how do deploys go"
    assert isinstance(first.props["at"], datetime) and first.props["at"].tzinfo is not None
    assert written.agent == "deployer" and written.task == "ship-42" and written.episode == "ep1"
    assert {(e.type, e.dst) for e in mg.store.edges([written.id], None)} >= {
        ("GENERATED_IN", "ep1"),
        ("ATTRIBUTED_TO", "deployer"),
    }
    assert outcome.success and outcome.episode == "ep1"
    info = ep.info()
    assert info.agent == "deployer" and info.ended_at is not None
    assert mg.get("d1").confidence > 0.5


def test_remember_into_episode_by_id(mg: MemoryGraph) -> None:
    mg.remember_many(
        [
            {"content": "hi, how was the trip", "agent": "ann", "episode": "s1", "timestamp": T0},
            {
                "content": "great, we saw the fjords",
                "agent": "bo",
                "episode": "s1",
                "timestamp": T0 + timedelta(minutes=1),
            },
        ]
    )
    episode = mg.store.get_nodes("Episode", ["s1"])["s1"]
    assert episode.props["started_at"] == T0
    members = {e.src for e in mg.store.edges(["s1"], ["GENERATED_IN"], "in")}
    assert len(members) == 2


def test_context_manager_closes(store: GraphStore) -> None:
    with MemoryGraph(store, HashingEmbedder()) as mg:
        mg.remember("x", id="x")
    from amem_graph import AmemGraphError

    with pytest.raises(AmemGraphError):
        store.get_memories(["x"])
