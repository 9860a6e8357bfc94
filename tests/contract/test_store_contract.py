"""The GraphStore contract, at store level, on every store kind (``store`` fixture).

LocalStore is the reference; every test here must pass on Neo4jStore unchanged. Each test checks
behaviour that a wrong store would get wrong: values read back, what a failed batch leaves
behind (nothing), what each filter admits, and that a selective filter never starves a search.
Neo4j runs it twice: over ``bolt://`` and over a ``neo4j://`` routing URI (managed READ
transactions, bookmarks), the way a cluster or Aura is reached.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from conftest import ROUTING_PARAM, STORE_PARAMS

from amem_graph.core.errors import (
    ConflictError,
    EmbedderMismatchError,
    NotFoundError,
    StoreError,
    ValidationError,
)
from amem_graph.core.models import Memory, content_hash
from amem_graph.core.schema import AGENT, EPISODE, MEMORY, OUTCOME, TASK
from amem_graph.core.seeding import SeedPlan
from amem_graph.stores.base import (
    Edge,
    EdgeWrite,
    Gist,
    GraphStore,
    MemoryFilter,
    MemoryUpdate,
    Node,
    NodeWrite,
    RankFields,
    WriteBatch,
    neighbourhood_by_parts,
    search_expand_by_parts,
    vector_search_many,
)

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
DIMS = 8
EMBEDDER = "contract-test-embedder"
ANY = MemoryFilter(statuses=None)


@pytest.fixture(params=[*STORE_PARAMS, ROUTING_PARAM])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Local, Neo4j over ``bolt://``, and Neo4j over a ``neo4j://`` routing URI (see
    ``conftest.routing_uri``): the contract holds the way a cluster or Aura is reached too."""
    kind: str = request.param
    return kind


def unit(values: Sequence[float]) -> list[float]:
    vec = np.asarray(values, dtype=np.float64)
    return (vec / np.linalg.norm(vec)).tolist()  # type: ignore[no-any-return]


def axis(i: int, tilt: float = 0.0, j: int = 1) -> list[float]:
    """A unit vector close to axis ``i``, tilted towards axis ``j`` by ``tilt``."""
    vec = [0.0] * DIMS
    vec[i] = 1.0
    vec[j] += tilt
    return unit(vec)


def mem(
    mid: str,
    content: str | None = None,
    *,
    vec: list[float] | None = None,
    created: datetime = T0,
    **fields: Any,
) -> Memory:
    text = content if content is not None else f"memory {mid}"
    fields.setdefault("valid_from", created)
    return Memory(
        id=mid,
        content=text,
        created_at=created,
        content_hash=content_hash(text),
        embedding=vec,
        **fields,
    )


@pytest.fixture
def s(store: GraphStore) -> GraphStore:
    """The store with the test embedder recorded."""
    store.ensure_embedder(EMBEDDER, DIMS)
    return store


def memory_ids(store: GraphStore) -> set[str]:
    return {m.id for m in store.find_memories(ANY)}


def assert_empty(store: GraphStore) -> None:
    assert store.counts() == {}
    assert memory_ids(store) == set()
    assert list(store.iter_nodes()) == []
    assert list(store.iter_edges()) == []


# -- embedder -------------------------------------------------------------------------------


def test_embedder_is_recorded_once_and_a_different_one_is_refused(store: GraphStore) -> None:
    assert store.embedder_info() is None
    store.ensure_embedder("model-a", 16)
    assert store.embedder_info() == ("model-a", 16)
    store.ensure_embedder("model-a", 16)  # same again: fine
    with pytest.raises(EmbedderMismatchError, match="model-a"):
        store.ensure_embedder("model-b", 16)
    with pytest.raises(EmbedderMismatchError, match="16 dims"):
        store.ensure_embedder("model-a", 32)
    assert store.embedder_info() == ("model-a", 16)


# -- memories: write and read back ----------------------------------------------------------


def test_memory_round_trip_keeps_every_field(s: GraphStore) -> None:
    full = mem(
        "m-full",
        "The deploy failed because the cache was cold",
        vec=axis(0, 0.3),
        kind="procedural",
        scope="team-a",
        agent="agent-1",
        task="task-1",
        episode="ep-1",
        source="https://example.org/runbook",
        tags=["deploy", "cache"],
        keywords=["cold cache", "deploy"],
        context="incident review",
        created=T0,
        valid_from=T0 + timedelta(hours=1),
        valid_to=T0 + timedelta(days=30),
        importance=0.9,
        successes=2.5,
        failures=1.0,
        status="quarantined",
        version=3,
    )
    bare = mem("m-bare", "no optional fields", created=T0 + timedelta(seconds=1, microseconds=7))
    s.apply(WriteBatch(memories=[full, bare]))

    got = s.get_memories(["m-full", "m-bare", "missing", "m-full"])
    assert set(got) == {"m-full", "m-bare"}
    for original in (full, bare):
        back = got[original.id]
        assert back.model_dump(exclude={"embedding"}) == original.model_dump(exclude={"embedding"})
        for name in ("created_at", "valid_from"):
            value = getattr(back, name)
            assert value.tzinfo is not None and value.utcoffset() == timedelta(0)
    assert got["m-full"].valid_to == T0 + timedelta(days=30)
    assert got["m-bare"].valid_to is None
    assert got["m-bare"].embedding is None
    assert got["m-full"].embedding == pytest.approx(full.embedding, abs=1e-6)
    assert got["m-full"].confidence == pytest.approx((1 + 2.5) / (2 + 3.5))

    light = s.get_memories(["m-full"], embeddings=False)["m-full"]
    assert light.embedding is None
    assert light.content == full.content


