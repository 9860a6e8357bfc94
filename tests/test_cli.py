"""The ``amem`` CLI end to end through click's runner, on the hashing embedder.

Each test opens the store the CLI wrote to with the library itself where it matters, so the
assertions are about what was stored, not only about what was printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from amem_graph import MemoryGraph, StoreError
from amem_graph.cli import cli
from amem_graph.cli_render import format_path
from amem_graph.models import PathStep

Amem = Callable[..., Result]

#: a wide terminal and no inherited AMEM_* settings
BASE_ENV: dict[str, str | None] = {"COLUMNS": "200", "AMEM_STORE": None, "AMEM_EMBEDDER": None}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store" / "memory.db"


@pytest.fixture
def amem(db: Path) -> Amem:
    """Run ``amem --store DB --embedder hashing ARGS...``."""
    runner = CliRunner()

    def run(
        *args: str, env: Mapping[str, str | None] | None = None, input: str | None = None
    ) -> Result:
        full = ["--store", str(db), "--embedder", "hashing", *args]
        return runner.invoke(cli, full, env={**BASE_ENV, **(env or {})}, input=input)

    return run


@pytest.fixture
def graph(db: Path) -> Iterator[Callable[[], MemoryGraph]]:
    """Open the CLI's store with the library (after the CLI ran), closed at the end."""
    opened: list[MemoryGraph] = []

    def open_it() -> MemoryGraph:
        mg = MemoryGraph.open(db, embedder="hashing")
        opened.append(mg)
        return mg

    yield open_it
    for mg in opened:
        mg.close()


def ok(result: Result) -> Result:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.output}"
    return result


def counts(amem: Amem) -> dict[str, int]:
    data: dict[str, int] = json.loads(ok(amem("--json", "stats")).stdout)["counts"]
    return data


def write_jsonl(path: Path, rows: Sequence[object | str]) -> Path:
    """Rows are dumped as JSON; plain strings are written verbatim (for broken lines)."""
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n",
        encoding="utf-8",
    )
    return path


# -- add / show / search ------------------------------------------------------------------


def test_add_show_search_round_trip(amem: Amem, graph: Callable[[], MemoryGraph]) -> None:
    added = ok(
        amem(
            "add", "Postgres pool must be at least 20 [bold]connections[/]",
            "--agent", "alice", "--task", "db-tuning", "--tag", "db", "--tag", "ops",
            "--source", "https://docs.example.com/pg", "--id", "m1",
        )
    )  # fmt: skip
    assert "m1" in added.stdout
    ok(amem("add", "Canary every deploy at 5%", "--agent", "bob", "--derived-from", "m1"))

    shown = ok(amem("show", "m1")).stdout
    for expected in ("m1", "alice", "db-tuning", "db, ops", "https://docs.example.com/pg"):
        assert expected in shown
    assert "[bold]connections[/]" in shown, "memory text must not be read as rich markup"
    assert "embedding" not in shown

    hits = ok(amem("search", "postgres pool connections", "-k", "1")).stdout
    assert "m1" in hits and "alice" in hits and "Canary" not in hits

    stored = graph().get("m1")
    assert stored.tags == ["db", "ops"] and stored.task == "db-tuning"
    assert stored.source == "https://docs.example.com/pg"


def test_add_rejects_bad_input_with_exit_2(amem: Amem) -> None:
    result = amem("add", "x", "--agent", "has space")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "agent" in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_json_output_is_plain_json(amem: Amem) -> None:
    added = json.loads(ok(amem("--json", "add", "pool size twenty", "--id", "j1")).stdout)
    assert added["id"] == "j1" and added["confidence"] == 0.5
    assert "embedding" not in added

    shown = json.loads(ok(amem("--json", "show", "j1")).stdout)
    assert shown["content"] == "pool size twenty" and shown["created_at"].endswith("Z")

    hits = json.loads(ok(amem("--json", "search", "pool size", "--explain")).stdout)
    assert [h["memory"]["id"] for h in hits] == ["j1"]
    assert hits[0]["rank"] == 1 and "embedding" not in hits[0]["memory"]
    assert {"vector", "text", "recency"} <= set(hits[0]["explanation"]["signals"])

    plain = json.loads(ok(amem("--json", "search", "pool size")).stdout)
    assert "explanation" not in plain[0]

    stats = json.loads(ok(amem("--json", "stats")).stdout)
    assert stats["counts"]["Memory"] == 1 and stats["embedder"]["name"] == "hashing-256"


