"""What only the Neo4j store has: its schema, connecting (and failing to), the vector index.

Tests that need a server use ``$NEO4J_URI`` (default bolt://127.0.0.1:7699) with the credentials
in ``$NEO4J_USERNAME``/``$NEO4J_PASSWORD``; without a server they skip locally and fail in CI,
like the shared fixtures. The rest (schema file, query escaping, error mapping) run anywhere.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import neo4j_uri, open_neo4j_store, routing_uri
from neo4j import GraphDatabase, ManagedTransaction, Session
from neo4j import exceptions as neo_errors
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.core.errors import (
    ConflictError,
    EmbedderMismatchError,
    StoreError,
    StoreUnavailableError,
    ValidationError,
)
from amem_graph.core.models import Memory, content_hash
from amem_graph.core.schema import EDGE_TYPES, NODE_LABELS
from amem_graph.core.seeding import Priors, SeedPlan
from amem_graph.stores.base import (
    SIBLING_EDGES,
    EdgeWrite,
    GraphStore,
    MemoryFilter,
    NodeWrite,
    WriteBatch,
    neighbourhood_by_parts,
    prior_fields,
    search_expand_by_parts,
)
from amem_graph.stores.neo4j import cypher as neo4j_cypher
from amem_graph.stores.neo4j import expand as neo4j_expand
from amem_graph.stores.neo4j import hood as neo4j_hood
from amem_graph.stores.neo4j import plan as neo4j_plan
from amem_graph.stores.neo4j import reads as neo4j_reads
from amem_graph.stores.neo4j import search as neo4j_search
from amem_graph.stores.neo4j.ann import ann_query, server_has_scoped_index
from amem_graph.stores.neo4j.connection import check_server_version
from amem_graph.stores.neo4j.cypher import lucene_query
from amem_graph.stores.neo4j.schema import VECTOR_INDEX, load_schema, schema_statements
from amem_graph.stores.neo4j.store import Neo4jStore

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


@pytest.fixture
def neo() -> Iterator[Neo4jStore]:
    """An empty Neo4j store, or a skip (a failure in CI) when no server answers."""
    store = open_neo4j_store()
    yield store
    store.close()


@pytest.fixture
def routed() -> Iterator[Neo4jStore]:
    """An empty Neo4j store reached through a ``neo4j://`` routing URI."""
    store = open_neo4j_store(routing_uri())
    yield store
    store.close()


def bolt_uri() -> str:
    uri = neo4j_uri()
    return "bolt" + uri[len("neo4j") :] if uri.startswith("neo4j") else uri


def query(store: Neo4jStore, cypher: Any, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = store._driver.execute_query(cypher, params, database_=store.database)
    return [r.data() for r in records]


# -- the schema file (no server needed) ------------------------------------------------------


def test_top_level_cypher_folder_is_the_packaged_one() -> None:
    """cypher/ at the repository root is a link to the package data, so they cannot drift."""
    top = ROOT / "cypher"
    packaged = ROOT / "amem_graph" / "cypher"
    assert top.resolve() == packaged.resolve()
    assert load_schema() == (packaged / "schema.cypher").read_text(encoding="utf-8")


def test_schema_declares_every_label_edge_type_and_index() -> None:
    text = load_schema()
    now, deferred = schema_statements()
    joined = "\n".join(now)
    for label in [*NODE_LABELS, "AmemMeta"]:
        assert f"FOR (n:{label}) REQUIRE n.id IS UNIQUE" in joined, label
        assert "IF NOT EXISTS" in next(st for st in now if f"(n:{label})" in st)
    for etype, (src, dst) in EDGE_TYPES.items():
        assert f"(:{src})-[:{etype}]->(:{dst})" in text, etype
    for prop in ("scope", "status", "created_at", "valid_from", "agent", "task"):
        assert f"FOR (m:Memory) ON (m.{prop})" in joined, prop
    fulltext = next(st for st in now if "FULLTEXT" in st)
    assert "[m.search_terms, m.scope]" in fulltext
    assert "'whitespace'" in fulltext
    assert all("$dims" not in st for st in now)
    # one vector index statement per server generation: Neo4j 5, and 2026.01+ with the scope
    plain, scoped = sorted(deferred, key=lambda st: st.startswith("CYPHER 25 "))
    for statement in (plain, scoped):
        assert "VECTOR INDEX memory_embedding IF NOT EXISTS" in statement
        assert "`vector.dimensions`: $dims" in statement
        assert "'cosine'" in statement
    assert scoped.startswith("CYPHER 25 CREATE ") and "WITH [m.scope]" in scoped
    assert "`vector.quantization.type`: 'NONE'" in scoped
    assert all(st.startswith("CREATE ") and "//" not in st for st in [*now, plain])


# -- pure helpers (no server needed) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "scoped"),
    [("5.26.30", False), ("5.13.0", False), ("2025.12.1", False), ("2026.01.0", True),
     ("2026.08.1", True), ("2027.1.0-aura", True), ("", False), ("dev", False)],
)  # fmt: skip
def test_only_neo4j_2026_and_later_build_the_scoped_vector_index(
    version: str, scoped: bool
) -> None:
    assert server_has_scoped_index(version) is scoped


def test_ann_query_asks_the_procedure_or_searches_inside_the_index() -> None:
    template = "%ANN%\nWITH count(*) AS raw RETURN raw"
    args = {"name": VECTOR_INDEX, "index": "$v_index", "n": "$v_n", "q": "$v_q"}
    plain = ann_query(template, in_index=False, **args)
    assert plain.startswith("CALL db.index.vector.queryNodes($v_index, $v_n, $v_q) YIELD node AS m")
    assert "CYPHER" not in plain and "%" not in plain
    scoped = ann_query(template, in_index=True, **args)
    assert scoped.startswith(
        "CYPHER 25 MATCH (m:Memory) SEARCH m IN (VECTOR INDEX memory_embedding FOR $v_q "
        "WHERE m.scope IN $f_scopes LIMIT $v_n)"
    )
    assert "queryNodes" not in scoped and "%" not in scoped
    assert ann_query("RETURN 1", in_index=True, **args) == "RETURN 1"  # no slot: no Cypher 25
    with pytest.raises(ValidationError):
        ann_query(template, in_index=True, **{**args, "name": "x) RETURN 1 //"})