def test_stored_embedding_is_unit_length(s: GraphStore) -> None:
    raw = [3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    s.apply(WriteBatch(memories=[mem("m", vec=raw)]))
    back = s.get_memories(["m"])["m"].embedding
    assert back == pytest.approx([0.6, 0.8, 0, 0, 0, 0, 0, 0], abs=1e-6)


def test_times_in_other_zones_mean_the_same_instant(s: GraphStore) -> None:
    plus2 = timezone(timedelta(hours=2))
    local_time = datetime(2026, 1, 5, 11, 30, tzinfo=plus2)  # == T0
    s.apply(WriteBatch(memories=[mem("m", created=local_time)]))
    back = s.get_memories(["m"])["m"]
    assert back.created_at == T0
    assert s.filter_ids(["m"], MemoryFilter(as_of=T0)) == {"m"}
    assert s.filter_ids(["m"], MemoryFilter(as_of=T0 - timedelta(microseconds=1))) == set()


@pytest.mark.parametrize(
    ("vector", "message"),
    [
        ([0.1] * (DIMS - 1), "dim"),
        ([0.1] * (DIMS - 1) + [math.nan], "non-finite"),
    ],
)
def test_bad_embedding_fails_the_whole_batch(
    s: GraphStore, vector: list[float], message: str
) -> None:
    batch = WriteBatch(
        memories=[mem("ok", vec=axis(0)), mem("bad", vec=vector)],
        nodes=[NodeWrite(AGENT, "a1")],
    )
    with pytest.raises(ValidationError, match=message):
        s.apply(batch)
    assert_empty(s)


def test_empty_batch_is_a_no_op(s: GraphStore) -> None:
    s.apply(WriteBatch())
    assert_empty(s)


# -- nodes ----------------------------------------------------------------------------------


def test_node_write_merges_props_and_sets_on_create_only_once(s: GraphStore) -> None:
    t1 = T0 + timedelta(hours=1)
    first = NodeWrite(
        EPISODE,
        "ep-1",
        props={"scope": "s1", "count": 1},
        on_create={"started_at": T0, "agent": "a1"},
    )
    s.apply(WriteBatch(nodes=[first]))
    again = NodeWrite(
        EPISODE,
        "ep-1",
        props={"scope": "s2", "ended_at": t1},
        on_create={"started_at": t1, "agent": "someone-else"},
    )
    s.apply(WriteBatch(nodes=[again]))
    node = s.get_nodes(EPISODE, ["ep-1"])["ep-1"]
    assert node == Node(
        EPISODE,
        "ep-1",
        {"scope": "s2", "count": 1, "started_at": T0, "agent": "a1", "ended_at": t1},
    )


def test_create_only_node_refuses_an_existing_one_and_fails_the_whole_batch(
    s: GraphStore,
) -> None:
    s.apply(WriteBatch(memories=[mem("m")]))
    first = NodeWrite(OUTCOME, "o1", props={"success": True}, create_only=True)
    s.apply(WriteBatch(nodes=[first]))
    again = WriteBatch(
        nodes=[NodeWrite(AGENT, "a1"), NodeWrite(OUTCOME, "o1", create_only=True)],
        memory_updates=[MemoryUpdate("m", increments={"successes": 1})],
    )
    with pytest.raises(ConflictError):
        s.apply(again)
    twice = [NodeWrite(TASK, "t1", create_only=True), NodeWrite(TASK, "t1", create_only=True)]
    with pytest.raises(ConflictError):
        s.apply(WriteBatch(nodes=twice))
    assert s.get_nodes(OUTCOME, ["o1"])["o1"].props == {"success": True}
    assert s.get_memories(["m"])["m"].successes == 0
    assert s.counts() == {MEMORY: 1, OUTCOME: 1}


def test_racing_create_only_writes_let_exactly_one_win(s: GraphStore) -> None:
    """Four threads create one node and credit one memory: the store lets one through."""
    s.apply(WriteBatch(memories=[mem("m")]))
    results: list[str] = []
    gate = threading.Barrier(4)

    def create() -> None:
        batch = WriteBatch(
            nodes=[NodeWrite(OUTCOME, "o1", create_only=True)],
            memory_updates=[MemoryUpdate("m", increments={"successes": 1})],
        )
        gate.wait()
        try:
            s.apply(batch)
            results.append("won")
        except ConflictError:
            results.append("lost")

    threads = [threading.Thread(target=create) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["lost", "lost", "lost", "won"]
    assert s.get_memories(["m"])["m"].successes == 1


def test_two_writes_of_one_node_in_a_batch_apply_in_order(s: GraphStore) -> None:
    batch = WriteBatch(
        nodes=[
            NodeWrite(TASK, "t1", props={"v": 1}, on_create={"created": True}),
            NodeWrite(TASK, "t1", props={"v": 2, "w": "x"}, on_create={"created": False}),
        ]
    )
    s.apply(batch)
    assert s.get_nodes(TASK, ["t1"])["t1"].props == {"v": 2, "w": "x", "created": True}
    assert s.counts() == {TASK: 1}


def test_node_property_types_round_trip(s: GraphStore) -> None:
    props: dict[str, Any] = {
        "text": "héllo ✓",
        "int": -(2**40),
        "float": 0.25,
        "flag": False,
        "when": T0,
        "words": ["a", "b"],
        "scores": [0.5, 1.5],
        "counts": [1, 2, 3],
        "empty": "",
    }
    s.apply(WriteBatch(nodes=[NodeWrite(OUTCOME, "o1", props=props)]))
    back = s.get_nodes(OUTCOME, ["o1"])["o1"].props
    assert back == props
    assert type(back["int"]) is int and type(back["float"]) is float and back["flag"] is False
    assert type(back["counts"][0]) is int and type(back["scores"][0]) is float
    assert back["when"].tzinfo is not None


def test_get_and_find_nodes(s: GraphStore) -> None:
    s.apply(
        WriteBatch(
            nodes=[
                NodeWrite(AGENT, "b", props={"team": "red", "level": 2}),
                NodeWrite(AGENT, "a", props={"team": "red", "level": 1}),
                NodeWrite(AGENT, "c", props={"team": "blue"}),
                NodeWrite(TASK, "a", props={"team": "red"}),
            ]
        )
    )
    assert set(s.get_nodes(AGENT, ["a", "c", "zzz"])) == {"a", "c"}
    assert s.get_nodes(TASK, ["b"]) == {}
    assert [n.id for n in s.find_nodes(AGENT, {"team": "red"})] == ["a", "b"]
    assert [n.id for n in s.find_nodes(AGENT, {"team": "red", "level": 2})] == ["b"]
    assert [n.id for n in s.find_nodes(AGENT, {"level": None})] == ["c"]
    assert [n.id for n in s.find_nodes(AGENT)] == ["a", "b", "c"]
    assert [n.label for n in s.find_nodes(TASK, {"team": "red"})] == [TASK]
    with pytest.raises(ValidationError):
        s.find_nodes("Nope")
    with pytest.raises(ValidationError):
        s.get_nodes("Nope", ["a"])
    with pytest.raises(ValidationError):
        s.find_nodes(AGENT, {"bad key": 1})


# -- edges ----------------------------------------------------------------------------------


def _graph(s: GraphStore) -> None:
    """m1 -ATTRIBUTED_TO-> Agent x, m1 -FOR_TASK-> Task x (same id, other label),
    ep -PERFORMED_BY-> Agent x, ep -PART_OF-> Task x, ep -READ-> m1, m2 -DERIVED_FROM-> m1."""
    s.apply(
        WriteBatch(
            memories=[mem("m1"), mem("m2")],
            nodes=[NodeWrite(AGENT, "x"), NodeWrite(TASK, "x"), NodeWrite(EPISODE, "ep")],
            edges=[
                EdgeWrite("ATTRIBUTED_TO", "m1", "x"),
                EdgeWrite("FOR_TASK", "m1", "x"),
                EdgeWrite("PERFORMED_BY", "ep", "x"),
                EdgeWrite("PART_OF", "ep", "x"),
                EdgeWrite("READ", "ep", "m1", {"rank": 1}, key="r1"),
                EdgeWrite("DERIVED_FROM", "m2", "m1"),
            ],
        )
    )


def _idents(edges: list[Edge]) -> set[tuple[str, str, str, str]]:
    return {(e.type, e.src, e.dst, e.key) for e in edges}


def test_edges_by_direction_and_type(s: GraphStore) -> None:
    _graph(s)
    assert _idents(s.edges(["m1"])) == {
        ("ATTRIBUTED_TO", "m1", "x", ""),
        ("FOR_TASK", "m1", "x", ""),
    }
    assert _idents(s.edges(["m1"], direction="in")) == {
        ("READ", "ep", "m1", "r1"),
        ("DERIVED_FROM", "m2", "m1", ""),
    }
    assert _idents(s.edges(["m1"], ["READ", "FOR_TASK"], "both")) == {
        ("READ", "ep", "m1", "r1"),
        ("FOR_TASK", "m1", "x", ""),
    }
    # id "x" names an Agent and a Task: both are found, each through its own edge types
    assert _idents(s.edges(["x"], direction="in")) == {
        ("ATTRIBUTED_TO", "m1", "x", ""),
        ("FOR_TASK", "m1", "x", ""),
        ("PERFORMED_BY", "ep", "x", ""),
        ("PART_OF", "ep", "x", ""),
    }
    assert _idents(s.edges(["x"], ["PART_OF"], "in")) == {("PART_OF", "ep", "x", "")}
    assert s.edges(["x"], direction="out") == []
    assert s.edges(["nobody"], direction="both") == []
    assert s.edges([], direction="both") == []
    both = s.edges(["m1", "m2"], direction="both")
    assert len(both) == len(_idents(both)) == 4  # m2->m1 is reached from both ends, once
    read = s.edges(["ep"], ["READ"])[0]
    assert read.props == {"rank": 1}
    with pytest.raises(ValidationError):
        s.edges(["m1"], ["NOT_A_TYPE"])


def test_edge_write_merges_by_type_src_dst_key(s: GraphStore) -> None:
    s.apply(
        WriteBatch(memories=[mem("m1")], nodes=[NodeWrite(EPISODE, "ep")]),
    )
    s.apply(WriteBatch(edges=[EdgeWrite("READ", "ep", "m1", {"rank": 1, "q": "a"}, key="k1")]))
    s.apply(WriteBatch(edges=[EdgeWrite("READ", "ep", "m1", {"rank": 2, "at": T0}, key="k1")]))
    s.apply(WriteBatch(edges=[EdgeWrite("READ", "ep", "m1", {"rank": 5}, key="k2")]))
    edges = {e.key: e for e in s.edges(["ep"], ["READ"])}
    assert set(edges) == {"k1", "k2"}
    assert edges["k1"].props == {"rank": 2, "q": "a", "at": T0}
    assert edges["k2"].props == {"rank": 5}
    assert s.counts()["READ"] == 2


@pytest.mark.parametrize(
    "bad_edge",
    [
        EdgeWrite("ATTRIBUTED_TO", "new-mem", "no-such-agent"),
        EdgeWrite("ATTRIBUTED_TO", "no-such-memory", "agent-1"),
        EdgeWrite("ATTRIBUTED_TO", "new-mem", "task-1"),  # a Task, not an Agent
        EdgeWrite("READ", "agent-1", "new-mem"),  # an Agent, not an Episode
    ],
    ids=["missing-dst", "missing-src", "dst-wrong-label", "src-wrong-label"],
)
def test_edge_to_a_missing_endpoint_rolls_back_the_whole_batch(
    s: GraphStore, bad_edge: EdgeWrite
) -> None:
    s.apply(WriteBatch(nodes=[NodeWrite(TASK, "task-1")]))
    before = s.counts()
    batch = WriteBatch(
        memories=[mem("new-mem", vec=axis(2))],
        nodes=[NodeWrite(AGENT, "agent-1"), NodeWrite(TASK, "task-1", props={"touched": True})],
        edges=[EdgeWrite("FOR_TASK", "new-mem", "task-1"), bad_edge],
        memory_updates=[],
    )
    with pytest.raises(NotFoundError):
        s.apply(batch)
    assert s.counts() == before
    assert s.get_memories(["new-mem"]) == {}
    assert s.get_nodes(AGENT, ["agent-1"]) == {}
    assert s.get_nodes(TASK, ["task-1"])["task-1"].props == {}
    assert s.vector_search(axis(2), 5, ANY) == []
    assert s.text_search("new-mem", 5, ANY) == []


def test_delete_edges(s: GraphStore) -> None:
    _graph(s)
    s.apply(
        WriteBatch(
            delete_edges=[
                ("READ", "ep", "m1", "r1"),
                ("FOR_TASK", "m1", "x", ""),
                ("READ", "ep", "m1", "other-key"),  # absent: ignored
            ]
        )
    )
    assert _idents(s.edges(["ep"])) == {("PERFORMED_BY", "ep", "x", ""), ("PART_OF", "ep", "x", "")}
    assert _idents(s.edges(["m1"])) == {("ATTRIBUTED_TO", "m1", "x", "")}
    assert "READ" not in s.counts()


# -- conflicts ------------------------------------------------------------------------------


def test_existing_memory_id_conflicts_and_nothing_of_the_batch_is_stored(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("m1", "original", vec=axis(0))]))
    before = s.counts()
    batch = WriteBatch(
        memories=[mem("m2", vec=axis(1)), mem("m1", "a second m1", vec=axis(2))],
        nodes=[NodeWrite(AGENT, "a1")],
        edges=[EdgeWrite("ATTRIBUTED_TO", "m2", "a1")],
    )
    with pytest.raises(ConflictError):
        s.apply(batch)
    assert s.counts() == before
    assert memory_ids(s) == {"m1"}
    assert s.get_memories(["m1"])["m1"].content == "original"
    assert s.get_nodes(AGENT, ["a1"]) == {}