def test_search_explain_shows_signal_columns_and_graph_path(amem: Amem) -> None:
    for i in range(1, 7):
        ok(amem("add", f"connection pool sizing note {i} for postgres", "--id", f"p{i}"))
    ok(amem("add", "zebra migration schedule", "--id", "child", "--derived-from", "p1"))

    out = ok(amem("search", "connection pool sizing note 1", "--explain")).stdout
    header = next(line for line in out.splitlines() if "vector" in line)
    for column in ("vector", "text", "graph", "recency", "importance", "confidence", "fused"):
        assert column in header
    assert "child -[DERIVED_FROM]-> p1" in out

    without = ok(amem("search", "connection pool sizing note 1")).stdout
    assert "fused" not in without and "DERIVED_FROM" not in without


def test_search_filters_by_agent(amem: Amem) -> None:
    ok(amem("add", "pool of twenty", "--agent", "alice", "--id", "a1"))
    ok(amem("add", "pool of two", "--agent", "bob", "--id", "b1"))
    hits = json.loads(ok(amem("--json", "search", "pool", "--agent", "bob")).stdout)
    assert [h["memory"]["id"] for h in hits] == ["b1"]


def test_search_with_no_match_says_so(amem: Amem) -> None:
    ok(amem("add", "anything", "--scope", "elsewhere"))
    assert "no memories match" in ok(amem("search", "anything")).stdout


def test_show_unknown_id_exits_2(amem: Amem) -> None:
    ok(amem("add", "something"))
    result = amem("show", "missing-id")
    assert result.exit_code == 2
    assert "error: no memory" in result.stderr and "missing-id" in result.stderr
    assert result.stdout == "" and "Traceback" not in result.output


def test_stats_counts_labels_and_edges(amem: Amem) -> None:
    ok(amem("add", "first", "--agent", "alice", "--source", "https://a.example", "--id", "s1"))
    ok(amem("add", "second", "--agent", "alice", "--derived-from", "s1"))
    out = ok(amem("stats")).stdout
    assert "local" in out and "hashing-256" in out
    assert counts(amem) == {
        "Memory": 2,
        "Agent": 1,
        "Source": 1,
        "ATTRIBUTED_TO": 2,
        "FROM_SOURCE": 1,
        "DERIVED_FROM": 1,
    }
    assert any("Memory" in line and line.rstrip().endswith("2 │") for line in out.splitlines())


# -- opening stores -----------------------------------------------------------------------


def test_store_and_embedder_come_from_env_at_call_time(tmp_path: Path) -> None:
    target = tmp_path / "env" / "m.db"
    env = {**BASE_ENV, "AMEM_STORE": str(target), "AMEM_EMBEDDER": "hashing"}
    result = CliRunner().invoke(cli, ["--json", "add", "from env"], env=env)
    assert result.exit_code == 0, result.output
    assert target.exists()
    stats = CliRunner().invoke(cli, ["--json", "stats"], env=env)
    assert json.loads(stats.stdout)["embedder"]["name"] == "hashing-256"


def test_bad_embedder_in_env_is_a_user_error(db: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--store", str(db), "add", "x"], env={**BASE_ENV, "AMEM_EMBEDDER": "bogus"}
    )
    assert result.exit_code == 2
    assert "unknown embedder 'bogus'" in result.stderr


def test_store_built_with_hashing_needs_no_flag_later(amem: Amem, db: Path) -> None:
    """Without --embedder, the CLI uses the embedder the store was built with."""
    ok(amem("add", "pool of twenty", "--id", "h1"))
    plain = CliRunner()
    shown = plain.invoke(cli, ["--store", str(db), "show", "h1"], env=BASE_ENV)
    assert shown.exit_code == 0 and "pool of twenty" in shown.stdout
    found = plain.invoke(cli, ["--store", str(db), "--json", "search", "pool"], env=BASE_ENV)
    assert found.exit_code == 0 and json.loads(found.stdout)[0]["memory"]["id"] == "h1"

    wrong = plain.invoke(
        cli, ["--store", str(db), "--embedder", "minilm", "search", "pool"], env=BASE_ENV
    )
    assert wrong.exit_code == 2 and "hashing-256" in wrong.stderr