def test_lucene_query_quotes_words_and_drops_operators() -> None:
    assert lucene_query('deploys "caching" AND (cold*) -x') == (
        '"deploi" OR "cach" OR "cold" OR "x"'  # stemmed, stop word 'and' dropped
    )
    assert lucene_query("Cache cache CACHE") == '"cach"'
    assert lucene_query(" \\ ~ : / * ( ) ") == ""
    assert lucene_query("") == ""
    assert lucene_query(" ".join(f"w{i}" for i in range(5000))).count(" OR ") == 999


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        ("5.26.30", True),
        ("5.13.0", True),
        ("2025.01.0", True),
        ("5.12.0", False),
        ("4.4.30", False),
        ("", False),
        ("dev", False),
    ],
)
def test_server_version_check(version: str, ok: bool) -> None:
    if ok:
        check_server_version(version)
    else:
        with pytest.raises(StoreUnavailableError, match=r"5\.13 or later"):
            check_server_version(version, "bolt://somewhere")


class _FakeDriver:
    """Just enough driver for connect() to fail at verification."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.execute_query_bookmark_manager = None
        self.closed = False

    def verify_connectivity(self) -> None:
        raise self.error

    def close(self) -> None:
        self.closed = True


def test_auth_error_becomes_store_unavailable_with_a_credentials_hint() -> None:
    error = Neo4jError._hydrate_neo4j(
        code="Neo.ClientError.Security.Unauthorized",
        message="The client is unauthorized due to authentication failure.",
    )
    fake = _FakeDriver(error)
    with pytest.raises(StoreUnavailableError) as info:
        Neo4jStore.connect("bolt://db.example:7687", driver=fake)  # type: ignore[arg-type]
    assert "NEO4J_PASSWORD" in (info.value.hint or "")
    assert "unauthorized" in info.value.message
    assert not fake.closed  # an injected driver belongs to the caller


def test_lockout_after_wrong_passwords_is_named_not_called_unreachable() -> None:
    """Issue 18.7: the code and message Neo4j 5.26 sends after 3 wrong passwords in a row."""
    error = Neo4jError._hydrate_neo4j(
        code="Neo.ClientError.Security.AuthenticationRateLimit",
        message="The client has provided incorrect authentication details too many times in a row.",
    )
    with pytest.raises(StoreUnavailableError) as info:
        Neo4jStore.connect("bolt://db.example:7687", driver=_FakeDriver(error))  # type: ignore[arg-type]
    assert "locked user 'neo4j' out after repeated wrong passwords" in info.value.message
    assert "cannot reach" not in info.value.message
    assert "auth_lock_time" in (info.value.hint or "") and "NEO4J_PASSWORD" in (
        info.value.hint or ""
    )


def test_service_unavailable_becomes_store_unavailable_with_a_start_hint() -> None:
    fake = _FakeDriver(ServiceUnavailable("no route to host"))
    with pytest.raises(StoreUnavailableError) as info:
        Neo4jStore.connect("bolt://db.example:7687", driver=fake)  # type: ignore[arg-type]
    assert "scripts/neo4j-local start" in (info.value.hint or "")
    assert "docker compose up -d --wait" in (info.value.hint or "")


def test_a_non_neo4j_uri_is_refused() -> None:
    with pytest.raises(ValidationError, match="not a Neo4j URI"):
        Neo4jStore.connect("http://localhost:7474")


@pytest.mark.neo4j
def test_a_read_whose_connection_drops_is_retried_once_on_a_new_session() -> None:
    """On a direct ``bolt://`` driver reads are auto-committed and retried once by the store."""
    neo = open_neo4j_store(bolt_uri())
    assert not neo.routing
    sessions: list[Session] = []

    def flaky(session: Session) -> int:
        sessions.append(session)
        if len(sessions) == 1:
            raise SessionExpired("the connection dropped")
        return int(session.run("RETURN 1 AS one").single(strict=True)["one"])

    assert neo._read(flaky) == 1
    assert len(sessions) == 2 and sessions[0] is not sessions[1]

    def dead(session: Session) -> int:
        sessions.append(session)
        raise ServiceUnavailable("gone for good")

    sessions.clear()
    with pytest.raises(StoreUnavailableError, match="gone for good"):
        neo._guard("reading", lambda: neo._read(dead))
    assert len(sessions) == 2  # once more, not forever
    neo.close()


def wrapped_server_error(
    code: str, message: str = "lost a race with another writer"
) -> neo_errors.ResultFailedError:
    """A server error the way a failed result raises it: wrapped, its own ``is_retryable()``
    false (the form that lost a deadlocked write in CI)."""
    cause = Neo4jError._hydrate_neo4j(code=code, message=message)
    try:
        raise neo_errors.ResultFailedError(None, "The result has failed.") from cause
    except neo_errors.ResultFailedError as exc:
        assert not exc.is_retryable()
        return exc


@pytest.mark.neo4j
def test_a_write_that_fails_with_a_wrapped_deadlock_is_retried_and_rolled_back(
    neo: Neo4jStore,
) -> None:
    """The driver never retries a failed result, even one wrapping a deadlock; the store runs
    the transaction function again itself (``Neo4jConnection._managed``), the first attempt's
    work rolled back."""
    attempts: list[ManagedTransaction] = []

    def write(tx: ManagedTransaction) -> str:
        attempts.append(tx)
        tx.run("CREATE (:Agent {id: $id, scope: 'default'})", id=f"try-{len(attempts)}").consume()
        if len(attempts) == 1:
            raise wrapped_server_error("Neo.TransientError.Transaction.DeadlockDetected")
        return "written"

    assert neo._write(write) == "written"
    assert len(attempts) == 2
    assert sorted(neo.get_nodes("Agent", ["try-1", "try-2"])) == ["try-2"]


@pytest.mark.neo4j
def test_a_write_that_fails_with_a_wrapped_constraint_error_is_not_retried(
    neo: Neo4jStore,
) -> None:
    attempts: list[int] = []

    def write(tx: ManagedTransaction) -> None:
        attempts.append(1)
        raise wrapped_server_error(
            "Neo.ClientError.Schema.ConstraintValidationFailed", "already exists"
        )

    with pytest.raises(ConflictError, match="already exists"):
        neo._guard("writing a batch", lambda: neo._write(write))
    assert len(attempts) == 1


@pytest.mark.neo4j
def test_an_auto_committed_read_that_read_outdated_data_runs_again_in_a_transaction() -> None:
    """Seen with eight threads on a direct driver: "The transaction read outdated data and
    cannot be recovered due to concurrent data modification", a transient error of an
    auto-committed read (which the driver never retries), reached the caller."""
    neo = open_neo4j_store(bolt_uri())
    assert not neo.routing
    seen: list[object] = []

    def flaky(runner: Any) -> int:
        seen.append(runner)
        if len(seen) < 3:
            raise wrapped_server_error("Neo.TransientError.Transaction.Outdated")
        return int(runner.run("RETURN 1 AS one").single(strict=True)["one"])

    assert neo._read(flaky) == 1
    assert isinstance(seen[0], Session)
    assert len(seen) == 3 and all(isinstance(tx, ManagedTransaction) for tx in seen[1:])
    neo.close()