def test_duplicate_id_inside_one_batch_conflicts(s: GraphStore) -> None:
    with pytest.raises(ConflictError):
        s.apply(WriteBatch(memories=[mem("d", "one"), mem("d", "two")]))
    assert_empty(s)


# -- memory updates -------------------------------------------------------------------------


def test_memory_update_changes_fields_and_adds_increments(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("m", "the old words", vec=axis(0), tags=["t0"])]))
    end = T0 + timedelta(days=2)
    s.apply(
        WriteBatch(
            memory_updates=[
                MemoryUpdate(
                    "m",
                    changes={
                        "status": "superseded",
                        "tags": ["t1", "t2"],
                        "valid_to": end,
                        "content": "brand new phrasing",
                        "importance": 0.1,
                    },
                    increments={"successes": 1.5, "version": 1},
                ),
                MemoryUpdate("m", increments={"successes": 0.5, "failures": 2}),
            ]
        )
    )
    m = s.get_memories(["m"])["m"]
    assert (m.status, m.tags, m.valid_to, m.content, m.importance) == (
        "superseded",
        ["t1", "t2"],
        end,
        "brand new phrasing",
        0.1,
    )
    assert (m.successes, m.failures, m.version) == (2.0, 2.0, 2)
    assert m.embedding == pytest.approx(axis(0), abs=1e-6)  # untouched
    # the text index follows the new content, the filters the new status
    assert [i for i, _ in s.text_search("phrasing", 5, ANY)] == ["m"]
    assert s.text_search("old words", 5, ANY) == []
    assert s.filter_ids(["m"], MemoryFilter()) == set()
    assert s.filter_ids(["m"], MemoryFilter(statuses=("superseded",))) == {"m"}
    assert s.statuses(["m", "ghost"]) == {"m": "superseded"}
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("m", changes={"valid_to": None})]))
    assert s.get_memories(["m"])["m"].valid_to is None