@pytest.mark.parametrize("command", [["show", "x"], ["stats"]])
def test_read_commands_do_not_create_a_store(amem: Amem, db: Path, command: list[str]) -> None:
    result = amem(*command)
    assert result.exit_code == 2 and "no store at" in result.stderr
    assert not db.exists()


def test_unexpected_errors_exit_1_without_traceback(
    amem: Amem, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(amem("add", "x", "--id", "u1"))

    def boom(self: MemoryGraph, memory_id: str) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(MemoryGraph, "get", boom)
    result = amem("show", "u1")
    assert result.exit_code == 1
    assert "error: unexpected RuntimeError: kaboom" in result.stderr
    assert "Traceback" not in result.output


def test_usage_errors_keep_clicks_behaviour(amem: Amem) -> None:
    result = amem("search", "q", "-k", "0")
    assert result.exit_code == 2 and "Usage:" in result.stderr


# -- ingest -------------------------------------------------------------------------------

GOOD_ROWS: list[object | str] = [
    {"content": "runbook says pool of 20", "id": "r1", "agent": "researcher",
     "source": "https://docs.example.com/runbook", "timestamp": "2025-01-02T03:04:05+02:00"},
    "",
    {"content": "canary at 5 percent", "id": "r2", "tags": ["deploy"], "episode": "ep-1",
     "agent": "researcher"},
    {"content": "rollout plan", "id": "r3", "derived_from": ["r1", "r2"], "kind": "insight"},
    {"content": "no id on this one", "scope": "other"},
    {"content": "fifth line"},
]  # fmt: skip


def test_ingest_stores_every_line(
    amem: Amem, tmp_path: Path, graph: Callable[[], MemoryGraph]
) -> None:
    path = write_jsonl(tmp_path / "good.jsonl", GOOD_ROWS)
    result = ok(amem("ingest", str(path), "--batch-size", "2"))
    assert "stored 5 memories" in result.stdout
    assert "ingesting" not in result.stdout, "progress belongs on stderr"

    mg = graph()
    r1 = mg.get("r1")
    assert r1.created_at.isoformat() == "2025-01-02T01:04:05+00:00"
    assert mg.get("r2").episode == "ep-1"
    parents = {e.dst for e in mg.store.edges(["r3"], ["DERIVED_FROM"])}
    assert parents == {"r1", "r2"}
    assert counts(amem)["Memory"] == 5


def test_ingest_json_reports_count_only_on_stdout(amem: Amem, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "good.jsonl", GOOD_ROWS)
    out = json.loads(ok(amem("--json", "ingest", str(path))).stdout)
    assert out == {"stored": 5, "file": str(path)}


def test_ingest_reads_stdin(amem: Amem) -> None:
    ok(amem("ingest", "-", input='{"content": "from stdin", "id": "s1"}\n'))
    assert counts(amem)["Memory"] == 1


BAD_LINE_3 = [
    pytest.param('{"content": "broken", ', "invalid JSON", id="bad-json"),
    pytest.param('{"content": ""}', "content is empty", id="empty-content"),
    pytest.param('["not", "an", "object"]', "expected a JSON object", id="not-object"),
    pytest.param('{"content": "x", "colour": "red"}', "colour", id="unknown-field"),
    pytest.param(
        '{"content": "x", "timestamp": "2025-01-02T03:04:05"}', "no timezone", id="naive-time"
    ),
    pytest.param('{"content": "x", "derived_from": ["nowhere"]}', "unknown memory", id="parent"),
    pytest.param('{"content": "x", "derived_from": ["b5"]}', "defined on line 5", id="forward"),
    pytest.param('{"content": "x", "id": "b1"}', "repeats line 1", id="repeated-id"),
    pytest.param('{"content": "other text", "id": "pre"}', "already exists", id="conflict"),
]


@pytest.mark.parametrize(("line3", "problem"), BAD_LINE_3)
def test_ingest_bad_line_names_it_and_stores_nothing(
    amem: Amem, tmp_path: Path, line3: str, problem: str
) -> None:
    ok(amem("add", "already here", "--id", "pre", "--agent", "alice"))
    before = counts(amem)
    rows: list[object | str] = [
        {"content": "one", "id": "b1"},
        {"content": "two", "id": "b2"},
        line3,
        {"content": "four", "id": "b4"},
        {"content": "five", "id": "b5"},
    ]
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    # batch size 1: anything not validated up front would already have been written
    result = amem("ingest", str(path), "--batch-size", "1")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: line 3:")
    assert problem in result.stderr
    assert "Traceback" not in result.output
    assert counts(amem) == before
    assert amem("show", "b1").exit_code == 2


def test_ingest_write_failure_keeps_earlier_batches_and_rerun_completes(
    amem: Amem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows: list[object | str] = [{"content": f"line {i}", "id": f"w{i}"} for i in range(1, 6)]
    path = write_jsonl(tmp_path / "w.jsonl", rows)
    real = MemoryGraph.remember_many
    calls: list[int] = []

    def flaky(self: MemoryGraph, items: Sequence[Any]) -> Any:
        calls.append(len(items))
        if len(calls) == 2:
            raise StoreError("disk full")
        return real(self, items)

    monkeypatch.setattr(MemoryGraph, "remember_many", flaky)
    result = amem("ingest", str(path), "--batch-size", "2")
    assert result.exit_code == 2
    assert "disk full (in the batch starting at line 3)" in result.stderr
    assert "the 2 memories up to line 2 were stored" in result.stderr
    assert counts(amem)["Memory"] == 2
    assert amem("show", "w3").exit_code == 2

    monkeypatch.setattr(MemoryGraph, "remember_many", real)
    assert "stored 5 memories" in ok(amem("ingest", str(path))).stdout
    assert counts(amem)["Memory"] == 5, "re-running a file with ids must not duplicate"


def test_ingest_first_batch_failure_says_nothing_stored(
    amem: Amem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_jsonl(tmp_path / "w.jsonl", [{"content": "only"}])

    def fail(self: MemoryGraph, items: Sequence[Any]) -> Any:
        raise StoreError("store went away")

    monkeypatch.setattr(MemoryGraph, "remember_many", fail)
    result = amem("ingest", str(path))
    assert result.exit_code == 2 and "nothing was stored" in result.stderr


# -- demo ---------------------------------------------------------------------------------


def test_demo_json_summary_shows_confidence_moving(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--json", "demo", "--embedder", "hashing"], env=BASE_ENV)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert "researcher" in result.stderr, "the story goes to stderr under --json"
    success, failure = summary["confidence"]["success"], summary["confidence"]["failure"]
    assert success and failure
    assert all(m["after"] > m["before"] for m in success.values())
    assert all(m["after"] < m["before"] for m in failure.values())


def test_demo_defaults_to_a_throwaway_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["demo", "--embedder", "hashing"], env=BASE_ENV)
    assert result.exit_code == 0, result.output
    assert "researcher" in result.stdout and "deployer" in result.stdout
    assert "in memory and is gone" in result.stdout
    assert list(tmp_path.iterdir()) == [], "the demo must not create ./.amem"


def test_demo_on_a_kept_store_can_run_twice(amem: Amem) -> None:
    first = json.loads(ok(amem("--json", "demo")).stdout)
    memories = counts(amem)["Memory"]
    second = json.loads(ok(amem("--json", "demo")).stdout)
    assert second["run"] != first["run"]
    assert counts(amem)["Memory"] == 2 * memories
    assert all(m["after"] < m["before"] for m in second["confidence"]["failure"].values())


# -- rendering ----------------------------------------------------------------------------


def test_format_path_chains_shared_nodes() -> None:
    steps = [
        PathStep(source="a", edge="GENERATED_IN", target="ep"),
        PathStep(source="b", edge="GENERATED_IN", target="ep"),
        PathStep(source="b", edge="DERIVED_FROM", target="c"),
    ]
    assert format_path(steps) == "a -[GENERATED_IN]-> ep <-[GENERATED_IN]- b -[DERIVED_FROM]-> c"
    assert format_path([]) == "—"