# -- a routing URI (a cluster, Aura): reads in READ transactions, bookmarks -------------------


@pytest.mark.neo4j
def test_a_routing_store_reads_in_managed_read_transactions(routed: Neo4jStore) -> None:
    """Reads on a ``neo4j://`` driver run in ``execute_read``: routed to a reader, retried by
    the driver after a dropped connection, and refused by the server if they would write."""
    assert routed.routing
    seen: list[object] = []

    def flaky(tx: Any) -> int:
        seen.append(tx)
        if len(seen) == 1:
            raise SessionExpired("the connection dropped")
        return int(tx.run("RETURN 1 AS one").single(strict=True)["one"])

    assert routed._read(flaky) == 1
    assert len(seen) == 2 and all(isinstance(tx, ManagedTransaction) for tx in seen)

    def writes(tx: Any) -> None:
        tx.run("CREATE (:Agent {id: 'sneaked-in', scope: 'default'})").consume()

    with pytest.raises(StoreError, match="Writing in read access mode not allowed"):
        routed._guard("reading", lambda: routed._read(writes))
    assert routed.get_nodes("Agent", ["sneaked-in"]) == {}


@pytest.mark.neo4j
def test_a_routing_store_reads_its_own_writes_through_bookmarks(routed: Neo4jStore) -> None:
    """Every write leaves a bookmark in the store's bookmark manager and every read session
    starts from it, so on a cluster a reader waits until it has the store's last write."""
    manager = routed._bookmarks
    before = set(manager.get_bookmarks())
    mid = "rw-1"
    routed.ensure_embedder("routing-test", 4)
    routed.apply(
        WriteBatch(
            memories=[
                Memory(
                    id=mid,
                    content="written then read",
                    created_at=T0,
                    valid_from=T0,
                    content_hash=content_hash("written then read"),
                    embedding=[1.0, 0.0, 0.0, 0.0],
                )
            ]
        )
    )
    after = set(manager.get_bookmarks())
    assert after and after != before
    assert list(routed.get_memories([mid])) == [mid]
    # a second store (another agent's process) shares nothing with it: its own manager
    other = Neo4jStore.connect(routing_uri(), connect_timeout=5.0)
    try:
        assert other._bookmarks is not manager
        assert list(other.get_memories([mid])) == [mid]
    finally:
        other.close()


# -- connecting to nothing, or to something that never answers ---------------------------------


def test_unreachable_server_fails_fast() -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as info:
        Neo4jStore.connect("bolt://127.0.0.1:1", connect_timeout=2.0)
    assert time.monotonic() - started < 8
    assert "scripts/neo4j-local start" in (info.value.hint or "")
    assert "127.0.0.1:1" in info.value.message


