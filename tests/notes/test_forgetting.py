"""Consolidation into insights, decay and prune to ``archived``, and bulk erasure."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from amem_graph import MemoryGraph, NotFoundError, ValidationError
from amem_graph.core.models import utcnow
from amem_graph.stores.base import MemoryFilter
from notes.fakes import MakeGraph, scripted

SESSION = [
    "Tried deploy.sh against eu-west without the VPN and it timed out.",
    "Connected the ops-eu VPN profile first. Then deploy.sh finished in two minutes.",
    "The eu-west deploy needs the ops-eu VPN profile every time.",
]


def session(mg: MemoryGraph, episode: str = "ep-1") -> list[str]:
    return [
        mg.remember(t, episode=episode, agent="deployer", kind="episodic", task="deploy").id
        for t in SESSION
    ]


def ids(mg: MemoryGraph, query: str) -> set[str]:
    return {h.memory.id for h in mg.recall(query, k=20)}


# -- consolidation ------------------------------------------------------------------------------


def test_offline_consolidation_is_extractive_and_derived(make_graph: MakeGraph) -> None:
    mg = make_graph()
    sources = session(mg)
    report = mg.consolidate(episode="ep-1")
    [insight] = report.insights
    assert report.by == "offline" and report.sources == sources
    assert insight.kind == "insight" and insight.context == "consolidated from episode ep-1"
    assert "ops-eu VPN profile" in insight.content
    assert all(part in " ".join(SESSION) for part in insight.content.split(". "))
    parents = {e.dst for e in mg.store.edges([insight.id], ["DERIVED_FROM"], "out")}
    assert parents == set(sources)
    again = mg.consolidate(episode="ep-1")
    assert again.written == [] and again.insights[0].id == insight.id  # idempotent
    assert mg.store.counts()["Memory"] == 4


def test_retracting_a_source_takes_the_insight_down(make_graph: MakeGraph) -> None:
    mg = make_graph()
    sources = session(mg)
    insight = mg.consolidate(episode="ep-1").insights[0]
    report = mg.retract(sources[1], reason="wrong")
    assert insight.id in report.retracted
    assert insight.id not in ids(mg, "ops-eu VPN deploy")


def test_model_consolidation_checks_sources_and_supersedes(make_graph: MakeGraph) -> None:
    answers = [
        {
            "insights": [
                {
                    "content": "Connect the ops-eu VPN before deploy.sh.",
                    "sources": ["__S1__", "__S2__", "made-up"],
                }
            ]
        },
        {
            "insights": [
                {
                    "content": "Always connect ops-eu before deploying to eu-west.",
                    "sources": ["__S2__"],
                }
            ]
        },
    ]
    sources = session(make_graph(), "ep-2")
    texts = [
        json.dumps(a).replace("__S1__", sources[0]).replace("__S2__", sources[1]) for a in answers
    ]
    # notes off: the model is asked only to consolidate
    graph = make_graph(llm=scripted(*texts), enabled=False)
    first = graph.consolidate(episode="ep-2")
    assert first.by == "llm"
    [insight] = first.insights
    parents = {e.dst for e in graph.store.edges([insight.id], ["DERIVED_FROM"], "out")}
    assert parents == {sources[0], sources[1]}
    assert graph.stats()["llm"]["consolidate"]["dropped_ids"] == 1
    second = graph.consolidate(episode="ep-2")
    assert second.superseded == [insight.id]
    assert graph.get(insight.id).status == "superseded"
    assert graph.current(insight.id).id == second.insights[0].id


def test_an_earlier_wording_that_comes_back_supersedes_the_later_one(
    make_graph: MakeGraph,
) -> None:
    sources = session(make_graph(), "ep-3")
    first = {"insights": [{"content": "Connect the VPN first.", "sources": [sources[0]]}]}
    second = {"insights": [{"content": "Deploys need ops-eu.", "sources": [sources[0]]}]}
    answers = (json.dumps(a) for a in (first, second, first, first))
    graph = make_graph(llm=scripted(*answers), enabled=False)
    a = graph.consolidate(episode="ep-3").insights[0]
    b = graph.consolidate(episode="ep-3").insights[0]
    back = graph.consolidate(episode="ep-3")
    [again] = back.insights
    assert again.content == a.content and again.id not in (a.id, b.id)
    assert again.status == "active" and back.superseded == [b.id]
    assert graph.get(b.id).status == "superseded" and graph.current(a.id).id == again.id
    repeat = graph.consolidate(episode="ep-3")  # the same wording once more: nothing new
    assert repeat.written == [] and [m.id for m in repeat.insights] == [again.id]


def test_consolidation_bad_input(make_graph: MakeGraph) -> None:
    mg = make_graph()
    with pytest.raises(ValidationError, match="exactly one"):
        mg.consolidate()
    with pytest.raises(NotFoundError):
        mg.consolidate(episode="nope")
    session(mg)
    by_task = mg.consolidate(task="deploy")
    assert by_task.origin == "consolidated from task deploy" and by_task.insights


# -- decay and prune ----------------------------------------------------------------------------


def test_prune_archives_cold_unread_memories(make_graph: MakeGraph) -> None:
    mg = make_graph()
    old = utcnow() - timedelta(days=120)
    mg.remember("Cold fact about the old printer", id="cold", timestamp=old, importance=0.5)
    mg.remember("Read fact about the old printer queue", id="read", timestamp=old, importance=0.5)
    mg.remember("Fresh fact about the new printer", id="fresh", importance=0.5)
    with mg.episode(agent="a") as ep:
        ep.recall("printer queue", k=1)  # reads "read" now: its decay starts again
    dry = mg.prune(threshold=0.1, dry_run=True)
    assert dry.archived == ["cold"] and 0.03 < dry.decayed["cold"] < 0.04
    assert mg.get("cold").status == "active"
    report = mg.prune(threshold=0.1, by="janitor")
    assert report.archived == ["cold"] and mg.get("cold").status == "archived"
    assert "cold" not in ids(mg, "printer")
    assert "cold" in {h.memory.id for h in mg.recall("printer", k=5, include=("archived",))}
    [event] = mg.audit(kind="archive")
    assert event.memory_ids == ["cold"] and event.actor == "janitor"
    assert mg.unarchive(["cold", "fresh"]) == ["cold"]
    assert mg.get("cold").status == "active" and mg.audit(kind="unarchive")


def test_prune_bad_input(make_graph: MakeGraph) -> None:
    mg = make_graph()
    with pytest.raises(ValidationError):
        mg.prune(threshold=2.0)
    with pytest.raises(NotFoundError):
        mg.unarchive("ghost")


def test_archived_memories_survive_retract_and_restore(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember("x", id="x", timestamp=utcnow() - timedelta(days=400))
    mg.prune(threshold=0.1)
    report = mg.retract("x", reason="r")
    assert mg.get("x").status == "retracted"
    mg.restore(report.id)
    assert mg.get("x").status == "archived"


# -- bulk erasure -------------------------------------------------------------------------------


def test_forget_by_scope_agent_source_episode(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember("alpha one", scope="a", id="a1")
    mg.remember("alpha two", scope="a", id="a2")
    mg.remember("by mallory", agent="mallory", id="m1")
    mg.remember("from the bad wiki", source="https://bad.example", id="s1")
    mg.remember("in session nine", episode="ep-9", kind="episodic", id="e1")
    mg.remember("kept", id="keep")
    assert mg.forget(scope="a", reason="tenant left").memory_ids == ["a1", "a2"]
    assert mg.forget(agent="mallory").memory_ids == ["m1"]
    assert mg.forget(source="https://bad.example").memory_ids == ["s1"]
    event = mg.forget(episode="ep-9", by="dpo")
    assert event.memory_ids == ["e1"] and event.actor == "dpo" and len(event.content_hashes) == 1
    left = {m.id for m in mg.store.find_memories(MemoryFilter(statuses=None))}
    assert left == {"keep"}
    text = str([e.model_dump() for e in mg.audit(kind="forget")])
    assert "alpha" not in text and "mallory" in text  # ids and authors, never content
    with pytest.raises(ValidationError, match="exactly one"):
        mg.forget("keep", scope="default")
    with pytest.raises(NotFoundError):
        mg.forget(agent="nobody")


def test_forget_erases_the_words_a_memory_left_in_other_notes(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember(
        "The staging database password rotates every Monday morning; the vault CLI stores it "
        "and the oncall engineer checks the audit dashboard",
        id="n",
    )
    mg.remember("Use the vault to rotate the staging database password on Monday", id="m")
    assert "vault" in mg.get("n").note_keywords
    mg.forget("m", reason="erasure request")
    assert "vault" not in mg.get("n").note_keywords
    [version] = mg.history("n")
    assert version.after.keywords == [] and version.caused_by is None


def test_forgetting_a_replacement_brings_back_what_it_superseded(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember("Cache TTL is 60 s", id="ttl")
    new = mg.update("ttl", "Cache TTL is 30 s")
    mg.forget(new.id)
    assert mg.get("ttl").status == "active"
