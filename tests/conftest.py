"""Shared fixtures: every contract test runs on each store.

The Neo4j store is reached at ``$NEO4J_URI`` (default bolt://127.0.0.1:7699, the port
``scripts/test`` starts its own server on: the tests wipe the database they reach, so they
never touch a developer's server on 7687 unless pointed at it). Locally a missing
server skips those tests with a message saying how to start one; in CI (``CI=true``) it fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from langchain_core.language_models import BaseChatModel

from amem_graph import HashingEmbedder, MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.stores.base import GraphStore
from amem_graph.stores.local.store import LocalStore

if TYPE_CHECKING:
    from amem_graph.stores.neo4j.store import Neo4jStore


def neo4j_uri() -> str:
    return os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7699")


def routing_uri() -> str:
    """``$NEO4J_URI`` as a routing URI (``bolt://h:p`` -> ``neo4j://h:p``): the same server,
    reached the way a cluster or Aura is (a routing table, reads as managed READ transactions)."""
    uri = neo4j_uri()
    return "neo4j" + uri[len("bolt") :] if uri.startswith("bolt") else uri


def open_neo4j_store(uri: str | None = None) -> Neo4jStore:
    """An empty Neo4j store, or a skip (a failure in CI) when no server answers."""
    from amem_graph.core.errors import StoreUnavailableError
    from amem_graph.stores.neo4j.store import Neo4jStore

    target = uri or neo4j_uri()
    try:
        store = Neo4jStore.connect(target, connect_timeout=5.0)
    except StoreUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Neo4j is required in CI and is not reachable: {exc}")
        hint = "run: NEO4J_PORT=7699 scripts/neo4j-local start"
        pytest.skip(f"Neo4j not reachable at {target} ({exc}); {hint}")
    # the indexes stay: rebuilding them would make the server compile every statement anew,
    # ~1 s each, in every test (the fast wipe leaves no trace in scores: a test checks it)
    store.wipe(keep_indexes=True)
    return store


#: the Neo4j side carries the ``neo4j`` mark from collection on, so ``-m "not neo4j"`` drops it
STORE_PARAMS = [pytest.param("local", id="local"), pytest.param("neo4j", marks=pytest.mark.neo4j)]
#: the Neo4j store over a ``neo4j://`` routing URI (tests/contract/conftest.py adds it there)
ROUTING_PARAM = pytest.param("neo4j-routing", marks=pytest.mark.neo4j)


@pytest.fixture(params=STORE_PARAMS)
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
def make_store(store_kind: str, tmp_path: os.PathLike[str]) -> Iterator[Callable[[], GraphStore]]:
    """Factory for fresh, empty stores of the parametrized kind (closed after the test)."""
    opened: list[GraphStore] = []

    def factory() -> GraphStore:
        store: GraphStore
        if store_kind == "local":
            store = LocalStore(os.path.join(tmp_path, f"store{len(opened)}.db"))
        else:
            if opened:
                raise RuntimeError("one Neo4j database per test")
            store = open_neo4j_store(routing_uri() if store_kind == "neo4j-routing" else None)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: Callable[[], GraphStore]) -> GraphStore:
    return make_store()


@pytest.fixture
def mg(store: GraphStore) -> Iterator[MemoryGraph]:
    """A MemoryGraph with the hashing embedder on each store kind."""
    graph = MemoryGraph(store, HashingEmbedder())
    yield graph
    graph.close()


#: ``make_graph(llm=None, **NotesConfig fields)`` (the note layer's tests)
MakeGraph = Callable[..., MemoryGraph]


@pytest.fixture
def make_graph(store: GraphStore) -> Iterator[MakeGraph]:
    """A graph on this test's store with notes configured per test. Model calls run one at a
    time (``llm_concurrency=1``) so a scripted model answers in order."""
    made: list[MemoryGraph] = []

    def factory(llm: BaseChatModel | None = None, **notes: Any) -> MemoryGraph:
        notes.setdefault("llm_concurrency", 1)
        # the hashing embedder's similarities run lower than MiniLM's, the default's basis
        notes.setdefault("link_threshold", 0.45)
        config = MemoryGraphConfig(notes=NotesConfig(**notes))
        graph = MemoryGraph(store, HashingEmbedder(), config, llm)
        made.append(graph)
        return graph

    yield factory
    for graph in made:
        graph.close()
