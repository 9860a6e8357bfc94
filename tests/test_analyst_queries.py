"""The Cypher analyst pack: headers, parameters, the read-only guard, and every query's rows
on a real Neo4j seeded through the MemoryGraph API.

The seed is the poisoned-memory world plus: a second failed reader of the poison, a successful
reader of a memory that the retraction later quarantines, contradiction edges (one still open),
a never-read memory in another scope with its own source, an active retraction of the poison
and a restored no-cascade retraction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from conftest import open_neo4j_store
from neo4j.time import DateTime as Neo4jDateTime
from poisoning import EVIL_SOURCE, build, read_exactly

from amem_graph import HashingEmbedder, MemoryGraph, NotFoundError, ValidationError
from amem_graph.analyst.pack import (
    DEFAULT_TIMEOUT,
    QueryResult,
    bind,
    check_read_only,
    list_queries,
    load_query,
    parse_assignments,
    parse_query,
    query_names,
    run_query,
    run_read,
)
from amem_graph.cli import data as cli_data
from amem_graph.stores.base import EdgeWrite, GraphStore, WriteBatch
from amem_graph.stores.local.store import LocalStore
from amem_graph.stores.neo4j.analyst import plain

WIKI = "https://wiki.example/backups"

# -- the pack itself (no server) --------------------------------------------------------------


def test_the_pack_has_ten_or_more_parsed_read_only_queries() -> None:
    queries = list_queries()
    assert len(queries) >= 10
    assert "schema" not in query_names()
    for q in queries:
        assert q.question.endswith((".", "?")), q.name
        assert q.returns, f"{q.name} names its columns"
        check_read_only(q.text, q.name)


def test_headers_declare_types_modes_and_docs() -> None:
    lineage = load_query("memory_lineage")
    memory_id, scope = lineage.params
    assert (scope.name, scope.type, scope.required) == ("scope", "string", False)
    assert (memory_id.name, memory_id.type, memory_id.required) == ("memory_id", "string", True)
    assert "upstream" in memory_id.doc
    suspects = load_query("failure_suspects")
    assert suspects.param("limit") is not None
    assert (suspects.params[0].default, suspects.params[0].required) == (20, False)
    since = load_query("memories_by_agent").param("since")
    assert since is not None and (since.type, since.required) == ("datetime", False)
    assert load_query("blast_radius").returns[:3] == ("memory_id", "memories", "derived")


def test_unknown_query_lists_the_known_ones() -> None:
    with pytest.raises(NotFoundError, match="no analyst query 'nope'") as caught:
        load_query("nope")
    assert "blast_radius" in str(caught.value.hint)
    with pytest.raises(NotFoundError):
        load_query("schema")


HEADER = "// name: q\n// question: What?\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("// name: other\n// question: What?\nRETURN 1", "header names 'other'"),
        ("// name: q\nRETURN 1", "no `// question:`"),
        (HEADER + "RETURN $x", "uses ['x'] but the header declares []"),
        (HEADER + "// param: $x (string, required) it\nRETURN 1", "declares ['x']"),
        (HEADER + "// param: $x (blob, required) it\nRETURN $x", "unknown type 'blob'"),
        (HEADER + "// param: x string\nRETURN $x", "bad param line"),
        (HEADER + "// param: $n (int, default many) n\nRETURN $n", "expected an integer"),
        (HEADER + "MATCH (n) DETACH DELETE n", "write clause DETACH"),
    ],
)
def test_malformed_query_files_are_refused(text: str, problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_query(text, "q")
    assert problem in str(caught.value)


def test_header_lines_continue_and_params_parse() -> None:
    query = parse_query(
        HEADER.replace("What?", "What is")
        + "//   going on?\n"
        + "// param: $since (datetime, optional) from\n//   this time\n"
        + "// param: $k (int, default 3) how many\n"
        + "// returns: a, b\n"
        + "MATCH (m:Memory) WHERE $since IS NULL OR m.at >= $since RETURN m.a AS a LIMIT $k",
        "q",
    )
    assert query.question == "What is going on?"
    since = query.param("since")
    assert since is not None and since.doc == "from this time"
    assert query.returns == ("a", "b")
    assert bind(query, {}) == {"since": None, "k": 3}
    bound = bind(query, {"since": "2026-01-05T09:30:00Z", "k": "7"})
    assert bound == {"since": datetime(2026, 1, 5, 9, 30, tzinfo=UTC), "k": 7}


@pytest.mark.parametrize(
    "cypher",
    [
        "CREATE (n:Memory {id: 'x'})",
        "MATCH (m:Memory) SET m.status = 'active'",
        "MATCH (m) WITH m MERGE (a:Agent {id: 'x'})",
        "MATCH (m:Memory) DELETE m",
        "MATCH (m:Memory) REMOVE m.status",
        "match (m) detach delete m",
        "LOAD CSV FROM 'file:///x.csv' AS row RETURN row",
        "MATCH (m) CALL { WITH m RETURN 1 AS one } IN TRANSACTIONS RETURN one",
        "CALL db.create.setNodeVectorProperty(null, 'embedding', [])",
        "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})",
        "DROP INDEX memory_text",
        "MATCH (m) FOREACH (x IN [1] | SET m.a = x)",
    ],
)
def test_write_clauses_are_refused(cypher: str) -> None:
    with pytest.raises(ValidationError, match=r"write clause|not known to be read-only"):
        check_read_only(cypher)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (m:Memory) WHERE m.content CONTAINS 'CREATE or DELETE' RETURN m.set AS set_",
        "// MERGE and SET in a comment\nMATCH (m) RETURN m.`delete` AS d",
        "MATCH (m:Memory) RETURN COLLECT { MATCH (m)-[:READ]-(e) RETURN e.id } AS ids",
        "CALL db.index.fulltext.queryNodes('memory_text', 'x') YIELD node RETURN node.id",
        "MATCH (m:Memory) WHERE m.status = 'retracted' RETURN m.id AS reset_id",
    ],
)
def test_reads_that_merely_mention_write_words_pass(cypher: str) -> None:
    check_read_only(cypher)


def test_bind_validates_names_requirements_and_types() -> None:
    query = load_query("memories_by_agent")
    with pytest.raises(ValidationError, match=r"no parameter\(s\) \['agnet'\]") as unknown:
        bind(query, {"agnet": "bob"})
    assert "$agent (string, required)" in str(unknown.value)
    with pytest.raises(ValidationError, match=r"needs \$agent") as missing:
        bind(query, {})
    assert missing.value.hint == "pass --param agent=VALUE"
    with pytest.raises(ValidationError, match="no timezone"):
        bind(query, {"agent": "bob", "since": "2026-01-05T09:30:00"})
    with pytest.raises(ValidationError, match="ISO 8601"):
        bind(query, {"agent": "bob", "since": "last tuesday"})
    with pytest.raises(ValidationError, match="expected an integer"):
        bind(load_query("failure_suspects"), {"limit": "ten"})
    assert bind(load_query("failure_suspects"), {"limit": "5", "withdrawn": "yes"}) == {
        "limit": 5,
        "z": 1.0,
        "scope": None,
        "withdrawn": True,
    }


def test_parse_assignments() -> None:
    assert parse_assignments(["memory_id=a=b", "$since=2026-01-01T00:00:00Z"]) == {
        "memory_id": "a=b",
        "since": "2026-01-01T00:00:00Z",
    }
    with pytest.raises(ValidationError, match="NAME=VALUE"):
        parse_assignments(["memory_id"])
    with pytest.raises(ValidationError, match="given twice"):
        parse_assignments(["a=1", "a=2"])


def test_plain_turns_driver_values_into_json() -> None:
    when = Neo4jDateTime(2026, 1, 5, 9, 30, 1, 250000000, tzinfo=UTC)
    assert plain({"at": when, "ids": ["a"], "n": [1.5]}) == {
        "at": "2026-01-05T09:30:01.250000+00:00",
        "ids": ["a"],
        "n": [1.5],
    }


def test_the_cli_timeout_default_is_the_libraries() -> None:
    assert cli_data.QUERY_TIMEOUT == DEFAULT_TIMEOUT


def test_analyst_queries_need_neo4j() -> None:
    with pytest.raises(ValidationError, match="run on Neo4j, not on the local store"):
        run_query(LocalStore(":memory:"), "agent_trust")


# -- every query on a seeded Neo4j ------------------------------------------------------------


@dataclass
class Seeded:
    store: GraphStore
    mg: MemoryGraph
    poison_retraction: str
    restored_retraction: str

    def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        result: QueryResult = run_query(self.store, name, params)
        return result.records()

    def at(self, memory_id: str) -> datetime:
        return self.mg.get(memory_id).created_at


def seed(mg: MemoryGraph) -> Seeded:
    build(mg)
    with mg.episode(agent="dave", task="audit", id="ep-reader3") as ep:
        read_exactly(ep, "zebra quartz protocol", "poison")
        ep.outcome(success=False)
    with mg.episode(agent="erin", task="review", id="ep-reader4") as ep:
        read_exactly(ep, "tundra falcon ribbon", "written1")
        ep.outcome(success=True)
    mg.remember(
        "ember lotus wharf: nobody asked", agent="frank", id="unread", scope="other", source=WIKI
    )
    mg.store.apply(
        WriteBatch(
            edges=[
                EdgeWrite("CONTRADICTS", "clean-written", "clean"),
                EdgeWrite("CONTRADICTS", "clean", "derived1"),
                EdgeWrite("CONTRADICTS", "written2", "before-read"),
            ]
        )
    )
    poison = mg.retract("poison", reason="evil source", by="analyst")
    checked = mg.retract("clean-written", reason="double check", cascade=False, by="auditor")
    mg.restore(checked.id, by="auditor")
    return Seeded(mg.store, mg, poison.id, checked.id)


@pytest.fixture(scope="module")
def seeded() -> Iterator[Seeded]:
    store = open_neo4j_store()
    mg = MemoryGraph(store, HashingEmbedder())
    yield seed(mg)
    mg.close()


Check = Callable[[Seeded], None]
#: query name -> the check of its expected rows; a query without one fails the test below
CHECKS: dict[str, Check] = {}


def expects(name: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        CHECKS[name] = check
        return check

    return register


@expects("memory_lineage")
def check_memory_lineage(seeded: Seeded) -> None:
    rows = seeded.run("memory_lineage", memory_id="derived2")
    assert [(r["depth"], r["memory_id"], r["derived_from"]) for r in rows] == [
        (0, "derived2", ["derived1"]),
        (1, "derived1", ["poison"]),
        (2, "poison", []),
    ]
    poison = rows[2]
    assert (poison["agent"], poison["episode"], poison["task"]) == (
        "mallory",
        "ep-mallory",
        "ops-rotation",
    )
    assert poison["source"] == EVIL_SOURCE and poison["status"] == "retracted"
    assert (rows[0]["agent"], rows[0]["episode"], rows[0]["source"]) == ("carol", None, None)
    assert seeded.run("memory_lineage", memory_id="ghost") == []


@expects("who_read_it")
def check_who_read_it(seeded: Seeded) -> None:
    rows = seeded.run("who_read_it", memory_id="poison")
    assert [(r["episode"], r["agent"], r["outcome"], r["wrote_after"]) for r in rows] == [
        ("ep-reader1", "carol", "failure", ["written1"]),  # not before-read: written earlier
        ("ep-reader3", "dave", "failure", []),
    ]
    assert all(r["best_rank"] == 1 and r["reads"] == 1 for r in rows)
    assert rows[0]["first_read"] < rows[1]["first_read"]
    assert datetime.fromisoformat(rows[0]["first_read"]) <= seeded.at("written1")


@expects("blast_radius")
def check_blast_radius_agrees_with_impact(seeded: Seeded) -> None:
    (row,) = seeded.run("blast_radius", memory_id="poison")
    assert row == {
        "memory_id": "poison",
        "memories": 4,
        "derived": 2,
        "derived_ids": ["derived1", "derived2"],
        "written": 2,
        "written_ids": ["written1", "written2"],
        "episodes": 3,
        "episode_ids": ["ep-reader1", "ep-reader2", "ep-reader3"],
        "outcomes": 3,
        "outcome_ids": ["outcome-ep-reader1", "outcome-ep-reader2", "outcome-ep-reader3"],
        "failed_outcomes": 3,
        "failed_outcome_ids": ["outcome-ep-reader1", "outcome-ep-reader2", "outcome-ep-reader3"],
    }
    for root in ("poison", "derived1", "written1", "clean"):
        (got,) = seeded.run("blast_radius", memory_id=root)
        impact = seeded.mg.impact(root)
        assert got["derived_ids"] == impact.derived_ids, root
        assert got["written_ids"] == impact.written_ids, root
        assert got["episode_ids"] == impact.episode_ids, root
        assert got["outcome_ids"] == impact.outcome_ids, root
        assert got["failed_outcome_ids"] == impact.failed_outcome_ids, root
    (clean,) = seeded.run("blast_radius", memory_id="clean")
    assert (clean["episode_ids"], clean["failed_outcomes"]) == (["ep-clean"], 0)


@expects("memories_by_agent")
def check_memories_by_agent(seeded: Seeded) -> None:
    rows = seeded.run("memories_by_agent", agent="carol")
    assert [(r["memory_id"], r["status"]) for r in rows] == [
        ("derived2", "retracted"),
        ("before-read", "active"),
        ("written1", "quarantined"),
    ]
    assert rows[0]["confidence"] == pytest.approx(1 / 3)  # one failed read at rank 1
    assert rows[2]["confidence"] == pytest.approx(2 / 3)  # one successful read
    since = seeded.at("before-read").isoformat()
    recent = seeded.run("memories_by_agent", agent="carol", since=since)
    assert [r["memory_id"] for r in recent] == ["before-read", "written1"]
    assert seeded.run("memories_by_agent", agent="nobody") == []


@expects("failure_suspects")
def check_failure_suspects(seeded: Seeded) -> None:
    rows = seeded.run("failure_suspects", withdrawn=True)
    assert [(r["memory_id"], r["failed_episodes"], r["episode_ids"]) for r in rows] == [
        ("poison", 2, ["ep-reader1", "ep-reader3"]),
        ("derived2", 1, ["ep-reader2"]),
    ]
    assert (rows[0]["failure_credit"], rows[0]["confidence"]) == (2.0, 0.25)
    assert (rows[0]["author_failures"], rows[0]["agent"]) == (2.0, "mallory")
    assert rows[0]["suspicion"] > rows[1]["suspicion"] > 0
    assert seeded.run("failure_suspects") == [], "both are retracted: nothing active to propose"
    assert [r["memory_id"] for r in seeded.run("failure_suspects", limit=1, withdrawn=True)] == [
        "poison"
    ]
    api = seeded.mg.failure_suspects(include=("active", "quarantined", "retracted"))
    assert [(s.id, s.suspicion) for s in api] == [
        (r["memory_id"], pytest.approx(r["suspicion"])) for r in rows
    ]


@expects("agent_trust")
def check_agent_trust_matches_the_facade(seeded: Seeded) -> None:
    rows = seeded.run("agent_trust")
    assert [r["agent"] for r in rows] == ["bob", "carol", "dave", "erin", "frank", "mallory"]
    by_agent = {r["agent"]: r for r in rows}
    for agent, row in by_agent.items():
        facade = seeded.mg.agent(agent)
        assert row["trust"] == pytest.approx(facade.trust), agent
        assert row["memories"] == facade.memory_count, agent
    assert by_agent["mallory"]["trust"] == pytest.approx(0.25)
    assert by_agent["bob"]["trust"] == pytest.approx(2 / 3)
    assert (by_agent["carol"]["retracted"], by_agent["carol"]["quarantined"]) == (1, 1)
    assert (by_agent["dave"]["retracted"], by_agent["dave"]["quarantined"]) == (0, 1)


@expects("retraction_history")
def check_retraction_history(seeded: Seeded) -> None:
    rows = seeded.run("retraction_history")
    assert [r["retraction_id"] for r in rows] == [
        seeded.poison_retraction,
        seeded.restored_retraction,
    ]
    poison, checked = rows
    assert poison == {
        **poison,
        "by": "analyst",
        "reason": "evil source",
        "selector": "memory:poison",
        "targets": ["poison"],
        "cascade": True,
        "retracted": 3,
        "quarantined": 2,
        "state": "active",
        "restored_at": None,
        "restored_by": None,
    }
    stored = seeded.mg.retraction(seeded.restored_retraction)
    assert checked["cascade"] is False and (checked["retracted"], checked["quarantined"]) == (1, 0)
    assert (checked["state"], checked["restored_by"]) == ("restored", "auditor")
    assert stored.restored_at is not None
    assert datetime.fromisoformat(checked["restored_at"]) == stored.restored_at
    assert datetime.fromisoformat(checked["at"]) == stored.at
    later = seeded.run("retraction_history", since=checked["at"])
    assert [r["retraction_id"] for r in later] == [seeded.restored_retraction]


@expects("open_contradictions")
def check_open_contradictions(seeded: Seeded) -> None:
    rows = seeded.run("open_contradictions")
    assert [
        (r["memory_id"], r["agent"], r["contradicts_id"], r["contradicts_agent"]) for r in rows
    ] == [
        ("clean-written", "erin", "clean", "bob")  # the other two touch withdrawn memories
    ]


@expects("never_read")
def check_never_read(seeded: Seeded) -> None:
    rows = seeded.run("never_read")
    assert [r["memory_id"] for r in rows] == ["before-read", "clean-written", "unread"]
    assert [r["memory_id"] for r in seeded.run("never_read", scope="other")] == ["unread"]
    assert [r["memory_id"] for r in seeded.run("never_read", scope="default")] == [
        "before-read",
        "clean-written",
    ]


@expects("episodes_using_withdrawn")
def check_episodes_using_withdrawn(seeded: Seeded) -> None:
    rows = seeded.run("episodes_using_withdrawn")
    assert [
        (r["episode"], r["quarantined_ids"], r["retracted_ids"], r["outcome"]) for r in rows
    ] == [
        ("ep-reader1", [], ["poison"], "failure"),
        ("ep-reader2", [], ["derived2"], "failure"),
        ("ep-reader3", [], ["poison"], "failure"),
        ("ep-reader4", ["written1"], [], "success"),
    ]


@expects("audit_trail")
def check_audit_trail(seeded: Seeded) -> None:
    rows = seeded.run("audit_trail")
    assert [(r["kind"], r["actor"], r["retraction_id"]) for r in rows] == [
        ("retract", "analyst", seeded.poison_retraction),
        ("retract", "auditor", seeded.restored_retraction),
        ("restore", "auditor", seeded.restored_retraction),
    ]
    about = seeded.run("audit_trail", memory_id="clean-written")
    assert [r["kind"] for r in about] == ["retract", "restore"]
    assert [r["kind"] for r in seeded.run("audit_trail", agent="mallory")] == ["retract"]
    assert len(seeded.run("audit_trail", agent="auditor")) == 2
    since = seeded.run("audit_trail", since=rows[1]["at"])
    assert [r["event_id"] for r in since] == [r["event_id"] for r in rows[1:]]
    facade = [e.id for e in seeded.mg.audit(memory="clean-written")]
    assert [r["event_id"] for r in about] == facade


@expects("source_reliability")
def check_source_reliability(seeded: Seeded) -> None:
    rows = seeded.run("source_reliability")
    assert [(r["source"], r["memory_ids"], r["withdrawn"]) for r in rows] == [
        (EVIL_SOURCE, ["poison"], 1),
        (WIKI, ["unread"], 0),
    ]
    assert rows[0]["reliability"] == pytest.approx(0.25) and rows[0]["failures"] == 2.0
    assert rows[1]["reliability"] == pytest.approx(0.5)


@pytest.mark.neo4j
@pytest.mark.parametrize("name", query_names())
def test_query_returns_the_expected_rows(seeded: Seeded, name: str) -> None:
    check = CHECKS.get(name)
    assert check is not None, f"add an @expects({name!r}) check with the rows it must return"
    check(seeded)


@pytest.mark.neo4j
def test_the_server_refuses_writes_even_past_the_text_check(seeded: Seeded) -> None:
    before = seeded.store.counts()
    with pytest.raises(ValidationError, match="tried to write"):
        run_read(seeded.store, "CREATE (:Agent {id: 'sneaky'})")
    assert seeded.store.counts() == before


@pytest.mark.neo4j
def test_cypher_errors_become_validation_errors(seeded: Seeded) -> None:
    with pytest.raises(ValidationError, match="rejected"):
        run_read(seeded.store, "MATCH (m:Memory RETURN m")
