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
from conftest import neo4j_uri, open_neo4j_store
from poisoning import EVIL_SOURCE, World, build
from poisoning import statuses as poisoning_statuses

from amem_graph import HashingEmbedder, MemoryGraph, StoreError
from amem_graph.cli.main import cli
from amem_graph.cli.render import format_path
from amem_graph.core.models import PathStep

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
    assert "wrote 5 memories" in result.stdout
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
    assert out == {"stored": 5, "written": 5, "already_present": 0, "file": str(path)}


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
    assert result.stderr.startswith(f"error: {path}:3:")
    assert problem in result.stderr
    assert "hint: " in result.stderr and "nothing from the file was stored" in result.stderr
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
    rerun = ok(amem("ingest", str(path))).stdout
    assert "wrote 3 memories" in rerun and "2 memories already present" in rerun
    assert counts(amem)["Memory"] == 5, "re-running a file with ids must not duplicate"
    again = json.loads(ok(amem("--json", "ingest", str(path))).stdout)
    assert (again["written"], again["already_present"]) == (0, 5)


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


# -- provenance: trace, impact, retract, restore, audit -----------------------------------


@pytest.fixture
def poisoned(db: Path) -> World:
    """The poisoned-memory world, written to the CLI's store with the library."""
    with MemoryGraph.open(db, embedder="hashing") as mg:
        return build(mg)


def statuses_in(db: Path) -> dict[str, str]:
    with MemoryGraph.open(db, embedder="hashing") as mg:
        return poisoning_statuses(mg)


def test_trace_draws_lineage_and_downstream(amem: Amem, poisoned: World) -> None:
    out = ok(amem("trace", poisoned.derived1)).stdout
    for expected in ("upstream", "downstream", "poison", "mallory", EVIL_SOURCE, "derived2"):
        assert expected in out
    reader = next(line for line in out.splitlines() if poisoned.reader2 in line)
    assert "read derived2" in reader and "failure" in reader
    assert "then wrote written2" in out

    data = json.loads(ok(amem("--json", "trace", poisoned.derived1)).stdout)
    assert data["memory_id"] == "derived1"
    assert data["upstream"]["ancestor_ids"] == ["poison"]
    assert data["upstream"]["sources"] == [EVIL_SOURCE]
    assert data["downstream"]["derived_ids"] == ["derived2"]
    assert {(e["type"], e["src"], e["dst"]) for e in data["edges"]} >= {
        ("DERIVED_FROM", "derived1", "poison"),
        ("READ", "ep-reader2", "derived2"),
    }


def test_trace_unknown_memory_exits_2(amem: Amem, poisoned: World) -> None:
    result = amem("trace", "ghost")
    assert result.exit_code == 2 and "no memory with id 'ghost'" in result.stderr


def test_impact_counts_and_lists(amem: Amem, poisoned: World) -> None:
    data = json.loads(ok(amem("--json", "impact", poisoned.poison)).stdout)
    assert set(data["memory_ids"]) == poisoned.affected
    assert data["counts"] == {
        "memories": 4, "derived": 2, "written": 2, "episodes": 2, "outcomes": 2,
        "failed_outcomes": 2,
    }  # fmt: skip
    assert data["episode_ids"] == [poisoned.reader1, poisoned.reader2]
    assert "nodes" not in data and "edges" not in data
    table = ok(amem("impact", poisoned.poison)).stdout
    derived = next(line for line in table.splitlines() if "derived memories" in line)
    assert "2" in derived and "derived1, derived2" in derived


def test_retract_dry_run_changes_nothing(amem: Amem, db: Path, poisoned: World) -> None:
    before = statuses_in(db)
    out = ok(amem("retract", poisoned.poison, "--reason", "evil", "--dry-run")).stdout
    assert "dry run: nothing was changed or stored" in out and "derived1, derived2, poison" in out
    assert "amem restore" not in out and "retraction-" not in out  # no id that looks usable
    assert statuses_in(db) == before
    assert json.loads(ok(amem("--json", "audit")).stdout) == []
    dry = json.loads(
        ok(amem("--json", "retract", poisoned.poison, "--reason", "evil", "--dry-run")).stdout
    )
    assert dry["id"] is None and dry["dry_run"] is True


