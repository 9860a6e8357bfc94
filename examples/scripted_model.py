"""A scripted chat model for examples and tests: langchain-core's fake, able to take tools.

``GenericFakeChatModel`` replays messages but refuses ``bind_tools``, which ``create_agent``
calls; this subclass accepts it, and each step of its script may be a message or a function
of the messages the model was sent (so an answer can depend on what memory put in its prompt).
Every prompt it receives is kept in ``prompts``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import GenericFakeChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field

Step = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(GenericFakeChatModel):
    """Answers with the next step of ``script``; ``prompts`` holds what each call was sent."""

    messages: Any = Field(default_factory=lambda: iter(()))
    script: list[Any]  # of Step: pydantic would try to make a function an AIMessage
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    tool_names: list[str] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, Any]:
        self.tool_names = [getattr(t, "name", str(t)) for t in tools]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if len(self.prompts) >= len(self.script):
            raise RuntimeError(
                f"the script has {len(self.script)} steps; call {len(self.prompts) + 1}"
            )
        step = self.script[len(self.prompts)]
        self.prompts.append(list(messages))
        reply = step(list(messages)) if callable(step) else step
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])
