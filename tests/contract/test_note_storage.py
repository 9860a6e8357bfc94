"""What the note layer asks of every store: note fields, versions, statuses, edge merges.

Runs on each store kind (``store`` fixture), Neo4j also over a ``neo4j://`` routing URI;
LocalStore is the reference.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import ROUTING_PARAM, STORE_PARAMS

from amem_graph.core.models import Memory, content_hash
from amem_graph.core.schema import LLM_USAGE, MEMORY_VERSION
from amem_graph.core.versions import NoteState, NoteVersion
from amem_graph.stores.base import (
    EdgeWrite,
    GraphStore,
    MemoryFilter,
    MemoryUpdate,
    NodeWrite,
    WriteBatch,
)

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
DIMS = 4


@pytest.fixture(params=[*STORE_PARAMS, ROUTING_PARAM])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Local, Neo4j over ``bolt://``, and Neo4j over a ``neo4j://`` routing URI (see
    ``conftest.routing_uri``): the contract holds the way a cluster or Aura is reached too."""
    kind: str = request.param
    return kind


def mem(mid: str, content: str, vec: list[float], **fields: object) -> Memory:
    return Memory(
        id=mid,
        content=content,
        created_at=T0,
        valid_from=T0,
        content_hash=content_hash(content),
        embedding=vec,
        **fields,  # type: ignore[arg-type]
    )


@pytest.fixture
def s(store: GraphStore) -> GraphStore:
    store.ensure_embedder("note-storage-test", DIMS)
    return store


def test_note_fields_round_trip_and_update(s: GraphStore) -> None:
    s.apply(
        WriteBatch(
            memories=[
                mem(
                    "a",
                    "plain text",
                    [1, 0, 0, 0],
                    support=3,
                    note_keywords=["kw"],
                    note_tags=[],
                    note_context="ctx",
                )
            ]
        )
    )
    got = s.get_memories(["a"])["a"]
    assert (got.support, got.note_keywords, got.note_tags, got.note_context, got.note_indexed) == (
        3,
        ["kw"],
        [],
        "ctx",
        False,
    )
    s.apply(
        WriteBatch(
            memory_updates=[
                MemoryUpdate(
                    "a",
                    changes={"note_tags": ["t1", "t2"], "note_context": ""},
                    increments={"support": 1, "version": 1},
                )
            ]
        )
    )
    got = s.get_memories(["a"], embeddings=False)["a"]
    assert (got.support, got.version, got.note_tags, got.note_context) == (4, 2, ["t1", "t2"], "")


def test_indexed_notes_are_searchable_and_follow_updates(s: GraphStore) -> None:
    flt = MemoryFilter(statuses=None)
    s.apply(
        WriteBatch(
            memories=[
                mem("on", "alpha", [1, 0, 0, 0], note_keywords=["zebra"], note_indexed=True),
                mem("off", "alpha", [0, 1, 0, 0], note_keywords=["zebra"]),
            ]
        )
    )
    assert [i for i, _ in s.text_search("zebra", 5, flt)] == ["on"]
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("on", changes={"note_keywords": ["yak"]})]))
    assert s.text_search("zebra", 5, flt) == []
    assert [i for i, _ in s.text_search("yak", 5, flt)] == ["on"]


def test_archived_is_a_status_every_path_filters(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("cold", "archived words", [1, 0, 0, 0], status="archived")]))
    active = MemoryFilter()
    assert s.vector_search([1, 0, 0, 0], 5, active) == []
    assert s.text_search("archived", 5, active) == []
    archived = MemoryFilter(statuses=("archived",))
    assert [i for i, _ in s.vector_search([1, 0, 0, 0], 5, archived)] == ["cold"]
    assert s.statuses(["cold"]) == {"cold": "archived"}
    s.apply(WriteBatch(memory_updates=[MemoryUpdate("cold", changes={"status": "active"})]))
    assert [i for i, _ in s.vector_search([1, 0, 0, 0], 5, active)] == ["cold"]


def test_memory_versions_round_trip_with_empty_lists(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("n", "note", [1, 0, 0, 0]), mem("c", "cause", [0, 1, 0, 0])]))
    version = NoteVersion(
        id="n@1",
        memory="n",
        version=1,
        kind="evolve",
        at=T0,
        before=NoteState(),
        after=NoteState(keywords=["k"], tags=["t"], context="c"),
        caused_by="c",
        reason="test",
    )
    s.apply(
        WriteBatch(
            nodes=[NodeWrite(MEMORY_VERSION, version.id, on_create=version.props())],
            edges=[EdgeWrite("HAS_VERSION", "n", "n@1"), EdgeWrite("CAUSED_BY", "n@1", "c")],
        )
    )
    node = s.get_nodes(MEMORY_VERSION, ["n@1"])["n@1"]
    assert NoteVersion.from_node(node.id, node.props) == version
    s.apply(WriteBatch(nodes=[NodeWrite(MEMORY_VERSION, "n@1", {"undone": True})]))
    node = s.get_nodes(MEMORY_VERSION, ["n@1"])["n@1"]
    assert NoteVersion.from_node(node.id, node.props) == version.model_copy(update={"undone": True})
    assert [e.src for e in s.edges(["c"], ["CAUSED_BY"], "in")] == ["n@1"]


def test_edge_props_merge_and_null_removes(s: GraphStore) -> None:
    s.apply(WriteBatch(memories=[mem("a", "a", [1, 0, 0, 0]), mem("b", "b", [0, 1, 0, 0])]))
    s.apply(WriteBatch(edges=[EdgeWrite("LINKED", "a", "b", {"reason": "r", "weight": 0.5})]))
    s.apply(WriteBatch(edges=[EdgeWrite("LINKED", "a", "b", {"weight": 0.9, "reason": None})]))
    [edge] = s.edges(["a"], ["LINKED"], "out")
    assert edge.props == {"weight": 0.9}


def test_usage_nodes_are_stored_and_found(s: GraphStore) -> None:
    s.apply(WriteBatch(nodes=[NodeWrite(LLM_USAGE, "u1", {"enrich__calls": 3})]))
    s.apply(WriteBatch(nodes=[NodeWrite(LLM_USAGE, "u1", {"enrich__calls": 5})]))
    [node] = s.find_nodes(LLM_USAGE)
    assert node.props == {"enrich__calls": 5}