def test_restore_of_an_unknown_id_says_a_dry_run_stores_none(amem: Amem, poisoned: World) -> None:
    result = amem("restore", "retraction-0123")
    assert result.exit_code == 2
    assert "no retraction 'retraction-0123'" in result.output
    assert "dry run stores nothing" in result.output


def test_retract_cascades_and_restore_undoes_it(amem: Amem, db: Path, poisoned: World) -> None:
    before = statuses_in(db)
    report = json.loads(
        ok(amem("--json", "retract", poisoned.poison, "--reason", "evil", "--by", "ana")).stdout
    )
    assert report["retracted"] == ["derived1", "derived2", "poison"]
    assert report["quarantined"] == ["written1", "written2"]
    assert report["by"] == "ana" and report["dry_run"] is False
    now = statuses_in(db)
    assert now["poison"] == "retracted" and now["written1"] == "quarantined"
    hits = json.loads(ok(amem("--json", "search", "zebra quartz protocol")).stdout)
    assert "poison" not in {h["memory"]["id"] for h in hits}

    restored = json.loads(ok(amem("--json", "restore", report["id"], "--by", "ana")).stdout)
    assert sorted(restored["restored"]) == sorted(report["retracted"] + report["quarantined"])
    assert statuses_in(db) == before
    again = ok(amem("restore", report["id"])).stdout
    assert "already restored" in again

    table = ok(amem("retract", poisoned.clean, "--reason", "check", "--no-cascade")).stdout
    assert "amem restore retraction-" in table
    assert statuses_in(db)["clean-written"] == "active", "--no-cascade leaves readers' writes"


def as_json(amem: Amem, *args: str) -> Any:
    """Run with --json and parse stdout (after checking the exit code)."""
    return json.loads(ok(amem("--json", *args)).stdout)


def test_retract_by_agent_since_source_and_episode(amem: Amem, db: Path, poisoned: World) -> None:
    with MemoryGraph.open(db, embedder="hashing") as mg:
        cutoff = mg.get(poisoned.clean).created_at.isoformat()
    dry = ("--reason", "r", "--dry-run")
    by_agent = as_json(amem, "retract", "--agent", "bob", "--since", cutoff, *dry)
    assert by_agent["targets"] == ["clean"] and by_agent["selector"].startswith("agent:bob since")
    assert as_json(amem, "retract", "--source", EVIL_SOURCE, *dry)["targets"] == ["poison"]
    episode = ("--episode", poisoned.clean_reader, "--no-cascade")
    by_episode = as_json(amem, "retract", *episode, "--reason", "r")
    assert by_episode["retracted"] == ["clean-written"] and by_episode["cascade"] is False
    assert statuses_in(db)["clean-written"] == "retracted"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["poison"], "Missing option '--reason'"),
        (["poison", "--reason", "  "], "a reason is required"),
        (["--reason", "r"], "exactly one of id, agent, source or episode"),
        (["poison", "--agent", "bob", "--reason", "r"], "exactly one of"),
        (["--agent", "bob", "--since", "2026-01-05T09:30:00", "--reason", "r"], "no timezone"),
        (["--agent", "bob", "--since", "yesterday", "--reason", "r"], "not an ISO 8601 time"),
        (["--agent", "nobody", "--reason", "r"], "no agent 'nobody'"),
    ],
)
def test_retract_refuses_bad_requests(
    amem: Amem, db: Path, poisoned: World, args: list[str], problem: str
) -> None:
    before = statuses_in(db)
    result = amem("retract", *args)
    assert result.exit_code == 2, result.output
    assert problem in result.stderr and "Traceback" not in result.output
    assert statuses_in(db) == before


def test_restore_unknown_retraction_exits_2(amem: Amem, poisoned: World) -> None:
    result = amem("restore", "retraction-nope")
    assert result.exit_code == 2 and "no retraction 'retraction-nope'" in result.stderr


