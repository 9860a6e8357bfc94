"""The retriever's and the tools' own promises: provenance out, bound identity in."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import ToolMessage

from amem_graph import MemoryGraph, ValidationError
from amem_graph.integrations.retriever import AmemRetriever
from amem_graph.integrations.tools import memory_tools

SCOPE = "team"


@pytest.fixture
def seeded(mg: MemoryGraph) -> MemoryGraph:
    mg.remember("Deploys to eu-west need the ops-eu VPN", id="vpn", scope=SCOPE, agent="ops",
                task="deploy", source="https://wiki.example.org/vpn")  # fmt: skip
    mg.remember("The eu-west VPN profile is ops-eu", id="vpn2", scope=SCOPE, agent="sre")
    mg.remember("Secret: the eu-west VPN root password", id="other", scope="elsewhere")
    return mg


def test_documents_carry_ids_and_provenance(seeded: MemoryGraph) -> None:
    retriever = AmemRetriever(graph=seeded, scope=SCOPE, k=5)
    docs = retriever.invoke("eu-west vpn")
    assert {d.id for d in docs} == {"vpn", "vpn2"}  # never the other scope's
    doc = next(d for d in docs if d.id == "vpn")
    assert doc.page_content == "Deploys to eu-west need the ops-eu VPN"
    meta = doc.metadata
    assert (meta["memory_id"], meta["author"], meta["task"], meta["status"]) == (
        "vpn", "ops", "deploy", "active",
    )  # fmt: skip
    assert meta["source"] == "https://wiki.example.org/vpn" and meta["confidence"] == 0.5
    assert meta["rank"] in (1, 2) and meta["score"] > 0
    assert [d.id for d in retriever.invoke("eu-west vpn", k=1)] == [docs[0].id]
    assert [d.id for d in retriever.invoke("eu-west vpn", agent="sre")] == ["vpn2"]
    assert [d.id for d in retriever.invoke("eu-west vpn", task="deploy")] == ["vpn"]
    assert [d.id for d in asyncio.run(retriever.ainvoke("eu-west vpn"))] == [d.id for d in docs]
    with pytest.raises(ValidationError, match="unknown retriever option"):
        retriever.invoke("eu-west vpn", scope="elsewhere")


def test_a_retriever_in_an_episode_logs_its_reads(seeded: MemoryGraph) -> None:
    with seeded.episode(agent="deployer", scope=SCOPE) as ep:
        docs = AmemRetriever(graph=seeded, episode=ep, k=2).invoke("ops-eu vpn")
        ep.outcome(success=False)
    reads = seeded.store.edges([ep.id], ["READ"], "out")
    assert {e.dst for e in reads} == {d.id for d in docs} == {"vpn", "vpn2"}
    top, other = docs[0].id, docs[1].id
    assert seeded.get(top).confidence < 0.5  # the top hit is presumed used: failure lowers it
    assert seeded.get(other).confidence == 0.5  # only read, never charged


def test_tools_keep_their_bound_identity(seeded: MemoryGraph) -> None:
    with seeded.episode(agent="bot", scope=SCOPE) as ep:
        remember, recall, outcome, trace = memory_tools(seeded, scope=SCOPE, agent="bot")
        forged = {"agent": "ops", "scope": "elsewhere", "task": "x", "amem_episode": ep.id}
        said = remember.invoke({"content": "Rollbacks use deploy.sh --undo", **forged})
        mid = said.removeprefix("Remembered as ").rstrip(".")
        stored = seeded.get(mid)
        assert (stored.agent, stored.scope) == ("bot", SCOPE)  # the model cannot pick them
        assert stored.episode == ep.id  # the injected episode (forged only outside ToolNode)
        message = recall.invoke(
            {"type": "tool_call", "id": "c1", "name": "recall",
             "args": {"query": "eu-west vpn password", "k": 5, "scope": "elsewhere",
                      "amem_episode": ep.id}},
        )  # fmt: skip
        assert isinstance(message, ToolMessage)
        ids = [a["memory_id"] for a in message.artifact]
        assert "other" not in ids and {"vpn", "vpn2"} <= set(ids)
        assert message.artifact[0]["rank"] == 1 and "[vpn" in str(message.content)
        assert "no memory 'other'" in trace.invoke({"memory_id": "other"})
        text = trace.invoke({"memory_id": "vpn"})
        assert "written by ops" in text and "https://wiki.example.org/vpn" in text
        assert "read by 1 episode" in text
        assert "Recorded success" in outcome.invoke({"success": True, "amem_episode": ep.id})
    top = message.artifact[0]["memory_id"]
    assert seeded.get(top).confidence > 0.5  # the top hit is presumed used and credited
    assert all(seeded.get(i).confidence == 0.5 for i in ids if i != top)  # only read
    tool_schema = recall.tool_call_schema.model_json_schema()["properties"]
    assert set(tool_schema) == {"query", "k"}  # nothing about scope, agent or episode
    assert "no episode" in memory_tools(seeded, scope=SCOPE)[2].invoke({"success": True})


def test_an_agent_filter_that_admits_nothing_in_scope(mg: MemoryGraph) -> None:
    """Found by the scope-isolation property test: on Neo4j, once the store is big enough for
    the vector index path, a recall whose agent filter admits nothing in the scope raised
    ``StoreError: searching failed: No records found`` instead of returning nothing (the exact
    scan's one row went missing when nothing was admitted)."""
    mg.remember_many(
        [{"content": f"deploy note {i}", "scope": f"x{i % 10}", "agent": "ana"} for i in range(300)]
    )
    mg.remember("deploy note in a", id="a0", scope="a", agent="bob")
    retriever = AmemRetriever(graph=mg, scope="a", k=2)
    assert [d.id for d in retriever.invoke("deploy", agent="bob")] == ["a0"]
    assert retriever.invoke("deploy", agent="ana") == []
