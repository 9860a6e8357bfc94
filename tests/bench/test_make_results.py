"""bench/make_results.py and bench/results.py: figures printed by a benchmark become rows of the
per-store tables; a partial re-run replaces only its own rows; the hand-written notes stay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from bench_scripts import load

results = load("results.py")
make_results = load("make_results.py")

NOTES = "# Benchmarks\n\nHand-written notes that must survive.\n"


def fake_bench(tmp_path: Path, name: str, figures: list[tuple[str, str, str]]) -> list[str]:
    """A benchmark script that prints readable text and the given (store, name, value) figures."""
    script = tmp_path / f"{name}.py"
    lines = ["import json", "print('readable output')"]
    for store, fig, value in figures:
        row = {"store": store, "name": fig, "value": value, "ratio": 1.25, "goal": "<= 1.5x"}
        lines.append(f"print('RESULT ' + json.dumps({row!r}))")
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [str(script)]


def run_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[list[str]]) -> str:
    monkeypatch.setattr(make_results, "commands", lambda neo4j, full: runs)
    out, data = tmp_path / "RESULTS.md", tmp_path / "results.json"
    argv = ["make_results.py", "--out", str(out), "--data", str(data)]
    monkeypatch.setattr(sys, "argv", [*argv, "--runs", str(tmp_path / "runs")])
    make_results.main()
    return out.read_text(encoding="utf-8")


def test_a_run_renders_one_table_per_store_and_keeps_the_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "RESULTS.md").write_text(NOTES, encoding="utf-8")
    one = fake_bench(
        tmp_path, "one", [("embedded", "recall p95", "9 ms"), ("neo4j", "ingest", "5k/s")]
    )
    text = run_main(tmp_path, monkeypatch, [one])
    assert "Hand-written notes that must survive." in text
    assert text.index(results.BEGIN) < text.index("Hand-written notes")
    embedded, neo4j = text.split("### Neo4j store")
    assert "| recall p95 | 9 ms |" in embedded and "ingest" not in embedded
    assert "| ingest | 5k/s |" in neo4j and "1.25x" in neo4j
    stored = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert {r["name"] for r in stored} == {"recall p95", "ingest"}
    assert all(r["command"].endswith("one.py") and r["date"] for r in stored)
    assert (tmp_path / "runs").is_dir() and any((tmp_path / "runs").iterdir())


def test_a_partial_rerun_replaces_its_own_rows_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = fake_bench(tmp_path, "first", [("embedded", "a", "1 ms"), ("embedded", "b", "2 ms")])
    run_main(tmp_path, monkeypatch, [first])
    again = fake_bench(tmp_path, "again", [("embedded", "b", "3 ms")])
    text = run_main(tmp_path, monkeypatch, [again])
    assert "| a | 1 ms |" in text and "| b | 3 ms |" in text and "| b | 2 ms |" not in text
    assert text.count(results.BEGIN) == 1 and text.count(results.END) == 1


def test_a_failing_benchmark_leaves_the_record_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "RESULTS.md").write_text(NOTES, encoding="utf-8")
    bad = tmp_path / "bad.py"
    bad.write_text("raise SystemExit(3)\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="exit code 3"):
        run_main(tmp_path, monkeypatch, [[str(bad)]])
    assert (tmp_path / "RESULTS.md").read_text(encoding="utf-8") == NOTES
    assert not (tmp_path / "results.json").exists()


def test_figures_are_checked_when_made_and_when_read() -> None:
    with pytest.raises(ValueError, match="store must be one of"):
        results.Figure("sqlite", "x", "1")
    with pytest.raises(ValueError, match="unknown figure fields"):
        results.from_mapping({"store": "neo4j", "name": "x", "value": "1", "vale": 2})
    assert results.within(1.4, 1.5)["met"] and not results.within(1.6, 1.5)["met"]
    with pytest.raises(ValueError, match="one figures marker"):
        results.splice(f"# T\n{results.BEGIN}\n", "block")


def test_a_saved_long_run_is_recorded_with_its_command_and_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, data = tmp_path / "RESULTS.md", tmp_path / "results.json"
    out.write_text(NOTES, encoding="utf-8")
    log = tmp_path / "run.log"
    row = {"store": "embedded", "name": "ingest at 1000k", "value": "5259 memories/s"}
    log.write_text(f"ingesting...\nRESULT {json.dumps(row)}\ndone\n", encoding="utf-8")
    argv = ["make_results.py", "--out", str(out), "--data", str(data), "--record", str(log)]
    extra = ["--command", "python bench/bench_million.py", "--started", "2026-12-02 15:11 UTC"]
    monkeypatch.setattr(sys, "argv", [*argv, *extra, "--load", "2.6"])
    make_results.main()
    text = out.read_text(encoding="utf-8")
    assert "Hand-written notes that must survive." in text
    assert "| ingest at 1000k | 5259 memories/s |" in text
    assert "2026-12-02 15:11 UTC (2.6)" in text and "`python bench/bench_million.py`" in text
    stored = json.loads(data.read_text(encoding="utf-8"))
    assert [f["command"] for f in stored] == ["python bench/bench_million.py"]


def test_recording_a_log_without_figures_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, data = tmp_path / "RESULTS.md", tmp_path / "results.json"
    log = tmp_path / "empty.log"
    log.write_text("no figures here\n", encoding="utf-8")
    argv = ["make_results.py", "--out", str(out), "--data", str(data), "--record", str(log)]
    monkeypatch.setattr(sys, "argv", [*argv, "--command", "x", "--started", "now"])
    with pytest.raises(SystemExit, match="holds no RESULT line"):
        make_results.main()
    assert not out.exists() and not data.exists()
