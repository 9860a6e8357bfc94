"""Scripted chat models for the note layer's tests: langchain-core's fakes, real parsing path.

``scripted(...)`` is a ``GenericFakeChatModel`` answering from a script, in order: a string or
AIMessage is the next answer, an exception is raised by the model at that point. A dict is
serialised to JSON. ``ToolCallingFake`` also takes ``bind_tools``, so ``with_structured_output``
works on it and the structured path is exercised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from amem_graph import MemoryGraph

#: the ``make_graph`` fixture: ``make_graph(llm=None, **NotesConfig fields)``
MakeGraph = Callable[..., MemoryGraph]

Step = str | dict[str, Any] | AIMessage | Exception


class Script(Iterator[AIMessage | str]):
    """An iterator over answers that raises scripted exceptions and keeps going after them."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.asked = 0

    def __next__(self) -> AIMessage | str:
        if self.asked >= len(self.steps):
            raise AssertionError(f"the model was asked {self.asked + 1} times; scripted fewer")
        step = self.steps[self.asked]
        self.asked += 1
        if isinstance(step, Exception):
            raise step
        if isinstance(step, dict):
            return json.dumps(step)
        return step


def scripted(*steps: Step) -> GenericFakeChatModel:
    """A fake chat model answering ``steps`` in order."""
    return GenericFakeChatModel(messages=Script(steps))


def with_usage(content: str | dict[str, Any], tokens_in: int, tokens_out: int) -> AIMessage:
    """An answer carrying usage metadata, as providers report it."""
    text = content if isinstance(content, str) else json.dumps(content)
    return AIMessage(
        content=text,
        usage_metadata={
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    )


def tool_call(name: str, args: dict[str, Any]) -> AIMessage:
    """An answer that calls the tool ``name`` (what structured output parses)."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "call-1"}])


class ToolCallingFake(GenericFakeChatModel):
    """A fake that supports tool binding, so ``with_structured_output`` uses tool calls."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:  # type: ignore[override]
        return self


def note(keywords: list[str], tags: list[str] | None = None, context: str = "A note.") -> dict:  # type: ignore[type-arg]
    """A well-formed enrichment answer."""
    return {"keywords": keywords, "tags": tags or [], "context": context}