def test_memory_update_of_embedding_moves_it_in_vector_search(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("a", vec=axis(0)), mem("b", vec=axis(1))]))
    assert s.vector_search(axis(2), 1, ANY)[0][0] == "a"  # tie at 0: id order
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("b", changes={"embedding": axis(2)})]))
    top = s.vector_search(axis(2), 2, ANY)
    assert top[0][0] == "b" and top[0][1] == pytest.approx(1.0, abs=1e-5)
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("b", changes={"embedding": None})]))
    assert [i for i, _ in s.vector_search(axis(2), 5, ANY)] == ["a"]
    assert s.get_memories(["b"])["b"].embedding is None


def test_memory_update_of_a_missing_memory_rolls_back(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("m")]))
    batch = WriteBatch(
        nodes=[NodeWrite(AGENT, "a1")],
        memory_updates=[
            MemoryUpdate("m", increments={"successes": 1}),
            MemoryUpdate("ghost", increments={"successes": 1}),
        ],
    )
    with pytest.raises(NotFoundError, match="ghost"):
        s.apply(batch)
    assert s.get_memories(["m"])["m"].successes == 0
    assert s.get_nodes(AGENT, ["a1"]) == {}


def test_memory_update_with_a_bad_value_is_a_validation_error(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("m")]))
    batch = WriteBatch(
        nodes=[NodeWrite(AGENT, "a1")],
        memory_updates=[MemoryUpdate("m", changes={"status": "not-a-status"})],
    )
    with pytest.raises(ValidationError, match="'m'"):
        s.apply(batch)
    assert s.get_memories(["m"])["m"].status == "active"
    assert s.get_nodes(AGENT, ["a1"]) == {}


def test_concurrent_increments_are_not_lost(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("m")]))
    errors: list[BaseException] = []

    def credit() -> None:
        try:
            for _ in range(15):
                s.apply(WriteBatch(memory_updates=[MemoryUpdate("m", increments={"successes": 1})]))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=credit) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert s.get_memories(["m"])["m"].successes == 45


# -- deletion -------------------------------------------------------------------------------


def test_delete_memories_removes_memory_edges_and_search_entries(s: GraphStore) -> None:
    _graph(s)
    s.apply(
        WriteBatch(
            memory_updates=[
                MemoryUpdate("m1", changes={"content": "zanzibar harbour", "embedding": axis(3)})
            ]
        )
    )
    assert [i for i, _ in s.text_search("zanzibar", 5, ANY)] == ["m1"]
    s.apply(WriteBatch(delete_memories=["m1"]))
    assert s.get_memories(["m1"]) == {}
    assert s.text_search("zanzibar", 5, ANY) == []
    assert "m1" not in [i for i, _ in s.vector_search(axis(3), 5, ANY)]
    assert s.filter_ids(["m1", "m2"], ANY) == {"m2"}
    assert _idents(s.edges(["x"], direction="in")) == {
        ("PERFORMED_BY", "ep", "x", ""),
        ("PART_OF", "ep", "x", ""),
    }
    assert s.edges(["ep"], ["READ"]) == []
    assert s.edges(["m2"], ["DERIVED_FROM"]) == []
    assert s.counts() == {MEMORY: 1, AGENT: 1, TASK: 1, EPISODE: 1, "PERFORMED_BY": 1, "PART_OF": 1}


def test_deleting_a_missing_memory_rolls_back(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("a"), mem("b")]))
    with pytest.raises(NotFoundError, match="ghost"):
        s.apply(WriteBatch(nodes=[NodeWrite(AGENT, "a1")], delete_memories=["a", "ghost"]))
    assert memory_ids(s) == {"a", "b"}
    assert s.get_nodes(AGENT, ["a1"]) == {}


# -- filters on every read path --------------------------------------------------------------


def _filter_fixture(s: GraphStore) -> list[Memory]:
    """Eight memories that differ in one filtered attribute each; all match 'harbor'."""
    day = timedelta(days=1)
    mems = [
        mem("f-base", "harbor one", vec=axis(0, 0.10), scope="A", agent="ag1", task="t1"),
        mem("f-scope", "harbor two", vec=axis(0, 0.11), scope="B", agent="ag1", task="t1"),
        mem(
            "f-status",
            "harbor three",
            vec=axis(0, 0.12),
            scope="A",
            agent="ag1",
            task="t1",
            status="quarantined",
        ),
        mem("f-agent", "harbor four", vec=axis(0, 0.13), scope="A", agent="ag2", task="t1"),
        mem("f-noagent", "harbor five", vec=axis(0, 0.14), scope="A", task="t1"),
        mem("f-task", "harbor six", vec=axis(0, 0.15), scope="A", agent="ag1", task="t2"),
        mem(
            "f-future",
            "harbor seven",
            vec=axis(0, 0.16),
            scope="A",
            agent="ag1",
            task="t1",
            created=T0 + 10 * day,
        ),
        mem(
            "f-expired",
            "harbor eight",
            vec=axis(0, 0.17),
            scope="A",
            agent="ag1",
            task="t1",
            valid_to=T0 + day,
        ),
    ]
    s.apply(WriteBatch(memories=mems))
    return mems


FILTERS = {
    "any": MemoryFilter(statuses=None),
    "scope": MemoryFilter(scopes=("B",), statuses=None),
    "two-scopes": MemoryFilter(scopes=("A", "B")),
    "status": MemoryFilter(statuses=("quarantined",)),
    "no-status": MemoryFilter(statuses=()),
    "active": MemoryFilter(),
    "as-of-start": MemoryFilter(as_of=T0, statuses=None),
    "as-of-expiry": MemoryFilter(as_of=T0 + timedelta(days=1), statuses=None),
    "as-of-later": MemoryFilter(as_of=T0 + timedelta(days=20), statuses=None),
    "as-of-before": MemoryFilter(as_of=T0 - timedelta(seconds=1), statuses=None),
    "agent": MemoryFilter(agents=("ag2",), statuses=None),
    "agents": MemoryFilter(agents=("ag1", "ag2"), statuses=None),
    "task": MemoryFilter(tasks=("t2",), statuses=None),
    "unknown-agent": MemoryFilter(agents=("nobody",)),
    "everything": MemoryFilter(
        scopes=("A",), statuses=("active",), as_of=T0 + timedelta(hours=1), agents=("ag1",),
        tasks=("t1",)
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(FILTERS))
def test_every_read_path_applies_the_filter(s: GraphStore, name: str) -> None:
    mems = _filter_fixture(s)
    flt = FILTERS[name]
    admitted = {m.id for m in mems if flt.admits(m)}
    everything = [m.id for m in mems]
    scope_of = {m.id: m.scope for m in mems}

    assert {i for i, _ in s.vector_search(axis(0), 50, flt)} == admitted
    assert {i for i, _ in s.text_search("harbor", 50, flt)} == admitted
    assert s.filter_ids([*everything, "not-a-memory"], flt) == admitted
    assert set(s.rank_fields([*everything, "not-a-memory"], flt)) == admitted
    assert {m.id for m in s.find_memories(flt)} == admitted
    authors = {m.agent for m in mems if m.id in admitted and m.agent}
    assert s.authors(["ag1", "ag2", "AG1", "nobody", "ag1"], flt) == authors
    if flt.scopes is not None:
        one = s.one_per_scope(flt)
        assert set(one) == {m.scope for m in mems if m.id in admitted}
        assert all(mid in admitted and scope_of[mid] == scope for scope, mid in one.items())
    # with k=1, the admitted memory nearest the query (the least tilted one) wins
    if admitted:
        best = next(m.id for m in mems if m.id in admitted)
        assert [i for i, _ in s.vector_search(axis(0), 1, flt)] == [best]


def test_authors_follow_writes_and_retractions(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("a", vec=axis(0), scope="A", agent="avery")]))
    scoped = MemoryFilter(scopes=("A",))
    assert s.authors(["avery", "blake"], scoped) == {"avery"}
    assert s.authors([], scoped) == set()
    s.apply(WriteBatch(memories=[mem("b", vec=axis(1), scope="A", agent="blake")]))
    assert s.authors(["avery", "blake"], scoped) == {"avery", "blake"}
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("a", changes={"status": "retracted"})]))
    assert s.authors(["avery", "blake"], scoped) == {"blake"}
    assert s.authors(["avery", "blake"], MemoryFilter(scopes=("B",))) == set()


