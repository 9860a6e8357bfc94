"""The scripted demo, called directly: its summary, what it wrote, and that steps extend."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from rich.console import Console

from amem_graph import MemoryGraph
from amem_graph.cli.demo import DOCS, STEPS, DemoState, Step, run_demo
from amem_graph.core.schema import OUTCOME


@pytest.fixture
def mg() -> Iterator[MemoryGraph]:
    graph = MemoryGraph.open(":memory:", embedder="hashing")
    yield graph
    graph.close()


def play(mg: MemoryGraph, steps: Sequence[Step] | None = None) -> tuple[dict[str, Any], str]:
    out = io.StringIO()
    summary = run_demo(mg, Console(file=out, width=140), steps)
    return summary, out.getvalue()


def test_outcomes_move_confidence_of_what_was_read(mg: MemoryGraph) -> None:
    summary, _ = play(mg)
    success = summary["confidence"]["success"]
    failure = summary["confidence"]["failure"]
    assert success and failure
    for mid, move in success.items():
        assert move["after"] > move["before"], mid
        assert mg.get(mid).successes > 0
    for mid, move in failure.items():
        assert move["after"] < move["before"], mid
        assert mg.get(mid).failures > 0
    assert summary["written"]["finding-pool"] in failure, "the failure came from the cost tip"


def test_reads_and_outcomes_are_in_the_graph(mg: MemoryGraph) -> None:
    summary, _ = play(mg)
    for label in ("success", "failure"):
        episode = summary["episodes"][label]
        read = {e.dst for e in mg.store.edges([episode], ["READ"])}
        assert read == set(summary["hits"][label])
        outcome = mg.store.get_nodes(OUTCOME, [f"outcome-{episode}"])[f"outcome-{episode}"]
        assert outcome.props["success"] is (label == "success")
    action = mg.get(summary["written"]["action-failure"])
    assert action.agent == "deployer" and action.episode == summary["episodes"]["failure"]


def test_research_writes_sources_and_derivations(mg: MemoryGraph) -> None:
    summary, _ = play(mg)
    written = summary["written"]
    for role, _, uri in DOCS:
        doc = mg.get(written[role])
        assert doc.source == uri and doc.agent == "researcher" and doc.scope == summary["scope"]
        assert doc.created_at.tzinfo is not None
    parents = {e.dst for e in mg.store.edges([written["finding-rollout"]], ["DERIVED_FROM"])}
    assert parents == {written["doc-runbook"], written["doc-policy"]}


def test_provenance_of_the_bad_finding(mg: MemoryGraph) -> None:
    summary, text = play(mg)
    prov = summary["provenance"]
    written = summary["written"]
    assert prov["memory"] == written["finding-pool"]
    assert prov["agent"] == "researcher" and prov["episode"] == summary["episodes"]["research"]
    assert prov["derived_from"] == [[written["finding-pool"], written["doc-forum"]]]
    assert prov["sources"] == ["https://forum.example.net/t/payments-pool/4711"]
    assert prov["read_by"][summary["episodes"]["failure"]] is False
    assert "https://forum.example.net/t/payments-pool/4711" in text
    assert f"{summary['episodes']['failure']} → failure" in text


def test_story_prints_every_step(mg: MemoryGraph) -> None:
    _, text = play(mg)
    titles = (
        "researcher reads the docs",
        "rolls out",
        "cut costs",
        "bad advice",
        "forum post back",
    )
    for title in titles:
        assert title in text
    assert "↑" in text and "↓" in text


def test_analyst_retracts_with_cascade_and_restores(mg: MemoryGraph) -> None:
    summary, text = play(mg)
    written, step = summary["written"], summary["retraction"]
    forum, tip, action = written["doc-forum"], written["finding-pool"], written["action-failure"]
    assert step["target"] == forum
    assert step["impact"]["derived"] == 1 and step["impact"]["failed_outcomes"] == 1
    assert step["retracted"] == sorted([forum, tip])
    assert step["quarantined"] == [action], "the failing episode wrote it after reading the tip"
    recall = step["recall"]
    assert tip in recall["before"] and forum in recall["before"]
    withdrawn = {forum, tip, action}
    assert withdrawn.isdisjoint(recall["after_retract"])
    assert len(recall["after_retract"]) == len(recall["before"])
    assert recall["after_restore"] == recall["before"]
    assert sorted(step["restored"]) == sorted(withdrawn)
    assert {mg.get(mid).status for mid in withdrawn} == {"active"}
    kinds = [(e.kind, e.actor) for e in mg.audit(memory=forum)]
    assert kinds == [("retract", "analyst"), ("restore", "analyst")]
    assert mg.retraction(step["id"]).restored_at is not None
    assert "Blast radius of doc-forum: derived finding-pool" in text
    assert "after retract" in text and "after restore" in text


def test_steps_can_be_appended(mg: MemoryGraph) -> None:
    seen: list[str] = []

    def extra(graph: MemoryGraph, console: Console, state: DemoState) -> None:
        seen.append(state.written["finding-pool"])
        console.print("extra step ran")

    summary, text = play(mg, [*STEPS, extra])
    assert seen == [summary["written"]["finding-pool"]]
    assert text.rstrip().endswith("extra step ran")


def test_runs_on_one_store_do_not_see_each_other(mg: MemoryGraph) -> None:
    first, _ = play(mg)
    second, _ = play(mg)
    assert first["scope"] != second["scope"]
    for hits in second["hits"].values():
        assert all(mid.startswith(second["run"]) for mid in hits)
