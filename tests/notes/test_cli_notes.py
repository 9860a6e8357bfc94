"""``amem forget`` and the LLM usage table of ``amem stats`` (embedded store)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.cli.main import cli
from notes.fakes import note, scripted

ENV: dict[str, str | None] = {"COLUMNS": "200", "AMEM_STORE": None, "AMEM_EMBEDDER": None}


def amem(db: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["--store", str(db), "--embedder", "hashing", *args], env=ENV)
    assert result.exit_code == 0, result.output
    return result


def test_amem_forget_by_agent_and_by_id(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with MemoryGraph.open(db, embedder="hashing") as mg:
        mg.remember("secret plan one", agent="mallory", id="p1")
        mg.remember("secret plan two", agent="mallory", id="p2")
        mg.remember("harmless", id="h")
    event = json.loads(
        amem(db, "--json", "forget", "--agent", "mallory", "--reason", "gdpr").stdout
    )
    assert event["memory_ids"] == ["p1", "p2"] and event["kind"] == "forget"
    assert "forgot 1 memories" in amem(db, "forget", "h").stdout
    assert json.loads(amem(db, "--json", "stats").stdout)["counts"].get("Memory", 0) == 0
    bad = CliRunner().invoke(cli, ["--store", str(db), "forget"], env=ENV)
    assert bad.exit_code == 2 and "exactly one" in bad.output


def test_amem_stats_shows_llm_usage(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with MemoryGraph.open(db, embedder=HashingEmbedder(), llm=scripted(note(["kitten"]))) as mg:
        mg.remember("Maya adopted a kitten", kind="episodic")
    stats = json.loads(amem(db, "--json", "stats").stdout)
    assert stats["llm"]["enrich"]["calls"] == 1
    out = amem(db, "stats").stdout
    assert "LLM usage" in out and "enrich" in out