def test_audit_filters(amem: Amem, poisoned: World) -> None:
    first = json.loads(ok(amem("--json", "retract", "poison", "--reason", "one")).stdout)
    second = json.loads(
        ok(amem("--json", "retract", "clean", "--reason", "two", "--by", "ana")).stdout
    )
    ok(amem("restore", second["id"], "--reason", "fine"))
    events = json.loads(ok(amem("--json", "audit")).stdout)
    assert [(e["kind"], e["retraction_id"]) for e in events] == [
        ("retract", first["id"]),
        ("retract", second["id"]),
        ("restore", second["id"]),
    ]
    about = json.loads(ok(amem("--json", "audit", "--memory", "clean")).stdout)
    assert [e["kind"] for e in about] == ["retract", "restore"]
    by_ana = json.loads(ok(amem("--json", "audit", "--agent", "ana")).stdout)
    assert [e["retraction_id"] for e in by_ana] == [second["id"]]
    since = json.loads(ok(amem("--json", "audit", "--since", second["at"])).stdout)
    assert [e["kind"] for e in since] == ["retract", "restore"]
    until = json.loads(ok(amem("--json", "audit", "--until", second["at"])).stdout)
    assert [e["retraction_id"] for e in until] == [first["id"]]
    kinds = json.loads(ok(amem("--json", "audit", "--kind", "restore")).stdout)
    assert [e["reason"] for e in kinds] == ["fine"]
    table = ok(amem("audit", "--memory", "poison")).stdout
    assert "retract" in table and "one" in table and "restore" not in table


# -- export / import / training data --------------------------------------------------------


def test_export_import_round_trip(amem: Amem, db: Path, tmp_path: Path, poisoned: World) -> None:
    ok(amem("retract", "poison", "--reason", "evil"))
    out = tmp_path / "graph.jsonl"
    exported = ok(amem("export", "--out", str(out)))
    assert "exported 8 memories" in exported.stdout
    assert "exporting" in exported.stderr and "exporting" not in exported.stdout
    target = tmp_path / "copy.db"
    runner = CliRunner()
    imported = runner.invoke(
        cli, ["--store", str(target), "--json", "import", str(out), "--batch-size", "3"],
        env=BASE_ENV,
    )  # fmt: skip
    assert imported.exit_code == 0, imported.output
    report = json.loads(imported.stdout)
    assert report["memories"] == 8 and report["embedder"] == {"name": "hashing-256", "dims": 256}
    copy = runner.invoke(cli, ["--store", str(target), "--json", "stats"], env=BASE_ENV)
    assert json.loads(copy.stdout)["counts"] == counts(amem)
    with MemoryGraph.open(target, embedder="hashing") as mg:
        assert poisoning_statuses(mg) == statuses_in(db)

    again = runner.invoke(cli, ["--store", str(target), "import", str(out)], env=BASE_ENV)
    assert again.exit_code == 2 and "not empty" in again.stderr


def test_import_reports_a_bad_line(amem: Amem, tmp_path: Path, poisoned: World) -> None:
    out = tmp_path / "graph.jsonl"
    ok(amem("export", "--out", str(out)))
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[3] = "{not json"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = tmp_path / "copy.db"
    result = CliRunner().invoke(cli, ["--store", str(target), "import", str(out)], env=BASE_ENV)
    assert result.exit_code == 2 and result.stderr.startswith("error: line 4: invalid JSON")
    check = CliRunner().invoke(cli, ["--store", str(target), "--json", "stats"], env=BASE_ENV)
    assert json.loads(check.stdout)["counts"] == {}


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ([], "give --out FILE"),
        (["--out", "x.jsonl", "training-data", "y.jsonl"], "--out is for the whole-graph"),
    ],
)
def test_export_needs_out_or_a_subcommand(amem: Amem, args: list[str], problem: str) -> None:
    result = amem("export", *args)
    assert result.exit_code == 2 and problem in result.stderr


