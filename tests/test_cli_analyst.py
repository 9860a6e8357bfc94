"""The analyst's CLI: errors as JSON, ``amem list``, pictures, and ``amem cypher --file``.

Each command runs through click's runner on the hashing embedder; what was stored is checked
with the library itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import neo4j_uri, open_neo4j_store
from poisoning import World, build

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.cli.main import cli

Amem = Callable[..., Result]
BASE_ENV: dict[str, str | None] = {"COLUMNS": "200", "AMEM_STORE": None, "AMEM_EMBEDDER": None}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def amem(db: Path) -> Amem:
    def run(*args: str) -> Result:
        full = ["--store", str(db), "--embedder", "hashing", *args]
        return CliRunner().invoke(cli, full, env=BASE_ENV)

    return run


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


# -- errors as JSON -----------------------------------------------------------------------


def test_json_errors_are_one_document_on_stdout(amem: Amem) -> None:
    ok(amem("add", "x", "--id", "a"))
    result = amem("--json", "show", "missing")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "error": "no memory with id 'missing'",
        "hint": "ids are case-sensitive; recall or `amem search` shows them",
        "exit": 2,
    }
    assert "error:" not in result.stderr
    usage = amem("--json", "search")
    assert usage.exit_code == 2
    error = json.loads(usage.stdout)
    assert error["error"] == "Missing argument 'QUERY'." and error["exit"] == 2
    assert error["hint"].endswith(" search --help")  # the runner calls the program "cli"


def test_json_errors_keep_the_hint_and_plain_errors_stay_on_stderr(tmp_path: Path) -> None:
    args = ["--store", str(tmp_path / "none.db"), "show", "x"]
    as_json = CliRunner().invoke(cli, ["--json", *args], env=BASE_ENV)
    error = json.loads(as_json.stdout)
    assert error["exit"] == 2 and error["hint"] == "pass --store PATH or set AMEM_STORE"
    plain = CliRunner().invoke(cli, args, env=BASE_ENV)
    assert plain.exit_code == 2 and plain.stdout == ""
    assert plain.stderr.startswith("error: no store at")


def test_json_unexpected_error_exits_1(amem: Amem, monkeypatch: pytest.MonkeyPatch) -> None:
    ok(amem("add", "x", "--id", "u1"))

    def boom(self: MemoryGraph, memory_id: str) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(MemoryGraph, "get", boom)
    result = amem("--json", "show", "u1")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"] == "unexpected RuntimeError: kaboom"


# -- amem list ----------------------------------------------------------------------------


def listed(amem: Amem, *args: str) -> list[str]:
    data = json.loads(ok(amem("--json", "list", *args)).stdout)
    return [m["id"] for m in data["memories"]]


def test_list_filters_by_scope_agent_task_status_and_since(amem: Amem, db: Path) -> None:
    old = datetime(2026, 1, 1, tzinfo=UTC)
    with MemoryGraph.open(db, embedder="hashing") as mg:
        mg.remember("first", id="m1", agent="ops", task="t1", timestamp=old)
        mg.remember("second", id="m2", agent="dev", task="t1", timestamp=old + timedelta(days=2))
        mg.remember("third", id="m3", agent="ops", scope="other", timestamp=old + timedelta(3))
        mg.retract("m2", reason="test")
    assert listed(amem) == ["m1", "m2", "m3"]  # every scope and status, oldest first
    assert listed(amem, "--scope", "other") == ["m3"]
    assert listed(amem, "--agent", "ops") == ["m1", "m3"]
    assert listed(amem, "--task", "t1") == ["m1", "m2"]
    assert listed(amem, "--status", "retracted") == ["m2"]
    assert listed(amem, "--status", "active", "--status", "retracted") == ["m1", "m2", "m3"]
    assert listed(amem, "--since", "2026-01-02T00:00:00Z") == ["m2", "m3"]
    assert listed(amem, "--limit", "1") == ["m3"]
    data = json.loads(ok(amem("--json", "list", "--limit", "1")).stdout)
    assert data["total"] == 3 and "embedding" not in data["memories"][0]
    table = ok(amem("list", "--agent", "ops")).stdout
    assert "2 of 2 memories" in table and "m3" in table and "m2" not in table
    bad = amem("list", "--since", "2026-01-02")
    assert bad.exit_code == 2 and "timezone" in bad.stderr


def test_list_refuses_a_missing_store(amem: Amem, db: Path) -> None:
    result = amem("list")
    assert result.exit_code == 2 and not db.exists()


# -- pictures -----------------------------------------------------------------------------


@pytest.fixture
def poisoned(db: Path) -> World:
    with MemoryGraph.open(db, embedder="hashing") as mg:
        return build(mg)


@pytest.mark.parametrize("command", ["trace", "impact"])
def test_trace_and_impact_draw_a_png(
    amem: Amem, poisoned: World, tmp_path: Path, command: str
) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / f"{command}.png"
    data = json.loads(ok(amem("--json", command, poisoned.poison, "--png", str(out))).stdout)
    assert data["png"] == str(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    bad = amem(command, poisoned.poison, "--png", str(tmp_path / "x.txt"))
    assert bad.exit_code == 2 and ".png" in bad.stderr


def test_demo_writes_the_lineage_picture_where_asked(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "lineage.png"
    args = ["--json", "demo", "--embedder", "hashing", "--png", str(out)]
    summary = json.loads(ok(CliRunner().invoke(cli, args, env=BASE_ENV)).stdout)
    assert summary["picture"] == str(out) and out.stat().st_size > 20_000
    none = CliRunner().invoke(cli, [*args[:-2], "--no-png"], env=BASE_ENV)
    assert json.loads(ok(none).stdout)["picture"] is None


# -- amem cypher --file -------------------------------------------------------------------


def test_cypher_file_needs_neo4j(amem: Amem, tmp_path: Path) -> None:
    query = tmp_path / "q.cypher"
    query.write_text("MATCH (m:Memory) RETURN m.id")
    result = amem("cypher", "--file", str(query))
    assert result.exit_code == 2 and "needs a Neo4j store" in result.stderr
    both = amem("cypher", "blast_radius", "--file", str(query))
    assert both.exit_code == 2 and "drop NAME" in both.stderr


@pytest.fixture
def neo4j_graph() -> Iterator[MemoryGraph]:
    store = open_neo4j_store()
    mg = MemoryGraph(store, HashingEmbedder())
    yield mg
    mg.close()


def neo4j_amem(*args: str) -> Result:
    return CliRunner().invoke(cli, ["--store", neo4j_uri(), *args], env=BASE_ENV)


@pytest.mark.neo4j
def test_cypher_file_runs_a_read_with_json_typed_params(
    neo4j_graph: MemoryGraph, tmp_path: Path
) -> None:
    build(neo4j_graph)
    query = tmp_path / "by_agent.cypher"
    query.write_text(
        "// my own question\n"
        "MATCH (m:Memory {agent: $agent}) RETURN m.id AS id ORDER BY id LIMIT $limit;\n"
    )
    args = ["--json", "cypher", "--file", str(query), "-p", "agent=bob", "-p", "limit=1"]
    data = json.loads(ok(neo4j_amem(*args)).stdout)
    assert data["query"] == "by_agent.cypher" and data["params"] == {"agent": "bob", "limit": 1}
    assert data["rows"] == [{"id": "clean"}]
    table = ok(neo4j_amem("cypher", "--file", str(query), "-p", "agent=bob", "-p", "limit=5"))
    assert "derived1" in table.stdout


@pytest.mark.neo4j
@pytest.mark.parametrize(
    ("cypher", "kind"),
    [
        ("CREATE (m:Memory {id: 'sneaky'}) RETURN m", "rw"),
        ("MATCH (m:Memory) DETACH DELETE m", "w"),
        ("MATCH (m:Memory) CALL (m) { SET m.status = 'active' } RETURN count(*)", "rw"),
        ("CREATE INDEX sneaky IF NOT EXISTS FOR (m:Memory) ON (m.sneaky)", "s"),
    ],
)
def test_cypher_file_refuses_what_the_server_plans_as_a_write(
    neo4j_graph: MemoryGraph, tmp_path: Path, cypher: str, kind: str
) -> None:
    neo4j_graph.remember("stays as it is", id="keep")
    query = tmp_path / "bad.cypher"
    query.write_text(cypher)
    result = neo4j_amem("--json", "cypher", "--file", str(query))
    assert result.exit_code == 2
    error = json.loads(result.stdout)
    assert f"query type '{kind}'" in error["error"] and "may only read" in error["error"]
    assert [m.id for m in neo4j_graph.list_memories()] == ["keep"]
    assert neo4j_graph.get("keep").status == "active"
    indexes = ok(neo4j_amem("--json", "cypher", "--file", str(_show_indexes(tmp_path))))
    assert "sneaky" not in indexes.stdout


def _show_indexes(tmp_path: Path) -> Path:
    path = tmp_path / "indexes.cypher"
    path.write_text("SHOW INDEXES YIELD name RETURN name")
    return path


@pytest.mark.neo4j
def test_cypher_file_reports_syntax_errors_and_empty_files(
    neo4j_graph: MemoryGraph, tmp_path: Path
) -> None:
    query = tmp_path / "broken.cypher"
    query.write_text("MATCH (m RETURN m")
    result = neo4j_amem("cypher", "--file", str(query))
    assert result.exit_code == 2 and "broken.cypher was rejected" in result.stderr
    query.write_text("  ;\n")
    empty = neo4j_amem("cypher", "--file", str(query))
    assert empty.exit_code == 2 and "holds no query" in empty.stderr
