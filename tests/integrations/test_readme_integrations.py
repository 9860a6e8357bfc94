"""The README's LangGraph and LangChain snippets run as written (with the real MiniLM model);
the LangChain one is handed a scripted chat model as its ``model``."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from scripted_model import ScriptedChatModel

README = Path(__file__).resolve().parents[2] / "README.md"


def snippet(marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    return next(b for b in blocks if marker in b)


@pytest.mark.slow
def test_the_langgraph_snippet_runs(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(snippet("AmemStore("), "README LangGraph", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "Noted: Alice is vegan"
    assert out[-1] == "[('Alice is vegetarian', 'superseded'), ('Alice is vegan', 'active')]"


@pytest.mark.slow
def test_the_langchain_snippet_runs() -> None:
    call = {"name": "recall", "args": {"query": "deploy eu-west"}, "id": "c1"}
    model = ScriptedChatModel(
        script=[AIMessage(content="", tool_calls=[call]), "Use the ops-eu VPN profile."]
    )
    scope: dict[str, Any] = {"model": model}
    exec(compile(snippet("AmemMemoryMiddleware("), "README LangChain", "exec"), scope)
    mg, result = scope["mg"], scope["result"]
    assert "ops-eu VPN profile" in str(model.prompts[0][0].content)  # recalled into the prompt
    assert result["messages"][-1].content == "Use the ops-eu VPN profile."
    [note] = [m for m in mg.find("team") if m.agent == "sre"]
    assert note.confidence > 0.5  # record_outcome credited what the run read
    [answer] = [m for m in mg.find("team") if m.episode == result["amem_episode"]]
    assert answer.content == "Use the ops-eu VPN profile."  # remember_answers
