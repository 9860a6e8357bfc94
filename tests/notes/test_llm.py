"""NoteLLM: pydantic answers from any chat model, bounded retries, counted fallbacks."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from amem_graph.notes.llm import NoteLLM, Usage
from amem_graph.notes.prompts import LinkAnswer, NoteAnswer
from notes.fakes import ToolCallingFake, scripted, tool_call, with_usage

GOOD = {"keywords": ["vpn", "ops-eu"], "tags": ["security"], "context": "How to reach eu-west."}


def ask(model: object, retries: int = 2) -> tuple[NoteAnswer | None, dict[str, int]]:
    usage = Usage()
    llm = NoteLLM(model, retries=retries, usage=usage)  # type: ignore[arg-type]
    answer = llm.ask("enrich", NoteAnswer, "system", "prompt")
    return answer, usage.snapshot()["enrich"]


def test_good_json_is_parsed_and_tokens_counted() -> None:
    answer, counts = ask(scripted(with_usage(GOOD, 120, 30)))
    assert answer is not None and answer.keywords == ["vpn", "ops-eu"]
    assert counts["calls"] == 1 and counts["fallbacks"] == 0
    assert (counts["input_tokens"], counts["output_tokens"]) == (120, 30)


def test_fenced_json_with_prose_around_it_is_parsed() -> None:
    text = 'Sure! Here is the note:\n```json\n{"keywords": ["a"], "context": "c"}\n```\nBye'
    answer, _ = ask(FakeListChatModel(responses=[text]))
    assert answer is not None and answer.keywords == ["a"] and answer.tags == []


def test_malformed_json_is_retried_then_accepted() -> None:
    answer, counts = ask(scripted('{"keywords": ["a",', GOOD))
    assert answer is not None and answer.context == "How to reach eu-west."
    assert (counts["calls"], counts["retries"], counts["malformed"]) == (2, 1, 1)
    assert counts["fallbacks"] == 0


def test_wrong_shape_counts_as_malformed() -> None:
    answer, counts = ask(scripted({"keywords": [], "context": ""}, {"tags": ["x"]}, GOOD))
    assert answer is not None
    assert counts["malformed"] == 2


def test_persistently_malformed_answers_fall_back_after_bounded_retries() -> None:
    answer, counts = ask(scripted("no json here", "still none", "{]"), retries=2)
    assert answer is None
    assert (counts["calls"], counts["retries"], counts["malformed"], counts["fallbacks"]) == (
        3,
        2,
        3,
        1,
    )


def test_empty_answer_is_malformed() -> None:
    answer, counts = ask(scripted("", "   "), retries=1)
    assert answer is None and counts["malformed"] == 2 and counts["fallbacks"] == 1


def test_exceptions_from_the_model_are_retried_then_fall_back() -> None:
    answer, counts = ask(scripted(TimeoutError("provider timed out"), GOOD))
    assert answer is not None and counts["errors"] == 1
    answer, counts = ask(scripted(RuntimeError("500"), RuntimeError("500")), retries=1)
    assert answer is None and counts["errors"] == 2 and counts["fallbacks"] == 1


def test_retry_tells_the_model_what_was_wrong() -> None:
    model = scripted("not json", GOOD)
    seen: list[str] = []
    original = model._generate

    def spy(messages, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(messages[-1].content)
        return original(messages, *args, **kwargs)

    object.__setattr__(model, "_generate", spy)
    ask(model)
    assert "no JSON object" in seen[1] and seen[0] == "prompt"


def test_structured_output_path_uses_tool_calls() -> None:
    model = ToolCallingFake(
        messages=iter([tool_call("NoteAnswer", {"keywords": []}), tool_call("NoteAnswer", GOOD)])
    )
    answer, counts = ask(model)
    assert answer is not None and answer.tags == ["security"]
    assert counts["malformed"] == 1 and counts["calls"] == 2


def test_lenient_schema_accepts_an_empty_object() -> None:
    usage = Usage()
    llm = NoteLLM(scripted("{}"), retries=0, usage=usage)
    answer = llm.ask("link", LinkAnswer, "system", "prompt")
    assert answer == LinkAnswer()


def test_usage_props_round_trip() -> None:
    usage = Usage()
    usage.add("enrich", "calls", 3)
    usage.add("link", "dropped_ids")
    again = Usage.from_props(iter([usage.props(), usage.props()]))
    assert again["enrich"]["calls"] == 6 and again["link"]["dropped_ids"] == 2
    with pytest.raises(ValueError, match="metric"):
        usage.add("enrich", "nonsense")
