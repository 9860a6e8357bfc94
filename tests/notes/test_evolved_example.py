"""examples/evolved_note.py, the closing note's before/after example, on both stores."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from notes.fakes import MakeGraph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from evolved_note import MODEL_SCRIPT, story


def test_offline_story_evolves_undoes_redoes_and_reverts(make_graph: MakeGraph) -> None:
    mg = make_graph(adjudicate=False)
    lines = story(mg)
    assert "vault" not in lines[0] and "'vault']" in lines[1]  # evolution added the keyword
    assert any("reverted_versions=['runbook@1']" in ln for ln in lines)
    assert [(v.version, v.kind, v.caused_by) for v in mg.history("runbook")] == [
        (1, "evolve", "vault-howto"),
        (2, "revert", None),
    ]
    assert "vault" not in mg.get("runbook").note_keywords  # reverted to version 1


def test_model_story_rewrites_the_context_and_undoes_it(make_graph: MakeGraph) -> None:
    model = GenericFakeChatModel(messages=iter(json.dumps(s) for s in MODEL_SCRIPT))
    mg = make_graph(llm=model, adjudicate=False)
    lines = story(mg)
    assert "the how-to is in the vault note" in lines[1]
    retracted = lines.index("retract vault-howto: reverted_versions=['runbook@1']")
    assert "context='When the staging password rotates.'" in lines[retracted + 1]
    assert mg.get("runbook").note_context == "When the staging password rotates."
