"""Issue 21 point 1 through the doors: the middleware and the tools credit what was *used*.

The middleware counts a memory as used when the run was shown it (in a prompt or by the recall
tool) and cited its id (in an answer's text or a tool call's arguments); the report_outcome tool
takes ``used`` from the model. Without either, the library's default rule (top hit) applies.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from amem_graph import MemoryGraph
from amem_graph.integrations.middleware import AmemMemoryMiddleware, cited_ids
from amem_graph.integrations.tools import memory_tools

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from scripted_model import ScriptedChatModel

SCOPE = "team"


@pytest.fixture
def seeded(mg: MemoryGraph) -> MemoryGraph:
    mg.remember("Refunds over 100 EUR need a manager's approval", id="refund", scope=SCOPE)
    mg.remember("Refunds are paid back within 5 days", id="days", scope=SCOPE)
    mg.remember("Refund rules of another team", id="foreign", scope="other-team")
    return mg


def run(mg: MemoryGraph, script: list[Any], **options: Any) -> tuple[dict[str, Any], Any]:
    model = ScriptedChatModel(script=script)
    middleware = AmemMemoryMiddleware(mg, scope=SCOPE, agent="helper", include_tools=True,
                                      **options)  # fmt: skip
    agent = create_agent(model, tools=middleware.tools, middleware=[middleware])
    result = agent.invoke({"messages": [HumanMessage("Can I refund 250 EUR, and how fast?")]})
    return result, middleware


def credits(mg: MemoryGraph, episode: str) -> dict[str, str]:
    [outcome] = [e.dst for e in mg.store.edges([episode], ["RESULTED_IN"], "out")]
    return {e.dst: e.props["basis"] for e in mg.store.edges([outcome], ["CREDITED"], "out")}


def test_the_cited_memory_is_credited_not_the_top_hit(seeded: MemoryGraph) -> None:
    result, _ = run(seeded, ["Paid back within 5 days [days]."], k=2, outcome=lambda s: False)
    episode = result["amem_episode"]
    assert {e.dst for e in seeded.store.edges([episode], ["READ"], "out")} == {"refund", "days"}
    assert result["amem_used"] == ["days"]
    assert credits(seeded, episode) == {"days": "used"}
    assert seeded.get("days").failures == 1.0
    assert seeded.get("refund").failures == 0.0  # the top hit, read and not cited


def test_without_a_citation_the_default_rule_applies(seeded: MemoryGraph) -> None:
    result, _ = run(seeded, ["Ask a manager."], k=2, outcome=lambda s: False)
    assert result["amem_used"] is None
    assert set(credits(seeded, result["amem_episode"]).values()) == {"top"}


def test_a_later_outcome_uses_what_the_run_cited(seeded: MemoryGraph) -> None:
    result, middleware = run(seeded, ["Within 5 days, see days."], k=2)
    assert result["amem_used"] == ["days"]
    middleware.record_outcome(result, success=True)
    assert credits(seeded, result["amem_episode"]) == {"days": "used"}
    assert seeded.get("days").successes == 1.0 and seeded.get("refund").successes == 0.0


def test_a_memory_the_recall_tool_returned_and_a_tool_call_named_is_used(
    seeded: MemoryGraph,
) -> None:
    recall = AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "refund days"},
                                        "id": "c1"}])  # fmt: skip
    trace = AIMessage("", tool_calls=[{"name": "trace", "args": {"memory_id": "refund"},
                                       "id": "c2"}])  # fmt: skip
    # k=1 in the prompt shows only the top hit; the tool returns both
    result, _ = run(seeded, [recall, trace, "Ask a manager first."], k=1, outcome=lambda s: True)
    assert result["amem_used"] == ["refund"]
    assert credits(seeded, result["amem_episode"]) == {"refund": "used"}


def test_the_outcome_tool_credits_the_ids_the_model_names(seeded: MemoryGraph) -> None:
    with seeded.episode(agent="bot", scope=SCOPE) as ep:
        _, recall, outcome, _ = memory_tools(seeded, scope=SCOPE, agent="bot")
        recall.invoke({"query": "refund manager days", "k": 2, "amem_episode": ep.id})
        refused = outcome.invoke({"success": False, "used": ["foreign"], "amem_episode": ep.id})
        assert "were not read in episode" in refused  # the model reads why, nothing written
        assert seeded.store.edges([ep.id], ["RESULTED_IN"], "out") == []
        said = outcome.invoke({"success": False, "used": ["days"], "amem_episode": ep.id})
    assert "credited days" in said
    assert credits(seeded, ep.id) == {"days": "used"}
    assert seeded.get("refund").failures == 0.0 and seeded.get("days").failures == 1.0


def test_a_tool_outcome_with_used_stands_over_the_middlewares(seeded: MemoryGraph) -> None:
    args = {"success": True, "used": ["refund"]}
    report = AIMessage("", tool_calls=[{"name": "report_outcome", "id": "c1", "args": args}])
    result, _ = run(seeded, [report, "Done [days]."], k=2, outcome=lambda s: False)
    assert credits(seeded, result["amem_episode"]) == {"refund": "used"}
    assert seeded.get("refund").successes == 1.0 and seeded.get("days").failures == 0.0


def test_citations_match_whole_ids_only() -> None:
    asked = AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "m-3"}, "id": "c"}])
    said = [AIMessage("See [m-10] and m-2x; also mem.1:b"), HumanMessage("m-1"), asked]
    shown = {"m-1", "m-10", "m-2", "m-3", "mem.1", "mem.1:b"}
    assert cited_ids(said, shown) == ["m-10", "mem.1:b"]


def test_runs_that_never_finish_do_not_pile_up(
    seeded: MemoryGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    import amem_graph.integrations.middleware as mw

    monkeypatch.setattr(mw, "MAX_OPEN_RUNS", 2)
    _, middleware = run(seeded, ["ok"], k=1)
    for n in range(4):
        with seeded.episode(agent="helper", scope=SCOPE, id=f"dead-{n}"):
            pass
        request = type("R", (), {"messages": [HumanMessage("refund?")],
                                 "state": {"amem_episode": f"dead-{n}"}})()  # fmt: skip
        middleware.recall(request)
    assert list(middleware._shown) == ["dead-2", "dead-3"]