def test_one_per_scope_answers_for_each_scope_holding_an_admitted_memory(s: GraphStore) -> None:
    s.apply(
        WriteBatch(
            memories=[
                mem("a1", vec=axis(0), scope="A"),
                mem("a2", vec=axis(1), scope="A"),
                mem("b1", vec=axis(2), scope="B"),
                mem("c1", vec=axis(3), scope="C"),
            ]
        )
    )
    three = MemoryFilter(scopes=("A", "B", "C", "none", "A"))
    one = s.one_per_scope(three)
    assert set(one) == {"A", "B", "C"} and one["A"] in {"a1", "a2"}
    assert (one["B"], one["C"]) == ("b1", "c1")
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("b1", changes={"status": "retracted"})]))
    s.apply(WriteBatch(memory_updates=[MemoryUpdate(one["A"], changes={"status": "retracted"})]))
    left = s.one_per_scope(three)
    assert left == {"A": ({"a1", "a2"} - {one["A"]}).pop(), "C": "c1"}
    assert s.one_per_scope(MemoryFilter(scopes=("B",), statuses=("retracted",))) == {"B": "b1"}
    assert s.one_per_scope(MemoryFilter(scopes=())) == {}
    with pytest.raises(ValidationError, match="scopes"):
        s.one_per_scope(MemoryFilter(scopes=None))


def test_rank_fields_are_the_memory_s_own_and_follow_updates(s: GraphStore) -> None:
    odd = T0 + timedelta(days=3, microseconds=123_457)
    s.apply(
        WriteBatch(
            memories=[
                mem("a", vec=axis(0), importance=0.9, created=odd),
                mem("b", vec=axis(1), successes=2.0, failures=1.0),
            ]
        )
    )
    stored = s.get_memories(["a", "b"], embeddings=False)
    fields = s.rank_fields(["b", "a", "a"], ANY)
    assert fields == {mid: RankFields.of(m) for mid, m in stored.items()}
    assert fields["a"].created_at == pytest.approx(odd.timestamp(), abs=1e-6)
    assert fields["a"].importance == 0.9
    assert fields["b"].confidence == pytest.approx(stored["b"].confidence)

    s.apply(
        WriteBatch(memory_updates=[MemoryUpdate("b", increments={"successes": 1.5, "failures": 0})])
    )
    assert s.rank_fields(["b"], ANY)["b"].successes == 3.5
    assert s.rank_fields([], ANY) == {}


def test_gists_are_the_memory_s_own_agent_words_and_time(s: GraphStore) -> None:
    """What recall re-scores, read without the whole memory: equal to the memory's own
    fields, after its content changed, at any status; unknown ids are absent."""
    odd = datetime(2031, 7, 1, 23, 59, 59, 999_999, tzinfo=timezone(timedelta(hours=-5)))
    s.apply(
        WriteBatch(
            memories=[
                mem("a", 'Ünïcode "quoted" words\nover two lines', agent="alice", created=odd),
                mem("b", vec=axis(1), status="retracted"),
            ]
        )
    )
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("b", changes={"content": "new words"})]))
    stored = s.get_memories(["a", "b"], embeddings=False)
    gists = s.gists(["b", "a", "a", "not-a-memory"])
    assert gists == {mid: Gist.of(m) for mid, m in stored.items()}
    assert gists["a"] == Gist("alice", 'Ünïcode "quoted" words\nover two lines', odd)
    assert gists["b"].agent is None and gists["b"].content == "new words"
    assert s.gists([]) == {}


def test_validity_window_is_half_open(s: GraphStore) -> None:
    end = T0 + timedelta(hours=5)
    s.apply(WriteBatch(memories=[mem("w", valid_to=end)]))
    assert s.filter_ids(["w"], MemoryFilter(as_of=T0)) == {"w"}
    assert s.filter_ids(["w"], MemoryFilter(as_of=end - timedelta(microseconds=1))) == {"w"}
    assert s.filter_ids(["w"], MemoryFilter(as_of=end)) == set()


# -- vector search --------------------------------------------------------------------------


def test_vector_search_scores_are_cosines_best_first_ties_by_id(s: GraphStore) -> None:
    vectors = {
        "v-far": axis(1),
        "v-near": axis(0, 0.2),
        "v-b": axis(0, 0.5),
        "v-a": axis(0, 0.5),  # same vector as v-b: tie broken by id
        "v-opposite": [-x for x in axis(0)],
    }
    s.apply(WriteBatch(memories=[mem(i, vec=v) for i, v in vectors.items()]))
    query = axis(0, 0.1)
    got = s.vector_search(query, 10, ANY)
    expected = {i: float(np.dot(unit(query), v)) for i, v in vectors.items()}
    assert [i for i, _ in got] == ["v-near", "v-a", "v-b", "v-far", "v-opposite"]
    for i, score in got:
        assert score == pytest.approx(expected[i], abs=1e-5)
    assert s.vector_search(query, 2, ANY) == got[:2]
    assert s.vector_search([2 * x for x in query], 1, ANY)[0][0] == "v-near"  # scale-free
    assert s.vector_search(query, 0, ANY) == []


def test_vector_search_rejects_bad_queries(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("m", vec=axis(0))]))
    with pytest.raises(ValidationError, match="dimensions"):
        s.vector_search([1.0, 0.0], 3, ANY)
    with pytest.raises(ValidationError, match="non-finite"):
        s.vector_search([math.inf] + [0.0] * (DIMS - 1), 3, ANY)


def test_zero_vectors_score_zero(s: GraphStore) -> None:
    s.apply(
        WriteBatch(
            memories=[mem("z", vec=[0.0] * DIMS), mem("p", vec=axis(0)), mem("n", vec=axis(1))]
        )
    )
    assert s.get_memories(["z"])["z"].embedding == [0.0] * DIMS
    got = dict(s.vector_search(axis(0), 10, ANY))
    assert got == pytest.approx({"p": 1.0, "n": 0.0, "z": 0.0}, abs=1e-5)
    # a zero query scores everything 0 and keeps admitted memories with a vector, by id
    assert s.vector_search([0.0] * DIMS, 10, ANY) == [("n", 0.0), ("p", 0.0), ("z", 0.0)]