@pytest.mark.slow  # waits out a connect timeout on purpose
@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
def test_silent_server_fails_within_a_bounded_time(scheme: str) -> None:
    """A port that accepts connections but never speaks Bolt must not hang connect()."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    port = server.getsockname()[1]
    started = time.monotonic()
    try:
        with pytest.raises(StoreUnavailableError, match=r"did not answer|cannot reach"):
            Neo4jStore.connect(f"{scheme}://127.0.0.1:{port}", connect_timeout=1.0)
        assert time.monotonic() - started < 15
    finally:
        server.close()
        for conn in held:
            conn.close()


def test_environment_is_read_when_connecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    with pytest.raises(StoreUnavailableError, match=r"127\.0\.0\.1:1"):
        Neo4jStore.connect(connect_timeout=2.0)


# -- against a real server ----------------------------------------------------------------------


@pytest.mark.neo4j
def test_environment_uri_is_used_when_none_is_given(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEO4J_URI", neo.uri)
    other = Neo4jStore.connect(connect_timeout=5.0)
    try:
        assert other.uri == neo.uri
        assert other.counts() == {}
    finally:
        other.close()


@pytest.mark.neo4j
def test_wrong_credentials_are_refused_with_a_hint() -> None:
    if not os.environ.get("NEO4J_PASSWORD"):
        pytest.skip("the server runs without auth; set NEO4J_PASSWORD against one with auth on")
    with pytest.raises(StoreUnavailableError) as info:
        Neo4jStore.connect(
            neo4j_uri(), password=os.environ["NEO4J_PASSWORD"] + "-wrong", connect_timeout=5.0
        )
    assert "NEO4J_USERNAME/NEO4J_PASSWORD" in (info.value.hint or "")


@pytest.mark.neo4j
def test_show_indexes_lists_the_schema(neo: Neo4jStore) -> None:
    neo.ensure_embedder("hashing-256", 256)
    indexes = {r["name"]: r for r in query(neo, "SHOW INDEXES YIELD *")}
    vector = indexes[VECTOR_INDEX]
    assert (vector["type"], vector["state"]) == ("VECTOR", "ONLINE")
    scoped = server_has_scoped_index(neo.server_version)  # Neo4j 2026.01+: ann.py
    assert vector["labelsOrTypes"] == ["Memory"]
    assert vector["properties"] == (["embedding", "scope"] if scoped else ["embedding"])
    config = vector["options"]["indexConfig"]
    assert config["vector.dimensions"] == 256
    assert config["vector.similarity_function"].lower() == "cosine"
    text = indexes["memory_text"]
    assert (text["type"], text["state"]) == ("FULLTEXT", "ONLINE")
    assert text["properties"] == ["search_terms", "scope"]
    assert text["options"]["indexConfig"]["fulltext.analyzer"] == "whitespace"
    for prop in ("scope", "status", "created_at", "valid_from", "agent", "task"):
        assert indexes[f"memory_{prop}"]["type"] == "RANGE"
    unique = {
        r["labelsOrTypes"][0]
        for r in query(neo, "SHOW CONSTRAINTS YIELD *")
        if r["type"] == "UNIQUENESS" and r["properties"] == ["id"]
    }
    assert unique >= {*NODE_LABELS, "AmemMeta"}


@pytest.mark.neo4j
def test_wipe_empties_the_store_and_drops_only_the_vector_index(neo: Neo4jStore) -> None:
    neo.ensure_embedder("hashing-256", 256)
    graph = MemoryGraph(neo, HashingEmbedder(256))
    graph.remember("something to forget", agent="a1")
    neo.wipe()
    assert neo.counts() == {} and neo.embedder_info() is None
    with pytest.raises(StoreError, match="no embedder recorded"):  # not "the store uses 0"
        graph.remember("written by a graph opened before the wipe", agent="a1")
    assert neo.counts() == {}
    names = {r["name"] for r in query(neo, "SHOW INDEXES YIELD name")}
    assert VECTOR_INDEX not in names and "memory_text" in names
    neo.ensure_embedder("hashing-384", 384)  # a new embedder is welcome after a wipe
    dims = query(
        neo, "SHOW INDEXES YIELD name, options WHERE name = $n RETURN options", n=VECTOR_INDEX
    )
    assert dims[0]["options"]["indexConfig"]["vector.dimensions"] == 384


def _text_scores(store: Neo4jStore, texts: list[str], query_text: str) -> dict[str, float]:
    graph = MemoryGraph(store, HashingEmbedder(256))
    for i, text in enumerate(texts):
        graph.remember(text, agent="a1", id=f"m{i}")
    return dict(store.text_search(query_text, 10, MemoryFilter()))


def _index(store: Neo4jStore, name: str) -> list[dict[str, Any]]:
    """``SHOW INDEXES`` of the index ``name`` (its id and properties), or [] if there is none."""
    return query(
        store,
        "SHOW INDEXES YIELD name, id, properties WHERE name = $n RETURN id, properties",
        n=name,
    )


@pytest.mark.neo4j
def test_wipe_keeping_the_indexes_scores_text_as_a_fresh_store_does(neo: Neo4jStore) -> None:
    """The fast wipe keeps the index (and so the server's compiled plans), yet no statistic
    of the data it deleted leaks into the next load's BM25 scores."""
    neo.wipe()  # indexes built anew: the scores of a fresh store
    texts = ["the cat sat on the mat", "dogs chase the cat", "tea in the morning", "red mat"]
    fresh = _text_scores(neo, texts, "cat mat")
    assert len(fresh) == 3
    # other data weighs "cat" differently: counted after the wipe, it would move every score
    graph = MemoryGraph(neo, HashingEmbedder(256))
    graph.remember_many([{"content": f"cat number {i}", "agent": "a2"} for i in range(40)])
    before = _index(neo, "memory_text")
    neo.wipe(keep_indexes=True)
    assert neo.counts() == {} and neo.embedder_info() is None
    again = _text_scores(neo, texts, "cat mat")
    assert again.keys() == fresh.keys()
    for key, score in fresh.items():
        assert again[key] == pytest.approx(score, rel=1e-6), key
    assert _index(neo, "memory_text") == before  # kept, not rebuilt


@pytest.mark.neo4j
def test_wipe_keeping_the_indexes_drops_a_vector_index_this_server_would_not_build(
    neo: Neo4jStore,
) -> None:
    neo.ensure_embedder("hashing-8", 8)
    kept = _index(neo, VECTOR_INDEX)
    neo.wipe(keep_indexes=True)
    assert _index(neo, VECTOR_INDEX) == kept
    if not server_has_scoped_index(neo.server_version):
        return  # Neo4j 5 builds only the plain index, kept above
    # an index without the scope, as an earlier release made it on this server
    query(neo, f"DROP INDEX {VECTOR_INDEX}")
    plain = next(st for st in schema_statements()[1] if not st.startswith("CYPHER 25 "))
    query(neo, plain, dims=8)
    neo.wipe(keep_indexes=True)
    assert _index(neo, VECTOR_INDEX) == []
    neo.ensure_embedder("hashing-8", 8)
    assert _index(neo, VECTOR_INDEX)[0]["properties"] == ["embedding", "scope"]


@pytest.mark.neo4j
def test_vector_index_holds_the_scope_on_servers_that_can_filter_by_it(neo: Neo4jStore) -> None:
    """Neo4j 2026.01+ gets the index ``SEARCH`` filters by scope in; Neo4j 5 the plain one.
    Either way a small scope of a bigger store gets its nearest memories, exactly ranked."""
    neo.ensure_embedder("hashing-8", 8)
    scoped = server_has_scoped_index(neo.server_version)
    (index,) = query(
        neo, "SHOW INDEXES YIELD name, properties WHERE name = $n RETURN *", n=VECTOR_INDEX
    )
    assert index["properties"] == (["embedding", "scope"] if scoped else ["embedding"])
    assert neo._index_filters_scope() is scoped
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    in_small = {f"m{i:03d}": vectors[i] for i in range(0, 300, 30)}
    batch = WriteBatch(
        memories=[
            Memory(
                id=f"m{i:03d}",
                content=f"memory {i}",
                content_hash=content_hash(f"memory {i}"),
                created_at=T0,
                valid_from=T0,
                scope="small" if f"m{i:03d}" in in_small else "big",
                embedding=[float(x) for x in v],
            )
            for i, v in enumerate(vectors)
        ]
    )
    neo.apply(batch)
    q = rng.normal(size=8)
    q /= np.linalg.norm(q)
    cos = {m: float(v @ q) for m, v in in_small.items()}
    want = sorted(cos, key=lambda m: (-cos[m], m))[:5]
    hits = neo.vector_search([float(x) for x in q], 5, MemoryFilter(scopes=("small",)))
    assert [m for m, _ in hits] == want
    assert [score for _, score in hits] == pytest.approx([cos[m] for m in want], abs=1e-5)


@pytest.mark.neo4j
def test_an_index_without_the_scope_is_kept_and_still_searched(neo: Neo4jStore) -> None:
    """A store whose index lacks the scope (made by an earlier release, or on Neo4j 5 then
    moved to 2026.x) keeps it: a connect never rebuilds a big index. Searches use the procedure."""
    plain = next(st for st in schema_statements()[1] if not st.startswith("CYPHER "))
    query(neo, f"DROP INDEX {VECTOR_INDEX} IF EXISTS")  # the fixture's wipe keeps the index
    query(neo, plain, dims=8)
    query(neo, "CALL db.awaitIndexes(60)")
    embedder = HashingEmbedder(8)
    MemoryGraph(neo, embedder).remember("the blue deploy runbook", id="a", scope="s")
    again = Neo4jStore.connect(neo.uri, connect_timeout=5.0)
    try:
        assert again._index_filters_scope() is False
        hits = again.vector_search(
            embedder.embed_query("blue deploy"), 3, MemoryFilter(scopes=("s",))
        )
        assert [m for m, _ in hits] == ["a"]
    finally:
        again.close()


@pytest.mark.neo4j
def test_store_built_with_256_dims_refuses_a_384_dim_embedder(neo: Neo4jStore) -> None:
    MemoryGraph(neo, HashingEmbedder(256)).remember("built with 256", id="m")
    again = Neo4jStore.connect(neo.uri, connect_timeout=5.0)  # a fresh connection reads it back
    try:
        assert again.embedder_info() == ("hashing-256", 256)
        with pytest.raises(EmbedderMismatchError, match="hashing-256"):
            MemoryGraph(again, HashingEmbedder(384))
    finally:
        again.close()
    with pytest.raises(EmbedderMismatchError):
        MemoryGraph.open(neo.uri, embedder=HashingEmbedder(384), connect_timeout=5.0)
    dims = query(
        neo, "SHOW INDEXES YIELD name, options WHERE name = $n RETURN options", n=VECTOR_INDEX
    )
    assert dims[0]["options"]["indexConfig"]["vector.dimensions"] == 256


@pytest.mark.neo4j
def test_memorygraph_open_on_bolt_end_to_end(neo: Neo4jStore) -> None:
    with MemoryGraph.open(neo.uri, embedder="hashing", connect_timeout=5.0) as graph:
        assert isinstance(graph.store, Neo4jStore)
        assert isinstance(graph.store, GraphStore)
        graph.remember("Rotate the signing keys every Friday", id="keys", agent="ops", task="sec")
        graph.remember("The cafeteria opens at nine", id="food", agent="ops")
        hits = graph.recall("when do we rotate signing keys?", k=2)
        assert hits[0].memory.id == "keys"
        with graph.episode(agent="ops", task="sec") as ep:
            read = ep.recall("signing keys", k=1)
            assert [h.memory.id for h in read] == ["keys"]
            made = ep.remember("Keys rotated on Friday without incident", id="done")
            ep.outcome(success=True)
        assert graph.get("keys").confidence > 0.5
        assert graph.get("done").episode == ep.id
        stats = graph.stats()
        assert stats["backend"] == "neo4j"
        assert stats["embedder"] == {"name": "hashing-256", "dims": 256}
        assert stats["counts"]["Memory"] == 3 and stats["counts"]["RESULTED_IN"] == 1
        assert made.agent == "ops"


@pytest.mark.neo4j
def test_reserved_property_names_are_refused(neo: Neo4jStore) -> None:
    """``id`` identifies a node and ``key`` an edge on Neo4j; they cannot be plain props."""
    with pytest.raises(ValidationError, match="reserved"):
        neo.apply(WriteBatch(nodes=[NodeWrite("Agent", "a", props={"id": "b"})]))
    neo.apply(WriteBatch(nodes=[NodeWrite("Agent", "a"), NodeWrite("Task", "t")]))
    with pytest.raises(ValidationError, match="reserved"):
        neo.apply(WriteBatch(edges=[EdgeWrite("PART_OF", "a", "t", props={"key": "x"})]))
    assert neo.counts() == {"Agent": 1, "Task": 1}


@pytest.mark.neo4j
def test_mixed_lists_are_refused_before_writing(neo: Neo4jStore) -> None:
    with pytest.raises(ValidationError, match="one type"):
        neo.apply(WriteBatch(nodes=[NodeWrite("Agent", "a", props={"mix": ["x", 1]})]))
    with pytest.raises(ValidationError, match="null inside a list"):
        neo.apply(WriteBatch(nodes=[NodeWrite("Agent", "a", props={"mix": ["x", None]})]))
    neo.apply(WriteBatch(nodes=[NodeWrite("Agent", "a", props={"nums": [1, 2.5]})]))
    assert neo.get_nodes("Agent", ["a"])["a"].props == {"nums": [1.0, 2.5]}


def _vec(i: int, tilt: float, dims: int = 8) -> list[float]:
    vec = [0.0] * dims
    vec[i] = 1.0
    vec[(i + 1) % dims] = tilt
    return vec


@pytest.mark.neo4j
def test_vector_search_grows_the_ann_fetch_before_scanning(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the selective-scope plan and the exact fallback turned off, the over-fetch grows
    until the filter is met; with the plan on, a small scope goes straight to the exact scan.
    An index that filters by scope itself (Neo4j 2026.01+) finds them in its first fetch."""
    neo.ensure_embedder("t", 8)
    scoped = neo._index_filters_scope()
    monkeypatch.setattr(neo, "_index_filters_scope", lambda: False)  # the procedure's path
    crowd = [
        Memory(
            id=f"c{i:03d}",
            content="crowd",
            scope="A",
            created_at=T0,
            valid_from=T0,
            content_hash=content_hash("crowd"),
            embedding=_vec(0, 0.001 * i),
        )
        for i in range(150)
    ]
    rare = [
        Memory(
            id=f"r{i}",
            content="rare",
            scope="B",
            created_at=T0,
            valid_from=T0,
            content_hash=content_hash("rare"),
            embedding=_vec(0, 2.0 + i),
        )
        for i in range(3)
    ]
    neo.apply(WriteBatch(memories=crowd + rare))
    monkeypatch.setattr(neo4j_plan, "SELECTIVE_SHARE", 0.0)
    monkeypatch.setattr(neo4j_search, "_EXACT_MAX", 0)
    exact_calls: list[str] = []
    original = Neo4jStore._pairs

    def spy(tx: Any, cypher: Any, params: dict[str, Any]) -> list[tuple[str, float]]:
        exact_calls.append(cypher)
        return original(tx, cypher, params)

    monkeypatch.setattr(Neo4jStore, "_pairs", staticmethod(spy))
    got = neo.vector_search(_vec(0, 0.0), 3, MemoryFilter(scopes=("B",)))
    assert [i for i, _ in got] == ["r0", "r1", "r2"]
    assert exact_calls == []  # found by the grown ANN fetch
    monkeypatch.setattr(neo4j_search, "_EXACT_MAX", 20_000)
    assert neo.vector_search(_vec(0, 0.0), 3, MemoryFilter(scopes=("B",))) == got
    assert len(exact_calls) == 1  # the starved ANN fetch falls back to the exact scan
    monkeypatch.setattr(neo4j_plan, "SELECTIVE_SHARE", 0.25)
    monkeypatch.setattr(neo4j_search, "_EXACT_MAX", 0)
    assert neo.vector_search(_vec(0, 0.0), 3, MemoryFilter(scopes=("B",))) == got
    assert len(exact_calls) == 2  # 3 of 153 memories: the plan scans them exactly at once
    if scoped:
        monkeypatch.setattr(neo, "_index_filters_scope", lambda: True)
        assert neo.vector_search(_vec(0, 0.0), 3, MemoryFilter(scopes=("B",))) == got
        assert len(exact_calls) == 2  # no scan, no plan: the index held them in scope B


@pytest.mark.neo4j
def test_authors_seeks_each_candidate_by_agent_not_the_scopes_memories(neo: Neo4jStore) -> None:
    """A recall asks ``authors`` about every word of its query. With more scopes than agents
    the planner rates the scope as the more selective and, left alone, reads the scope's
    memories once per candidate (250 ms a recall on a 10k store of 10 scopes); the
    statement names the agent index, so a word that is no agent costs one empty seek."""
    neo.ensure_embedder("t", 8)
    neo.apply(
        WriteBatch(
            memories=[
                Memory(
                    id=f"m{i:03d}",
                    content="note",
                    agent="a0" if i % 2 == 0 else "a1",
                    scope=f"s{i % 10}",
                    created_at=T0,
                    valid_from=T0,
                    content_hash=content_hash("note"),
                    embedding=_vec(i % 8, 0.5),
                )
                for i in range(400)
            ]
        )
    )
    flt = MemoryFilter(scopes=("s1",), statuses=("active",))
    words = [f"word{i}" for i in range(40)]
    assert neo.authors([*words, "a0", "a1"], flt) == {"a1"}  # a0 wrote only in even scopes
    where, params = neo4j_cypher._filter_clause(flt)
    with neo._driver.session(database=neo.database) as session:
        # planned afresh for this store: a plan cached by an earlier test on another store (or
        # while an index was being rebuilt) is not what this store would be given
        session.run("CALL db.clearQueryCaches()").consume()
        result = session.run(
            "PROFILE " + neo4j_reads._Q_AUTHORS.replace("%FILTER%", where),
            {**params, "agents": words},
        )
        assert result.single(strict=True)["ids"] == []
        plan = result.consume().profile
    assert plan is not None

    def db_hits(op: dict[str, Any]) -> int:
        return int(op.get("dbHits", 0)) + sum(db_hits(c) for c in op.get("children", []))

    # one seek per word; reading scope s1's 40 memories per word would be 40 x 40 rows
    assert db_hits(plan) <= 3 * len(words)


def _tilted(mid: str, text: str, tilt: float, at: datetime = T0, **fields: Any) -> Memory:
    """A memory whose vector leans ``tilt`` off the first axis, written at ``at``."""
    return Memory(
        id=mid,
        content=text,
        created_at=at,
        valid_from=at,
        content_hash=content_hash(text),
        embedding=_vec(0, tilt),
        **fields,
    )


@pytest.mark.neo4j
def test_the_server_ranks_the_fetch_with_the_boosted_text_weight_as_python_does(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_Q_SEARCH_EXPAND`` ranks the memories it reads whole with the text weight raised by
    ``text_confidence`` (its Cypher copy): were it to differ from ``SeedPlan.choose``, the
    hop would be read a second time (``neighbourhood``), so no hop read here means the server
    picked what Python picks, on a lone peak, a lone match, a flat top and a tie the
    recency prior breaks."""
    neo.ensure_embedder("t", 8)
    near = [_tilted(f"c{i}", "plain memo", 0.01 * i) for i in range(4)]
    texts = [_tilted("z", "zebra crossing notes", 9.0)]
    texts += [_tilted(f"n{i}", f"other notes {i}", 8.0 + i) for i in range(3)]
    # equal BM25 scores, the later ids the newer: the fetch keeps the newest, not the first
    tied = [_tilted(f"t{i}", "tied words", 5.0 + i, T0 + timedelta(hours=i)) for i in range(6)]
    tied[2] = tied[2].model_copy(update={"importance": 0.9})  # lifted past t3 by importance
    neo.apply(WriteBatch(memories=near + texts + tied))
    hops: list[list[str]] = []
    neighbourhood = neo.neighbourhood

    def hood_spy(ids: Any, *args: Any) -> Any:
        hops.append(list(ids))
        return neighbourhood(ids, *args)

    monkeypatch.setattr(neo, "neighbourhood", hood_spy)
    plain = SeedPlan(vector_weight=1.0, text_weight=0.2, rrf_k=30, seeds=2, fetch=3, limit=5)
    boosted = replace(plain, text_boost=2.0)
    now = (T0 + timedelta(days=2)).timestamp()
    priors = replace(boosted, priors=Priors(0.05, 0.05, half_life=30 * 86_400.0, now=now))
    cases = [
        (_vec(0, 0.0), "zebra notes", 4, 4),  # a lone peak: text-only hits climb the fetch
        (None, "zebra", 0, 4),  # a lone match: the whole boost
        (_vec(0, 0.0), "other notes", 4, 4),  # a flat top: hardly any
        (None, "tied", 0, 6),  # one tie: the newest three
    ]
    fetched: list[set[str]] = []
    for vector, text, n_vector, n_text in cases:
        for plan in (plain, boosted, priors):
            got = neo.search_expand(vector, text, n_vector, n_text, MemoryFilter(), plan)
            assert hops == []
            found = got.found
            depths = (n_vector, n_text)
            _, fetch = plan.choose(found.vector, found.text, prior_fields(found.fields), depths)
            assert set(got.hood.memories) == set(fetch)
            fetched.append(set(fetch))
    assert fetched[0] == {"c0", "c1", "c2"} and "z" in fetched[1]  # the premise: they differ
    assert fetched[-2] == {"t0", "t1", "t2"}  # no priors: a tie is cut by id
    assert fetched[-1] == {"t5", "t4", "t2"}  # with them, the newest and the important


@pytest.mark.neo4j
def test_search_expand_is_one_query_and_redoes_the_hop_when_the_servers_seeds_were_wrong(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    neo.ensure_embedder("t", 8)
    scoped = neo._index_filters_scope()
    monkeypatch.setattr(neo, "_index_filters_scope", lambda: False)  # the procedure's path
    crowd = [_tilted(f"c{i}", "A notes", 0.01 * i, scope="A") for i in range(6)]
    rare = [_tilted(f"r{i}", "B notes", 2.0 + i, scope="B") for i in range(3)]
    child = _tilted("r-child", "B notes", 9.0, scope="B")
    neo.apply(
        WriteBatch(
            memories=[*crowd, *rare, child],
            edges=[
                EdgeWrite("DERIVED_FROM", "r-child", "r0"),
                EdgeWrite("DERIVED_FROM", "c1", "c0"),
            ],
        )
    )
    plan = SeedPlan(vector_weight=1.0, text_weight=0.2, rrf_k=30, seeds=2, fetch=3, limit=5)
    statements: list[str] = []
    hops: list[list[str]] = []
    run, neighbourhood = Session.run, neo.neighbourhood

    def run_spy(self: Session, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return run(self, query, *args, **kwargs)

    def hood_spy(ids: Any, *args: Any) -> Any:
        hops.append(list(ids))
        return neighbourhood(ids, *args)

    monkeypatch.setattr(Session, "run", run_spy)
    monkeypatch.setattr(neo, "neighbourhood", hood_spy)
    query = _vec(0, 0.0)
    # ordinary: the search, the seed choice and the hop are one statement
    got = neo.search_expand(query, "notes", 2, 4, MemoryFilter(), plan)
    assert len(statements) == 1 and hops == []
    assert got.seeds == ["c0", "c1"] and [e.src for e in got.hood.edges] == ["c1"]
    assert got == search_expand_by_parts(neo, query, "notes", 2, 4, MemoryFilter(), plan)
    # scope B: the first ANN fetch (3 of the crowd) admits nothing, so the vector path is
    # redone; the seeds the server picked from its starved lists are not the plan's
    statements.clear()
    hops.clear()
    flt = MemoryFilter(scopes=("B",))
    got = neo.search_expand(query, "crowd", 2, 4, flt, plan)
    assert got.seeds == ["r0", "r1"] and hops == [["r0", "r1"]]
    assert [e.src for e in got.hood.edges] == ["r-child"]
    assert got == search_expand_by_parts(neo, query, "crowd", 2, 4, flt, plan)
    if scoped:  # an index that filters by scope is not starved: one statement, right seeds
        monkeypatch.setattr(neo, "_index_filters_scope", lambda: True)
        statements.clear()
        hops.clear()
        again = neo.search_expand(query, "crowd", 2, 4, flt, plan)
        assert (again.seeds, again.hood) == (got.seeds, got.hood) and hops == []
        assert (again.found.vector, again.found.text) == (got.found.vector, got.found.text)
        assert len(statements) == 1
        assert statements[0].startswith("CYPHER 25 ")


@pytest.mark.neo4j
def test_bare_ann_search_is_available_for_benchmarks(neo: Neo4jStore) -> None:
    neo.ensure_embedder("t", 8)
    mems = [
        Memory(
            id=f"m{i}",
            content="x",
            created_at=T0,
            valid_from=T0,
            content_hash=content_hash("x"),
            embedding=_vec(i, 0.0),
        )
        for i in range(4)
    ]
    neo.apply(WriteBatch(memories=mems))
    got = neo.raw_vector_query(_vec(2, 0.0), 2)
    assert got[0][0] == "m2" and got[0][1] == pytest.approx(1.0, abs=1e-2)
    assert len(got) == 2


@pytest.mark.neo4j
def test_injected_driver_is_used_and_left_open(neo: Neo4jStore) -> None:
    password = os.environ.get("NEO4J_PASSWORD")
    user = os.environ.get("NEO4J_USERNAME") or "neo4j"
    driver = GraphDatabase.driver(neo.uri, auth=(user, password) if password else None)
    try:
        store = Neo4jStore.connect("bolt://ignored:1", driver=driver)
        store.apply(WriteBatch(nodes=[NodeWrite("Agent", "via-injected")]))
        store.close()
        records, _, _ = driver.execute_query("MATCH (a:Agent) RETURN a.id AS id")
        assert [r["id"] for r in records] == ["via-injected"]
    finally:
        driver.close()


@pytest.mark.neo4j
def test_big_hubs_give_the_same_siblings_as_small_ones(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Siblings of a big hub come from the time index; they must match a full read."""
    minutes = [0, 5, -5, 1, -1, 1, 2, 30, -30, 0, 0]  # ties in time are broken by id
    mems = [
        Memory(
            id=f"s{i:02d}",
            content="member",
            task="hub",
            episode="ep" if i % 2 else None,
            status="retracted" if i == 3 else "active",
            created_at=T0 + timedelta(minutes=m),
            valid_from=T0,
            content_hash=content_hash("member"),
        )
        for i, m in enumerate(minutes)
    ]
    edges = [EdgeWrite("FOR_TASK", m.id, "hub") for m in mems]
    edges += [EdgeWrite("GENERATED_IN", m.id, "ep") for m in mems if m.episode]
    neo.apply(
        WriteBatch(
            memories=mems,
            nodes=[NodeWrite("Task", "hub"), NodeWrite("Episode", "ep")],
            edges=edges,
        )
    )
    ids = [m.id for m in mems]
    cases = [
        ("FOR_TASK", MemoryFilter(), 4),
        ("FOR_TASK", MemoryFilter(statuses=None), 3),
        ("FOR_TASK", MemoryFilter(), 20),
        ("GENERATED_IN", MemoryFilter(), 2),
        ("FOR_TASK", MemoryFilter(), 1),  # the limit cuts a group of equal times
        ("FOR_TASK", MemoryFilter(), 2),
    ]
    whole = [neo.siblings(ids, via, flt, limit) for via, flt, limit in cases]
    hoods = [neo.neighbourhood(ids, flt, limit) for _, flt, limit in cases]
    monkeypatch.setattr(neo4j_hood, "_SMALL_HUB", 0)
    walked = [neo.siblings(ids, via, flt, limit) for via, flt, limit in cases]
    assert walked == whole
    # recall's one-query expansion walks big hubs the same way, tie groups included
    for (via, flt, limit), hood, expected in zip(cases, hoods, whole, strict=True):
        assert hood.siblings[via] == expected
        assert neo.neighbourhood(ids, flt, limit) == hood
        assert hood == neighbourhood_by_parts(neo, ids, flt, limit)
    assert whole[0]["s00"] == [("s09", "hub"), ("s10", "hub"), ("s04", "hub"), ("s05", "hub")]
    assert all(len(pairs) <= 4 for pairs in whole[0].values())
    assert "s03" not in {o for pairs in whole[0].values() for o, _ in pairs}
    assert whole[4]["s00"] == [("s09", "hub")] and whole[4]["s10"] == [("s00", "hub")]


def _hub_index_operators(plan: dict[str, Any]) -> list[str]:
    """Operators in a plan that read a (hub property[, scope], created_at) index, depth
    first."""
    details = str(plan.get("args", {}).get("Details", ""))
    found = [
        str(plan["operatorType"]).split("@")[0]
        for prop in neo4j_hood._SIBLING_PROPS.values()
        for keys in (f"{prop}, created_at", f"{prop}, scope, created_at")
        if f"Memory({keys})" in details
    ]
    for child in plan.get("children", []):
        found += _hub_index_operators(child)
    return found


@pytest.mark.neo4j
def test_big_hub_walks_seek_the_time_index_in_every_plan(neo: Neo4jStore) -> None:
    """A big hub is walked from the seed's time through its (hub, created_at) index. Left to
    itself the planner sometimes scanned that whole index in order instead, for every seed
    (recall measured 170 ms instead of 20 at 10k memories), so the walks carry a seek hint."""
    flt = MemoryFilter(scopes=("default",), as_of=T0)
    where, params = neo4j_cypher._filter_clause(flt)
    params.update(ids=[], fetch=[], limit=10, small=200, hub="h", secs=0, nanos=0, id="a")
    statements = {
        f"neighbourhood {one=}": neo4j_hood._neighbourhood_query(where, SIBLING_EDGES, True, one)
        for one in (False, True)
    }
    neo.ensure_embedder("hashing-256", 256)  # the vector index SEARCH names must exist
    for in_index in sorted({False, neo._index_filters_scope()}):
        for vector, text in ((True, True), (True, False), (False, True)):
            for one in (False, True):
                statements[f"search_expand {vector=} {text=} {in_index=} {one=}"] = (
                    neo4j_expand._search_expand_query(
                        where, vector, text, in_index=in_index, one_scope=one
                    )
                )
    read: dict[str, set[str]] = {}
    with neo._session(read=True) as session:
        for name, cypher in statements.items():
            plan = session.run("EXPLAIN " + cypher, params).consume().plan
            read[name] = set(_hub_index_operators(plan or {}))
    assert read == {name: {"NodeIndexSeek"} for name in statements}


def _edge_checks_under_filters(plan: dict[str, Any], under_filter: bool = False) -> list[bool]:
    """For each operator that checks a walked member's edge to its hub, whether it runs below
    (before) a Filter on the memory's scope."""
    details = str(plan.get("args", {}).get("Details", ""))
    found = [under_filter] if "]->(big)" in details else []
    below = under_filter or (
        str(plan["operatorType"]).startswith("Filter") and "m.scope" in details
    )
    for child in plan.get("children", []):
        found += _edge_checks_under_filters(child, below)
    return found


def _two_scope_task_hub(neo: Neo4jStore, hub: str, ids: str, n: int, every: int) -> None:
    """A Task hub of ``n`` memories a minute apart, named ``ids.format(i)``: every
    ``every``-th in scope "a", the others in scope "b"."""
    mems = [
        Memory(
            id=ids.format(i),
            content="member",
            task=hub,
            scope="a" if i % every == 0 else "b",
            created_at=T0 + timedelta(minutes=i),
            valid_from=T0,
            content_hash=content_hash("member"),
        )
        for i in range(n)
    ]
    neo.apply(
        WriteBatch(
            memories=mems,
            nodes=[NodeWrite("Task", hub)],
            edges=[EdgeWrite("FOR_TASK", m.id, hub) for m in mems],
        )
    )


@pytest.mark.neo4j
def test_a_big_hub_walk_checks_the_hub_edge_only_for_members_the_filter_admits(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the filter in one WHERE, the planner checked each member's edge to the hub
    first, for every member the index gave: in a scope of 1k among ten, a quarter of a
    recall's db hits. The walk counts the edge in a projection after the filter."""
    _two_scope_task_hub(neo, "hub", "w{:02d}", 40, every=4)
    flt = MemoryFilter(scopes=("a",))
    where, params = neo4j_cypher._filter_clause(flt)
    params.update(ids=["w20"], fetch=[], limit=3, small=0)
    cypher = neo4j_hood._neighbourhood_query(where, ("FOR_TASK",), False)
    with neo._session(read=True) as session:
        plan = session.run("EXPLAIN " + cypher, params).consume().plan
    checks = _edge_checks_under_filters(plan or {})
    assert checks and not any(checks), checks
    read_whole = neo.siblings(["w20"], "FOR_TASK", flt, 3)
    monkeypatch.setattr(neo4j_hood, "_SMALL_HUB", 0)  # the 40-member hub walked, as above
    walked = neo.siblings(["w20"], "FOR_TASK", flt, 3)
    assert walked == read_whole
    assert [o for o, _ in walked["w20"]] == ["w16", "w24", "w12"]


def _index_rows(plan: dict[str, Any], keys: str) -> int:
    """Rows the operators reading the ``Memory(<keys>)`` index gave, in a profiled plan."""
    details = str(plan.get("args", {}).get("Details", ""))
    own = int(plan.get("rows", 0)) if f"Memory({keys})" in details else 0
    return own + sum(_index_rows(child, keys) for child in plan.get("children", []))


@pytest.mark.neo4j
def test_a_hub_many_scopes_share_is_walked_within_the_recalling_scope(
    neo: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tenants that name their tasks alike share the Task hub. A walk through the (task,
    created_at) index read every tenant's members until ``limit`` were in the scope (a
    tenant's 20 members of a 2,000-member hub: ~6,500 index rows a recall); a filter of one
    scope walks the (task, scope, created_at) index, its own members only, with the same
    siblings as reading the hub whole and as the walk of a filter of several scopes."""
    _two_scope_task_hub(neo, "shared", "x{:03d}", 200, every=20)
    seeds, limit = ["x180", "x100"], 3
    one, both = MemoryFilter(scopes=("a",)), MemoryFilter(scopes=("a", "c"))
    read_whole = neo.siblings(seeds, "FOR_TASK", one, limit)
    monkeypatch.setattr(neo4j_hood, "_SMALL_HUB", 0)  # the 200-member hub walked
    walked = neo.siblings(seeds, "FOR_TASK", one, limit)
    assert walked == read_whole == neo.siblings(seeds, "FOR_TASK", both, limit)
    assert [o for o, _ in walked["x180"]] == ["x160", "x140", "x120"]
    assert [o for o, _ in walked["x100"]] == ["x080", "x120", "x060"]
    where, params = neo4j_cypher._filter_clause(one)
    params.update(ids=["x180"], fetch=[], **neo4j_hood._hop_args(limit))
    rows = {}
    with neo._session(read=True) as session:
        for flag in (False, True):
            cypher = neo4j_hood._neighbourhood_query(where, ("FOR_TASK",), False, flag)
            plan = session.run("PROFILE " + cypher, params).consume().profile or {}
            keys = "task, scope, created_at" if flag else "task, created_at"
            rows[flag] = _index_rows(plan, keys)
    # within the scope: the seed itself (the later walk starts at its time), the three
    # nearest earlier and one more for the tie check; across scopes: every member after the
    # seed and back to x120
    assert 0 < rows[True] <= limit + 2 < 60 <= rows[False], rows
