"""``--scope`` on the provenance commands (issue 18.8), on both stores: an operator of one
scope sees, scores and takes back nothing of another from the command line either.

The world: ``a0`` (scope a) has a derivation ``b0`` in scope b, so a0's cascade crosses the
boundary; ``a1`` is a's alone; an episode of a read them and failed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import neo4j_uri, open_neo4j_store

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.cli.main import cli
from amem_graph.stores.local.store import LocalStore

ENV: dict[str, str | None] = {"COLUMNS": "200", "AMEM_STORE": None, "AMEM_EMBEDDER": None}


class World:
    """The CLI runner on a target, and the same store opened with the library."""

    def __init__(self, target: str, mg: MemoryGraph) -> None:
        self.target = target
        self.mg = mg

    def amem(self, *args: str) -> Result:
        full = ["--store", self.target, "--embedder", "hashing", *args]
        return CliRunner().invoke(cli, full, env=ENV)

    def json(self, *args: str) -> Any:
        result = self.amem("--json", *args)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def status(self, memory_id: str) -> str:
        return self.mg.get(memory_id).status


@pytest.fixture(params=["local", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    if request.param == "local":
        target = str(tmp_path / "memory.db")
        mg = MemoryGraph(LocalStore(target), HashingEmbedder())
    else:
        target = neo4j_uri()
        mg = MemoryGraph(open_neo4j_store(), HashingEmbedder())
    mg.remember("rotate the signing keys weekly", id="a0", scope="a", agent="ana")
    mg.remember("rotate keys: b's copy", id="b0", scope="b", agent="ana", derived_from=["a0"])
    mg.remember("keys live in the vault", id="a1", scope="a", agent="bob")
    with mg.episode(agent="ana", scope="a", id="ep-a") as ep:
        ep.recall("rotate the signing keys", k=2)
        ep.outcome(success=False)
    yield World(target, mg)
    mg.close()


def test_retract_refuses_a_cascade_out_of_its_scope(world: World) -> None:
    refused = world.amem("retract", "a0", "--scope", "a", "--reason", "poisoned")
    assert refused.exit_code == 2, refused.output
    assert "outside scope 'a'" in refused.output and "b0" not in refused.output
    assert "--cross-scope" in refused.output
    assert world.status("a0") == world.status("b0") == "active"


def test_retract_cross_scope_takes_the_cascade_and_lists_it(world: World) -> None:
    report = world.json("retract", "a0", "--scope", "a", "--cross-scope", "--reason", "poisoned")
    assert report["scope"] == "a" and report["cross_scope"] == ["b0"]
    assert world.status("b0") == "retracted"
    world.mg.restore(report["id"])
    table = world.amem("retract", "a0", "--scope", "a", "--cross-scope", "--reason", "again")
    assert "in other scopes" in table.stdout and "b0" in table.stdout


def test_retract_in_a_scope_finds_nothing_of_another(world: World) -> None:
    result = world.amem("retract", "b0", "--scope", "a", "--reason", "not mine")
    assert result.exit_code == 2 and "in scope 'a'" in result.output
    by_agent = world.json("retract", "--agent", "ana", "--scope", "b", "--reason", "x", "--dry-run")
    assert by_agent["targets"] == ["b0"]
    assert world.status("b0") == "active"  # a dry run


def test_cross_scope_needs_a_scope(world: World) -> None:
    result = world.amem("retract", "a0", "--cross-scope", "--reason", "x")
    assert result.exit_code == 2 and "--cross-scope needs --scope" in result.output
    assert world.status("a0") == "active"


def test_impact_and_trace_in_a_scope_leave_the_other_out(world: World) -> None:
    everywhere = world.json("impact", "a0")
    assert everywhere["derived_ids"] == ["b0"]
    mine = world.json("impact", "a0", "--scope", "a")
    assert mine["derived_ids"] == [] and mine["hidden"] >= 1
    assert "nodes of other scopes left out" in world.amem("impact", "a0", "--scope", "a").stdout
    trace = world.json("trace", "a0", "--scope", "a")
    assert "b0" not in json.dumps(trace)
    assert "b0" in json.dumps(world.json("trace", "a0"))
    for command in ("impact", "trace"):
        result = world.amem(command, "b0", "--scope", "a")
        assert result.exit_code == 2 and "in scope 'a'" in result.output


def test_audit_in_a_scope_shows_only_its_memories(world: World) -> None:
    world.json("retract", "a0", "--scope", "a", "--cross-scope", "--reason", "poisoned")
    (event_a,) = world.json("audit", "--scope", "a")
    (event_b,) = world.json("audit", "--scope", "b")
    assert event_a["id"] == event_b["id"]
    assert set(event_a["memory_ids"]) <= {"a0", "a1"} and "a0" in event_a["memory_ids"]
    assert event_b["memory_ids"] == ["b0"]
    assert world.json("audit", "--scope", "c") == []


def test_suspects_in_a_scope_propose_a_retraction_in_it(world: World) -> None:
    data = world.json("suspects", "--scope", "a")
    assert data["suspects"] and {s["id"] for s in data["suspects"]} <= {"a0", "a1"}
    proposal = data["proposal"]
    assert "--scope a" in proposal["command"]
    if data["suspects"][0]["id"] == "a0":  # its cascade reaches b0: the dry run says so
        assert proposal["dry_run"] is None and "outside scope 'a'" in proposal["refused"]
    else:
        assert proposal["refused"] is None and proposal["dry_run"]["scope"] == "a"
    assert world.json("suspects", "--scope", "b")["suspects"] == []  # b's memory never failed
    agents = world.json("suspects", "--by", "agent", "--scope", "a")
    assert all(set(s["memory_ids"]) <= {"a0", "a1"} for s in agents["suspects"])


def test_agent_trust_in_a_scope(world: World) -> None:
    overall = world.json("agent", "ana")
    assert set(overall["trust_by_scope"]) == {"a", "b"} and overall["memory_count"] == 2
    in_a = world.json("agent", "ana", "--scope", "a")
    assert list(in_a["trust_by_scope"]) == ["a"] and in_a["memory_count"] == 1
    assert in_a["trust"] == pytest.approx(overall["trust_by_scope"]["a"])
    assert "trust in a" in world.amem("agent", "ana", "--scope", "a").stdout
    missing = world.amem("agent", "nobody")
    assert missing.exit_code == 2 and "no agent 'nobody'" in missing.output