SELECTIVE = {
    "scope": (
        {"scope": "B"},
        MemoryFilter(scopes=("B",)),
    ),
    "status": (
        {"status": "quarantined"},
        MemoryFilter(scopes=("A",), statuses=("quarantined",)),
    ),
    "agent": ({"agent": "rare"}, MemoryFilter(agents=("rare",))),
    "task": ({"task": "rare"}, MemoryFilter(tasks=("rare",))),
}


@pytest.mark.parametrize("name", list(SELECTIVE))
def test_selective_filter_does_not_starve_vector_search(s: GraphStore, name: str) -> None:
    rare_fields, flt = SELECTIVE[name]
    crowd = [
        mem(f"crowd-{i:03d}", vec=axis(0, 0.001 * i), scope="A", agent="common", task="common")
        for i in range(200)
    ]
    base: dict[str, Any] = {"scope": "A", "agent": "common", "task": "common"}
    rare = [
        mem(f"rare-{i}", vec=axis(1, 0.2 + 0.1 * i, j=0), **{**base, **rare_fields})
        for i in range(5)
    ]
    s.apply(WriteBatch(memories=crowd + rare))
    got = s.vector_search(axis(0), 5, flt)
    assert sorted(i for i, _ in got) == [f"rare-{i}" for i in range(5)]
    assert [i for i, _ in got] == [f"rare-{i}" for i in range(4, -1, -1)]  # most tilted first
    assert [i for i, _ in s.vector_search(axis(0), 3, flt)] == ["rare-4", "rare-3", "rare-2"]


def test_many_vector_searches_answer_as_one_search_each(s: GraphStore) -> None:
    """Ingest's batched nearest-note searches: each answer is ``vector_search``'s, whatever
    the filter (wide, selective, starved, matching nothing) or the query (zero, tilted)."""
    filters = [
        ANY,
        MemoryFilter(scopes=("A",)),
        MemoryFilter(scopes=("B",)),
        MemoryFilter(scopes=("none",)),
        MemoryFilter(agents=("rare",)),
    ]
    queries = [axis(0), axis(1, 0.3, j=0), [0.0] * DIMS, axis(2, -0.4, j=3)]
    searches = [(q, f) for f in filters for q in queries]
    assert vector_search_many(s, searches, 3) == [[] for _ in searches]  # empty store
    crowd = [mem(f"crowd-{i:03d}", vec=axis(i % DIMS, 0.01 * i), scope="A") for i in range(120)]
    rare = [mem(f"rare-{i}", vec=axis(1, 0.1 * i, j=0), scope="B", agent="rare") for i in range(4)]
    zero = [mem("zero", vec=[0.0] * DIMS, scope="B")]
    s.apply(WriteBatch(memories=crowd + rare + zero))
    for k in (1, 3, 40):
        got = vector_search_many(s, searches, k)
        assert got == [s.vector_search(q, k, f) for q, f in searches]
    assert [i for i, _ in vector_search_many(s, [(axis(0), filters[4])], 2)[0]] == [
        "rare-3",
        "rare-2",
    ]
    assert vector_search_many(s, searches, 0) == [[] for _ in searches]
    assert vector_search_many(s, [], 3) == []


@pytest.mark.parametrize("name", list(SELECTIVE))
def test_selective_filter_does_not_starve_text_search(s: GraphStore, name: str) -> None:
    rare_fields, flt = SELECTIVE[name]
    crowd = [
        mem(f"crowd-{i:03d}", "zebra zebra zebra", scope="A", agent="common", task="common")
        for i in range(200)
    ]
    base: dict[str, Any] = {"scope": "A", "agent": "common", "task": "common"}
    rare = [
        mem(f"rare-{i}", "a long note that mentions a zebra " + "filler " * (2 * i + 1),
            **{**base, **rare_fields})
        for i in range(5)
    ]  # fmt: skip
    s.apply(WriteBatch(memories=crowd + rare))
    got = s.text_search("zebra", 5, flt)
    assert [i for i, _ in got] == [f"rare-{i}" for i in range(5)]  # shorter note scores higher
    assert all(score > 0 for _, score in got)
    assert [i for i, _ in s.text_search("zebra", 2, flt)] == ["rare-0", "rare-1"]


# -- text search ----------------------------------------------------------------------------


def _text_fixture(s: GraphStore) -> None:
    s.apply(
        WriteBatch(
            memories=[
                mem("t-content", "Rotate the signing keys before Friday"),
                mem("t-keywords", "unrelated text", keywords=["kubernetes", "rollout"]),
                mem("t-tags", "other text", tags=["postgres"]),
                mem("t-context", "more text", context="observed during the Lisbon offsite"),
                mem("t-stem", "the runner was running and runs"),
            ]
        )
    )


def test_text_search_covers_content_keywords_tags_and_context(s: GraphStore) -> None:
    _text_fixture(s)
    for word, mid in [
        ("signing", "t-content"),
        ("Kubernetes", "t-keywords"),
        ("postgres", "t-tags"),
        ("lisbon", "t-context"),
        ("run", "t-stem"),
    ]:
        got = s.text_search(word, 5, ANY)
        assert [i for i, _ in got] == [mid], word
        assert got[0][1] > 0
    both = s.text_search("rotate postgres", 5, ANY)
    assert {i for i, _ in both} == {"t-content", "t-tags"}  # words are OR'ed
    assert s.text_search("rotate", 0, ANY) == []


@pytest.mark.parametrize(
    "query",
    [
        '"signing',
        "signing*",
        "(signing",
        "signing:keys",
        "-signing",
        "signing AND",
        "AND signing",
        "signing~",
        "signing/keys",
        "signing\\",
        "+signing ^2 {keys} [x TO y] !x ?y || &&",
        'keys" OR "x',
    ],
)
def test_text_search_treats_operators_as_plain_text(s: GraphStore, query: str) -> None:
    _text_fixture(s)
    assert [i for i, _ in s.text_search(query, 5, ANY)] == ["t-content"]


@pytest.mark.parametrize("query", ["", "   ", "AND", "OR NOT", "***", '"', "\\", "(", ":", "the"])
def test_text_search_without_words_returns_nothing(s: GraphStore, query: str) -> None:
    _text_fixture(s)
    assert s.text_search(query, 5, ANY) == []


# -- listing, counting, export ----------------------------------------------------------------


def test_find_memories_orders_by_created_at_then_id(s: GraphStore) -> None:
    s.apply(
        WriteBatch(
            memories=[
                mem("c", created=T0),
                mem("b", created=T0 + timedelta(seconds=1)),
                mem("a", created=T0 + timedelta(seconds=1)),
                mem("d", created=T0 - timedelta(days=1), status="retracted"),
            ]
        )
    )
    assert [m.id for m in s.find_memories(ANY)] == ["d", "c", "a", "b"]
    assert [m.id for m in s.find_memories(ANY, limit=2)] == ["d", "c"]
    assert [m.id for m in s.find_memories(MemoryFilter())] == ["c", "a", "b"]
    assert s.find_memories(ANY, limit=0) == []
    assert s.find_memories(ANY)[0].embedding is None


