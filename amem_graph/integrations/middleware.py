"""``AmemMemoryMiddleware``: long-term memory for ``langchain.agents.create_agent``.

One agent run is one episode of the memory graph:

* ``before_agent`` opens an episode for the bound agent, task and scope and keeps its id in the
  agent state (``amem_episode``, also in the run's result), where the memory tools find it;
* before every model call, ``wrap_model_call`` recalls the memories relevant to the
  conversation's latest turn, logs them as READ edges of the episode and adds them to the
  system message of that call only (the history is not changed); what the run itself wrote
  is left out, so a run never credits its own notes;
* ``after_agent`` optionally remembers the final answer (``remember_answers``), records the
  outcome that ``outcome(state)`` returns (True/False, or None for unknown) and closes the
  episode. An outcome known only later goes in with ``record_outcome(result, success=...)``;
  one already reported (by the ``report_outcome`` tool, say) stands.

Success raises the confidence of what the run read, failure lowers it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage

from amem_graph.core.errors import ConflictError, ValidationError
from amem_graph.core.models import Hit
from amem_graph.integrations._deps import missing
from amem_graph.integrations.retriever import render_hits
from amem_graph.integrations.tools import EPISODE_KEY, memory_tools
from amem_graph.memory import EpisodeSession, MemoryGraph

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain.agents.middleware.types import ModelCallResult, OmitFromInput
    from langgraph.runtime import Runtime
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing("langchain", exc) from exc

#: how much of the conversation's latest turn becomes the recall query
QUERY_CHARS = 2_000
HEADER = (
    "Long-term memories that may help, best first. Each has an id, its author and a "
    "confidence from past outcomes; prefer confident ones and say when you rely on one:"
)

Outcome = Callable[[Mapping[str, Any]], bool | None]


class AmemState(AgentState[Any]):
    """Agent state with the current episode's id (readable in the run's result)."""

    amem_episode: NotRequired[Annotated[str | None, OmitFromInput]]


def _text(message: AnyMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


def conversation_query(messages: Sequence[AnyMessage]) -> str:
    """The latest turn: the last human message and whatever followed it (tool results)."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0)
    parts = [_text(m) for m in messages[start:] if not isinstance(m, SystemMessage)]
    return "\n".join(p for p in parts if p.strip())[:QUERY_CHARS]


class AmemMemoryMiddleware(AgentMiddleware[AmemState, Any]):
    """Recall into every model call, track the reads, credit the outcome.

    ``scope``, ``agent`` and ``task`` are fixed here, never by the model. ``k`` memories are
    shown per call. ``include_tools`` also registers the four memory tools, bound the same way.
    """

    state_schema = AmemState

    def __init__(
        self,
        graph: MemoryGraph,
        *,
        scope: str | None = None,
        agent: str | None = None,
        task: str | None = None,
        k: int = 5,
        outcome: Outcome | None = None,
        remember_answers: bool = False,
        include_tools: bool = False,
        header: str = HEADER,
    ) -> None:
        super().__init__()
        if k < 1:
            raise ValidationError(f"k must be at least 1, got {k}")
        self.graph = graph
        self.scope = scope
        self.agent = agent
        self.task = task
        self.k = k
        self.outcome = outcome
        self.remember_answers = remember_answers
        self.header = header
        bound = memory_tools(graph, scope=scope, agent=agent, task=task) if include_tools else []
        self.tools = bound

    def _session(self, episode_id: str | None = None) -> EpisodeSession:
        return self.graph.episode(self.agent, self.task, scope=self.scope, id=episode_id)

    # -- the three hooks, sync ------------------------------------------------------------

    def before_agent(self, state: AmemState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._session().__enter__()  # opened here, closed (ended_at) by after_agent
        return {EPISODE_KEY: session.id}

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        return handler(self._with_memories(request, self.recall(request)))

    def after_agent(self, state: AmemState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        self.finish(state)
        return None

    # -- async: the same work off the event loop -------------------------------------------

    async def abefore_agent(self, state: AmemState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.before_agent, state, runtime)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        hits = await asyncio.to_thread(self.recall, request)
        return await handler(self._with_memories(request, hits))

    async def aafter_agent(self, state: AmemState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        await asyncio.to_thread(self.finish, state)
        return None

    # -- the work -------------------------------------------------------------------------

    def recall(self, request: ModelRequest[Any]) -> list[Hit]:
        """The memories for this model call, logged as reads of the run's episode.

        What the run wrote itself is left out: it is in the conversation already, and reading
        it back would let the run's outcome credit its own notes.
        """
        query = conversation_query(request.messages)
        if not query.strip():
            return []
        episode_id = request.state.get(EPISODE_KEY)
        hits = self.graph.recall(query, self.k, self.scope)
        if not isinstance(episode_id, str):
            return hits
        shown = [h for h in hits if h.memory.episode != episode_id]
        shown = [h.model_copy(update={"rank": i + 1}) for i, h in enumerate(shown)]
        self._session(episode_id).log_reads(query, shown)
        return shown

    def _with_memories(self, request: ModelRequest[Any], hits: list[Hit]) -> ModelRequest[Any]:
        if not hits:
            return request
        block = f"{self.header}\n{render_hits(hits)}"
        base = request.system_prompt
        text = block if not base else f"{base}\n\n{block}"
        return request.override(system_message=SystemMessage(content=text))

    def finish(self, state: Mapping[str, Any]) -> None:
        """Remember the answer, record the outcome the callback gives, close the episode."""
        episode_id = state.get(EPISODE_KEY)
        if episode_id is None:
            return
        with self._session(episode_id) as session:
            answer = _final_answer(state.get("messages", []))
            if self.remember_answers and answer:
                question = conversation_query(state.get("messages", []))
                session.remember(answer, kind="episodic", context=question.splitlines()[0][:200])
            verdict = None if self.outcome is None else self.outcome(state)
            if verdict is not None:
                self._record(episode_id, success=bool(verdict))

    def record_outcome(
        self,
        run: Mapping[str, Any] | str,
        *,
        success: bool,
        score: float | None = None,
        detail: str = "",
    ) -> None:
        """Credit a finished run (its result, or its episode id) with an outcome known later."""
        episode_id = run if isinstance(run, str) else run.get(EPISODE_KEY)
        if not isinstance(episode_id, str):
            raise ValidationError(f"no {EPISODE_KEY!r} in this run: was the middleware on?")
        self._record(episode_id, success=success, score=score, detail=detail)

    def _record(
        self, episode_id: str, *, success: bool, score: float | None = None, detail: str = ""
    ) -> None:
        # an outcome reported already (by the report_outcome tool, say) stands
        with contextlib.suppress(ConflictError):
            self.graph.record_outcome(episode_id, success=success, score=score, detail=detail)


def _final_answer(messages: Sequence[AnyMessage]) -> str:
    """The text of the last AI message if it is an answer, not a tool call."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return "" if message.tool_calls else _text(message).strip()
    return ""