def test_export_of_a_missing_store_creates_nothing(amem: Amem, db: Path, tmp_path: Path) -> None:
    result = amem("export", "--out", str(tmp_path / "g.jsonl"))
    assert result.exit_code == 2 and "no store at" in result.stderr
    assert not db.exists() and not (tmp_path / "g.jsonl").exists()


def test_export_training_data(amem: Amem, tmp_path: Path, poisoned: World) -> None:
    ok(amem("retract", "poison", "--reason", "evil"))
    out = tmp_path / "train.jsonl"
    result = json.loads(ok(amem("--json", "export", "training-data", str(out))).stdout)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert result == {"rows": 3, "path": str(out)} and len(rows) == 3
    flagged = {r["episode_id"]: r["retracted_in_play"] for r in rows}
    assert flagged == {poisoned.reader1: True, poisoned.reader2: True, poisoned.clean_reader: False}
    only = tmp_path / "erin.jsonl"
    ok(amem("export", "training-data", str(only), "--agent", "erin"))
    assert [json.loads(x)["agent"] for x in only.read_text().splitlines()] == ["erin"]


# -- cypher and neo4j -----------------------------------------------------------------------


def test_cypher_list_needs_no_store(amem: Amem, db: Path) -> None:
    listed = json.loads(ok(amem("--json", "cypher", "--list")).stdout)
    names = [q["name"] for q in listed]
    assert len(names) >= 10 and "blast_radius" in names and "schema" not in names
    blast = next(q for q in listed if q["name"] == "blast_radius")
    assert blast["params"] == [
        {"name": "memory_id", "type": "string", "required": True, "default": None,
         "doc": "the root memory"}
    ]  # fmt: skip
    assert "blast_radius" in ok(amem("cypher", "--list")).stdout
    shown = ok(amem("cypher", "blast_radius", "--show")).stdout
    assert shown.startswith("// name: blast_radius") and "$memory_id" in shown
    assert not db.exists()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["nope"], "no analyst query 'nope'"),
        (["blast_radius"], "needs $memory_id"),
        (["blast_radius", "-p", "memory_id=x", "-p", "colour=red"], "no parameter(s) ['colour']"),
        (["failure_suspects", "-p", "limit=ten"], "expected an integer"),
        (["blast_radius", "-p", "memory_id=x"], "needs a Neo4j store"),
        ([], "name a query"),
    ],
)
def test_cypher_errors_exit_2(amem: Amem, args: list[str], problem: str) -> None:
    result = amem("cypher", *args)
    assert result.exit_code == 2, result.output
    assert problem in result.stderr


@pytest.fixture
def neo4j_graph() -> Iterator[MemoryGraph]:
    store = open_neo4j_store()
    mg = MemoryGraph(store, HashingEmbedder())
    yield mg
    mg.close()


def neo4j_amem(*args: str) -> Result:
    return CliRunner().invoke(cli, ["--store", neo4j_uri(), *args], env=BASE_ENV)


@pytest.mark.neo4j
def test_cypher_runs_a_query_on_neo4j(neo4j_graph: MemoryGraph) -> None:
    world = build(neo4j_graph)
    data = json.loads(
        ok(neo4j_amem("--json", "cypher", "blast_radius", "-p", "memory_id=poison")).stdout
    )
    assert data["query"] == "blast_radius" and data["params"] == {"memory_id": "poison"}
    (row,) = data["rows"]
    assert set(row["derived_ids"] + row["written_ids"]) == world.affected
    assert data["columns"][:3] == ["memory_id", "memories", "derived"]
    table = ok(neo4j_amem("cypher", "who_read_it", "--param", "memory_id=poison")).stdout
    assert "ep-reader1" in table and "failure" in table