def test_counts_report_only_non_zero_labels_and_types(s: GraphStore) -> None:
    assert s.counts() == {}
    _graph(s)
    assert s.counts() == {
        MEMORY: 2,
        AGENT: 1,
        TASK: 1,
        EPISODE: 1,
        "ATTRIBUTED_TO": 1,
        "FOR_TASK": 1,
        "PERFORMED_BY": 1,
        "PART_OF": 1,
        "READ": 1,
        "DERIVED_FROM": 1,
    }


def test_iter_nodes_and_edges_export_everything_but_memory_nodes(s: GraphStore) -> None:
    _graph(s)
    nodes = list(s.iter_nodes())
    assert [(n.label, n.id) for n in nodes] == [(AGENT, "x"), (EPISODE, "ep"), (TASK, "x")]
    edges = list(s.iter_edges())
    assert [(e.type, e.src, e.dst, e.key) for e in edges] == sorted(_idents(edges))
    assert len(edges) == 6
    assert next(e for e in edges if e.type == "READ").props == {"rank": 1}


# -- siblings -------------------------------------------------------------------------------


def test_siblings_share_a_hub_nearest_in_time_first(s: GraphStore) -> None:
    minute = timedelta(minutes=1)
    members = {
        "s0": 0,
        "s1": 3,
        "s2": -1,
        "s3": 1,  # same gap as s2: id order
        "s4": 10,
        "s5": 2,
    }
    mems = [mem(i, created=T0 + m * minute, task="t") for i, m in members.items()]
    mems.append(mem("s-quarantined", created=T0, status="quarantined"))
    mems.append(mem("lonely"))
    s.apply(
        WriteBatch(
            memories=mems,
            nodes=[NodeWrite(EPISODE, "ep-a"), NodeWrite(EPISODE, "ep-b"), NodeWrite(TASK, "t")],
            edges=[EdgeWrite("GENERATED_IN", i, "ep-a") for i in members]
            + [
                EdgeWrite("GENERATED_IN", "s1", "ep-b"),
                EdgeWrite("GENERATED_IN", "s0", "ep-b"),
                EdgeWrite("GENERATED_IN", "s-quarantined", "ep-a"),
                EdgeWrite("FOR_TASK", "s0", "t"),
                EdgeWrite("FOR_TASK", "s4", "t"),
            ],
        )
    )
    got = s.siblings(["s0", "lonely", "ghost"], "GENERATED_IN", MemoryFilter(), 10)
    assert got == {
        "s0": [("s2", "ep-a"), ("s3", "ep-a"), ("s5", "ep-a"), ("s1", "ep-a"), ("s4", "ep-a")],
        "lonely": [],
        "ghost": [],
    }
    assert s.siblings(["s0"], "GENERATED_IN", MemoryFilter(), 2) == {
        "s0": [("s2", "ep-a"), ("s3", "ep-a")]
    }
    with_quarantined = s.siblings(["s0"], "GENERATED_IN", ANY, 1)
    assert with_quarantined == {"s0": [("s-quarantined", "ep-a")]}
    assert s.siblings(["s0"], "FOR_TASK", MemoryFilter(), 5) == {"s0": [("s4", "t")]}
    assert s.siblings(["s0", "s1"], "GENERATED_IN", MemoryFilter(), 0) == {"s0": [], "s1": []}
    with pytest.raises(ValidationError):
        s.siblings(["s0"], "LINKED", MemoryFilter(), 5)


def test_neighbourhood_is_lineage_siblings_and_admitted_fields_at_once(s: GraphStore) -> None:
    minute = timedelta(minutes=1)
    s.apply(
        WriteBatch(
            memories=[
                mem("seed", created=T0, task="t"),
                mem("parent", created=T0 - minute),
                mem("child", created=T0 + minute, importance=0.8),
                mem("linked", created=T0 + 2 * minute, status="quarantined"),
                mem("mate", created=T0 + 3 * minute, task="t"),
                mem("far-mate", created=T0 + 9 * minute, task="t"),
                mem("other-seed", created=T0),
            ],
            nodes=[NodeWrite(EPISODE, "ep"), NodeWrite(TASK, "t")],
            edges=[
                EdgeWrite("DERIVED_FROM", "seed", "parent"),
                EdgeWrite("DERIVED_FROM", "child", "seed"),
                EdgeWrite("LINKED", "seed", "linked", {"weight": 0.5}, key="k1"),
                EdgeWrite("GENERATED_IN", "seed", "ep"),
                EdgeWrite("GENERATED_IN", "mate", "ep"),
                EdgeWrite("FOR_TASK", "seed", "t"),
                EdgeWrite("FOR_TASK", "mate", "t"),
                EdgeWrite("FOR_TASK", "far-mate", "t"),
            ],
        )
    )
    ids = ["seed", "other-seed", "ghost"]
    hood = s.neighbourhood(ids, MemoryFilter(), 1)
    assert hood == neighbourhood_by_parts(s, ids, MemoryFilter(), 1)
    assert {(e.type, e.src, e.dst) for e in hood.edges} == {
        ("DERIVED_FROM", "seed", "parent"),
        ("DERIVED_FROM", "child", "seed"),
        ("LINKED", "seed", "linked"),
    }
    assert next(e for e in hood.edges if e.type == "LINKED").props == {"weight": 0.5}
    assert hood.siblings["GENERATED_IN"] == {
        "seed": [("mate", "ep")],
        "other-seed": [],
        "ghost": [],
    }
    assert hood.siblings["FOR_TASK"]["seed"] == [("mate", "t")]  # the nearer one only
    # the quarantined link is a neighbour but not admitted, so it has no ranking fields
    assert set(hood.fields) == {"parent", "child", "mate"}
    assert hood.fields["child"] == RankFields.of(s.get_memories(["child"])["child"])
    wider = s.neighbourhood(ids, ANY, 5)
    assert wider == neighbourhood_by_parts(s, ids, ANY, 5)
    assert set(wider.fields) == {"parent", "child", "linked", "mate", "far-mate"}
    assert s.neighbourhood([], ANY, 5).edges == []
    assert hood.memories == wider.memories == {}


def test_neighbourhood_reads_the_fetched_memories_whole_in_the_same_call(s: GraphStore) -> None:
    s.apply(
        WriteBatch(
            memories=[mem("seed", created=T0), mem("hit", created=T0, status="retracted")],
            edges=[EdgeWrite("DERIVED_FROM", "seed", "hit")],
        )
    )
    fetch = ["hit", "ghost", "seed", "hit"]
    hood = s.neighbourhood(["seed"], MemoryFilter(), 5, fetch)
    assert hood == neighbourhood_by_parts(s, ["seed"], MemoryFilter(), 5, fetch)
    # as get_memories: no embeddings, unknown ids left out, the filter not applied
    assert hood.memories == s.get_memories(fetch, embeddings=False)
    assert set(hood.memories) == {"hit", "seed"}
    assert hood.memories["hit"].status == "retracted" and hood.memories["hit"].embedding is None
    assert set(hood.fields) == set()  # the retracted neighbour is still not admitted
    assert s.neighbourhood([], MemoryFilter(), 5, ["seed"]).memories.keys() == {"seed"}


