"""AmemMemoryMiddleware in real create_agent loops, driven by a scripted chat model."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from amem_graph import MemoryGraph, ValidationError
from amem_graph.core.schema import EPISODE
from amem_graph.integrations.middleware import AmemMemoryMiddleware

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from scripted_model import ScriptedChatModel

SCOPE = "team"


def agent_with(mg: MemoryGraph, script: list[Any], **options: Any) -> tuple[Any, Any, Any]:
    model = ScriptedChatModel(script=script)
    middleware = AmemMemoryMiddleware(mg, scope=SCOPE, agent="helper", task="support", **options)
    agent = create_agent(model, middleware=[middleware], system_prompt="Be brief.")
    return agent, model, middleware


@pytest.fixture
def seeded(mg: MemoryGraph) -> MemoryGraph:
    mg.remember("Refunds over 100 EUR need a manager's approval", id="refund", scope=SCOPE)
    mg.remember("Refunds are paid back within 5 days", id="days", scope=SCOPE)
    mg.remember("Refund secrets of another team", id="foreign", scope="other-team")
    return mg


def test_memories_reach_the_prompt_not_the_history(seeded: MemoryGraph) -> None:
    agent, model, _ = agent_with(seeded, ["Ask a manager."], k=2)
    result = agent.invoke({"messages": [HumanMessage("Can I refund 250 EUR?")]})
    system = str(model.prompts[0][0].content)
    assert system.startswith("Be brief.") and "[refund]" in system and "[foreign]" not in system
    assert all("[refund]" not in str(m.content) for m in result["messages"])
    episode = result["amem_episode"]
    node = seeded.store.get_nodes(EPISODE, [episode])[episode]
    assert node.props["agent"] == "helper" and node.props["task"] == "support"
    assert node.props.get("ended_at") is not None  # closed by after_agent
    reads = seeded.store.edges([episode], ["READ"], "out")
    assert {e.dst for e in reads} == {"refund", "days"}


def test_each_model_call_recalls_for_the_latest_turn(seeded: MemoryGraph) -> None:
    calls = [AIMessage(content="", tool_calls=[{"name": "recall", "args": {"query": "refund"},
                                                 "id": "c1"}]), "done"]  # fmt: skip
    model = ScriptedChatModel(script=calls)
    middleware = AmemMemoryMiddleware(seeded, scope=SCOPE, agent="helper", include_tools=True)
    agent = create_agent(model, middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("refund rules?")]})
    assert set(model.tool_names) == {"remember", "recall", "report_outcome", "trace"}
    assert len(model.prompts) == 2 and all("[refund]" in str(p[0].content) for p in model.prompts)


def test_outcomes_flow_back_with_the_right_sign(seeded: MemoryGraph) -> None:
    agent, _, _ = agent_with(seeded, ["Ask a manager."], outcome=lambda state: False, k=1)
    agent.invoke({"messages": [HumanMessage("Can I refund 250 EUR right away?")]})
    failed = seeded.get("refund").confidence
    assert failed < 0.5
    agent, _, middleware = agent_with(seeded, ["Ask a manager."], k=1)
    result = agent.invoke({"messages": [HumanMessage("Can I refund 250 EUR right away?")]})
    assert seeded.get("refund").confidence == failed  # no callback: nothing recorded yet
    middleware.record_outcome(result, success=True)
    middleware.record_outcome(result, success=False)  # the first outcome stands
    assert seeded.get("refund").confidence > failed
    with pytest.raises(ValidationError, match="amem_episode"):
        middleware.record_outcome({"messages": []}, success=True)


def test_remember_answers_writes_the_turn_into_its_episode(seeded: MemoryGraph) -> None:
    agent, model, _ = agent_with(
        seeded, ["Refunds over 100 EUR need a manager; this one is 250."], remember_answers=True
    )
    result = agent.invoke({"messages": [HumanMessage("Can I refund 250 EUR?")]})
    written = [m for m in seeded.find(SCOPE) if m.episode == result["amem_episode"]]
    assert [(m.content, m.kind, m.agent) for m in written] == [
        ("Refunds over 100 EUR need a manager; this one is 250.", "episodic", "helper")
    ]
    assert written[0].context == "Can I refund 250 EUR?"
    agent, model, _ = agent_with(seeded, ["ok"])
    agent.invoke({"messages": [HumanMessage("Can I refund 250 EUR?")]})
    assert f"[{written[0].id}]" in str(model.prompts[0][0].content)  # the next run sees it


def test_async_agents_run_the_same_hooks(seeded: MemoryGraph) -> None:
    agent, model, _ = agent_with(seeded, ["Ask a manager."], outcome=lambda state: True, k=1)
    result = asyncio.run(agent.ainvoke({"messages": [HumanMessage("refund 250 EUR?")]}))
    assert "[refund]" in str(model.prompts[0][0].content)
    assert {e.dst for e in seeded.store.edges([result["amem_episode"]], ["READ"], "out")} == {
        "refund"
    }
    assert seeded.get("refund").confidence > 0.5


def test_bad_settings_are_refused(mg: MemoryGraph) -> None:
    with pytest.raises(ValidationError):
        AmemMemoryMiddleware(mg, k=0)
