"""examples/memory_agent.py: memory carried across two sessions, a poisoned one kept out."""

from __future__ import annotations

import sys
from pathlib import Path

from amem_graph import MemoryGraph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from memory_agent import SCOPE, run_story, transcript


def test_the_second_session_uses_the_first_and_never_the_retracted(mg: MemoryGraph) -> None:
    story = run_story(mg)
    assert story.poison_id in story.before_retraction  # recall would have shown it
    assert story.retracted == [story.poison_id]
    assert all(story.fact_id in shown for shown in story.second.prompt_memories)
    assert all(story.poison_id not in shown for shown in story.second.prompt_memories)
    assert story.first.prompt_memories == [[], [], []]  # a run does not read its own notes
    answer = story.second.messages[-1]
    assert "ops-eu" in str(answer.content) and "--no-vpn" not in str(answer.content)
    tools = [tc["name"] for m in story.second.messages for tc in getattr(m, "tool_calls", [])]
    assert tools == ["recall", "trace"]
    assert story.confidence[1] > story.confidence[0]
    assert story.used == [story.fact_id] and story.credited == {story.fact_id: "used"}
    reads = mg.store.edges([story.second.episode], ["READ"], "out")
    assert story.fact_id in {e.dst for e in reads}
    fact = mg.get(story.fact_id)
    assert (fact.agent, fact.scope, fact.episode) == (
        "deploy-assistant",
        SCOPE,
        story.first.episode,
    )
    text = transcript(story)
    assert "=== session 2" in text and "retracted everything from" in text