@pytest.mark.neo4j
def test_neo4j_init_applies_the_schema_and_lists_indexes(neo4j_graph: MemoryGraph) -> None:
    neo4j_graph.remember("makes the store record its embedder", id="one")
    first = json.loads(ok(neo4j_amem("--json", "neo4j", "init")).stdout)
    names = {i["name"]: i for i in first["indexes"]}
    for name in ("memory_id", "memory_status", "memory_text", "memory_embedding"):
        assert names[name]["state"] == "ONLINE", name
    assert (
        names["memory_text"]["type"] == "FULLTEXT" and names["memory_embedding"]["type"] == "VECTOR"
    )
    assert first["embedder"] == {"name": "hashing-256", "dims": 256}
    again = json.loads(ok(neo4j_amem("--json", "neo4j", "init")).stdout)
    assert again["indexes"] == first["indexes"], "init is idempotent"
    assert "memory_text" in ok(neo4j_amem("neo4j", "init")).stdout
    clash = neo4j_amem("--embedder", "minilm", "neo4j", "init")
    assert clash.exit_code == 2 and "hashing-256" in clash.stderr


def test_neo4j_init_needs_a_neo4j_uri(amem: Amem) -> None:
    result = amem("neo4j", "init")
    assert result.exit_code == 2 and "needs a Neo4j store" in result.stderr


def test_audit_names_who_acted_without_by(amem: Amem, poisoned: World) -> None:
    ok(amem("retract", "poison", "--reason", "bad", env={"AMEM_ACTOR": "oncall-ana"}))
    events = json.loads(ok(amem("--json", "audit")).stdout)
    assert [e["actor"] for e in events] == ["oncall-ana"]


def test_search_in_an_episode_then_outcome_credits_the_reads(
    amem: Amem, graph: Callable[[], MemoryGraph]
) -> None:
    ok(amem("add", "The staging DB password rotates on Mondays", "--id", "rotate"))
    ok(amem("add", "Lunch is at noon on Fridays", "--id", "lunch"))
    hits = json.loads(
        ok(amem("--json", "search", "staging password", "--episode", "ep-1", "-k", "1")).stdout
    )
    assert [h["memory"]["id"] for h in hits] == ["rotate"]
    done = json.loads(ok(amem("--json", "outcome", "ep-1", "--success")).stdout)
    assert done["success"] is True and done["episode"] == "ep-1"
    mg = graph()
    assert mg.get("rotate").confidence > 0.5  # credited
    assert mg.get("lunch").confidence == 0.5  # not read, not credited
    again = amem("outcome", "ep-1", "--failure")
    assert again.exit_code == 2 and "already has an outcome" in again.output
    assert amem("outcome", "ep-1").exit_code == 2  # neither --success nor --failure
    missing = amem("outcome", "no-such-episode", "--success")
    assert missing.exit_code == 2 and "no episode" in missing.output


def test_import_re_embed_moves_a_graph_to_another_model(tmp_path: Path) -> None:
    small = tmp_path / "small.db"
    with MemoryGraph.open(small, embedder=HashingEmbedder(64)) as mg:
        mg.remember("The staging DB password rotates on Mondays", id="rotate")
        mg.remember("Lunch is at noon on Fridays", id="lunch", derived_from=["rotate"])
    out = tmp_path / "graph.jsonl"
    runner = CliRunner()
    assert runner.invoke(cli, ["--store", str(small), "export", "--out", str(out)]).exit_code == 0
    target = tmp_path / "big.db"
    args = ["--store", str(target), "--embedder", "hashing", "import", str(out), "--re-embed"]
    done = runner.invoke(cli, args, env=BASE_ENV)
    assert done.exit_code == 0, done.output
    with MemoryGraph.open(target, embedder="hashing") as mg:  # 256 dims: would refuse 64
        assert mg.store.embedder_info() == ("hashing-256", 256)
        assert len(mg.get("rotate").embedding or []) == 256
        assert [h.memory.id for h in mg.recall("staging password rotates", k=1)] == ["rotate"]
        assert mg.trace("lunch").upstream.ancestor_ids == ["rotate"]  # the edges came along
    kept = runner.invoke(cli, ["--store", str(tmp_path / "kept.db"), "import", str(out)])
    assert kept.exit_code == 0, kept.output
    with MemoryGraph.open(tmp_path / "kept.db", embedder=HashingEmbedder(64)) as mg:
        assert mg.store.embedder_info() == ("hashing-64", 64)  # without --re-embed: the file's