def test_search_expand_is_the_search_then_the_first_hop_from_the_plans_seeds(
    s: GraphStore,
) -> None:
    minute = timedelta(minutes=1)
    s.apply(
        WriteBatch(
            memories=[
                # equal texts: equal BM25 scores, a tie the seed choice must rank alike
                mem("a", "deploy runner pool", vec=axis(0, 0.1), task="t"),
                mem("b", "deploy runner pool", vec=axis(0, 0.2), created=T0 + minute),
                mem("c", "runner pool notes", vec=axis(1), task="t", created=T0 + 2 * minute),
                mem("d", "deploy runner pool", vec=axis(0, 0.05), status="retracted"),
                mem("e", "zebra crossing", vec=axis(3), created=T0 + 3 * minute),
                mem("f", "gardening", vec=axis(4), task="t", created=T0 + 4 * minute),
                mem("g", "deploy once", vec=axis(0, 0.4), created=T0 + 5 * minute),
            ],
            nodes=[NodeWrite(TASK, "t")],
            edges=[
                EdgeWrite("DERIVED_FROM", "e", "a"),
                EdgeWrite("LINKED", "b", "d", {"weight": 0.5}, key="k"),
                *(EdgeWrite("FOR_TASK", m, "t") for m in ("a", "c", "f")),
            ],
        )
    )
    plan = SeedPlan(vector_weight=1.0, text_weight=0.2, rrf_k=30, seeds=2, fetch=3, limit=5)
    query = "deploy runner pool"
    cases = [
        (axis(0), query, 4, 4, MemoryFilter()),
        (axis(0), query, 4, 4, ANY),  # the retracted memory is a candidate and a seed
        (axis(0), query, 4, 0, MemoryFilter()),  # vector only
        (None, query, 0, 4, MemoryFilter()),  # text only
        (axis(0), "+-&&", 4, 4, MemoryFilter()),  # a query with no terms
        (axis(5), "nothing matches", 4, 4, MemoryFilter(agents=("nobody",))),  # no candidate
    ]
    for vector, text, n_vector, n_text, flt in cases:
        got = s.search_expand(vector, text, n_vector, n_text, flt, plan)
        assert got == search_expand_by_parts(s, vector, text, n_vector, n_text, flt, plan)
        assert got.found == s.search(vector, text, n_vector, n_text, flt)
        seeds, fetch = plan.choose(got.found.vector, got.found.text)
        assert got.seeds == seeds
        assert got.hood == s.neighbourhood(sorted(seeds), flt, plan.limit, fetch)
    first = s.search_expand(axis(0), query, 4, 4, MemoryFilter(), plan)
    # "a" and "b" tie on text; both lead on vector: the seeds, and "g" the third to fetch
    assert first.seeds == ["a", "b"] and set(first.hood.memories) == {"a", "b", "g"}
    assert {(e.type, e.src, e.dst) for e in first.hood.edges} == {
        ("DERIVED_FROM", "e", "a"),
        ("LINKED", "b", "d"),
    }
    assert first.hood.siblings["FOR_TASK"]["a"] == [("c", "t"), ("f", "t")]
    assert set(first.hood.fields) == {"e", "c", "f"}  # the retracted link is not admitted
    assert s.search_expand(axis(5), "nothing matches", 4, 4, cases[-1][4], plan).seeds == []


def test_search_expand_tells_which_names_wrote_a_memory_its_filter_admits(s: GraphStore) -> None:
    """Recall's guess of the agents its query names is checked in the search's own read:
    ``authors`` under the same filter, whatever the search finds."""
    s.apply(
        WriteBatch(
            memories=[
                mem("a1", "deploy runner pool", vec=axis(0), agent="avery"),
                mem("b1", "deploy runner pool", vec=axis(0, 0.1), agent="blake", scope="B"),
                mem("c1", "zebra crossing", vec=axis(1), agent="casey", status="retracted"),
            ]
        )
    )
    plan = SeedPlan(vector_weight=1.0, text_weight=1.0, rrf_k=30, seeds=2, fetch=2, limit=5)
    words = ["avery", "Avery", "blake", "casey", "nobody", "avery"]
    in_a = MemoryFilter(scopes=("default",))
    cases = {
        in_a: {"avery"},
        MemoryFilter(scopes=("B",)): {"blake"},
        MemoryFilter(scopes=("default",), statuses=None): {"avery", "casey"},
        MemoryFilter(agents=("blake",)): {"blake"},
    }
    for flt, expected in cases.items():
        got = s.search_expand(axis(0), "deploy runner pool", 4, 4, flt, plan, words)
        assert got.authors == expected == s.authors(words, flt)
        plain = s.search_expand(axis(0), "deploy runner pool", 4, 4, flt, plan)
        assert plain.authors == frozenset() and plain == replace(got, authors=frozenset())
    # no candidate found, the names still checked
    found_none = s.search_expand(None, "nothing matches", 0, 4, in_a, plan, words)
    assert found_none.seeds == [] and found_none.authors == {"avery"}


# -- lifecycle ------------------------------------------------------------------------------


def test_closed_store_refuses_work_and_close_is_idempotent(store: GraphStore) -> None:
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.counts()
    with pytest.raises(StoreError, match="closed"):
        store.apply(WriteBatch(nodes=[NodeWrite(AGENT, "a")]))


def test_status_and_counter_updates_in_bulk(s: GraphStore) -> None:
    """The path a large retraction takes: many status changes and credit increments at once."""
    s.apply(
        WriteBatch(
            memories=[mem(f"b{i}", f"bulk note {i}", vec=axis(i % DIMS)) for i in range(300)]
        )
    )
    updates = [
        MemoryUpdate(f"b{i}", changes={"status": "quarantined" if i % 2 else "retracted"})
        for i in range(300)
    ]
    updates += [
        MemoryUpdate(f"b{i}", increments={"successes": 0.5, "version": 1}) for i in range(3)
    ]
    s.apply(WriteBatch(memory_updates=updates))
    statuses = s.statuses([f"b{i}" for i in range(300)])
    assert statuses["b0"] == "retracted" and statuses["b1"] == "quarantined"
    assert sum(v == "retracted" for v in statuses.values()) == 150
    got = s.get_memories(["b0", "b5"])
    assert (got["b0"].successes, got["b0"].version) == (0.5, 2)
    assert (got["b5"].successes, got["b5"].version) == (0.0, 1)
    assert s.text_search("bulk note", 5, MemoryFilter()) == []  # none active any more
    before = s.counts()
    with pytest.raises(ValidationError, match="status"):
        s.apply(WriteBatch(memory_updates=[MemoryUpdate("b2", changes={"status": "bogus"})]))
    with pytest.raises(NotFoundError, match="ghost"):
        s.apply(
            WriteBatch(
                memory_updates=[
                    MemoryUpdate("b2", changes={"status": "active"}),
                    MemoryUpdate("ghost", changes={"status": "active"}),
                ]
            )
        )
    assert s.counts() == before and s.statuses(["b2"]) == {"b2": "retracted"}
