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

Outcome credit goes to what the run *used* (issue 21): a memory the run was shown (in its
prompt, or by the ``recall`` tool) and then *cited*, by naming its id in an AI message's text
or in a tool call's arguments (``trace``, ``report_outcome``'s ``used``), counts as used.
``after_agent`` keeps them in the state (``amem_used``, also in the run's result) and the
outcome passes them as ``used=``; a run that cited nothing falls back to the library's default
(each recall's top hit is presumed used). The header asks the model to cite ids for this.
Success raises the confidence of what the run used, failure lowers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage

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
    "confidence from past outcomes; prefer confident ones, and when you rely on one, cite its "
    "id in [brackets]:"
)
#: the agent-state key holding the ids the run was shown and cited (its outcome's ``used``)
USED_KEY = "amem_used"
#: runs whose shown memories are kept until their after_agent; the oldest go beyond it
MAX_OPEN_RUNS = 10_000

Outcome = Callable[[Mapping[str, Any]], bool | None]


class AmemState(AgentState[Any]):
    """Agent state with the current episode's id (readable in the run's result)."""

    amem_episode: NotRequired[Annotated[str | None, OmitFromInput]]
    amem_used: NotRequired[Annotated[list[str] | None, OmitFromInput]]


def _text(message: AnyMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


def _mentions(text: str, memory_id: str) -> bool:
    """Whether ``text`` names ``memory_id`` as a whole id (not inside a longer name)."""
    return re.search(rf"(?<![\w.:@/-]){re.escape(memory_id)}(?![\w.:@/-])", text) is not None


def cited_ids(messages: Sequence[AnyMessage], shown: set[str]) -> list[str]:
    """The memories of ``shown`` the run's AI messages name: in their text or in the arguments
    of a tool call other than ``recall``."""
    said = []
    for m in messages:
        if isinstance(m, AIMessage):
            said.append(_text(m))
            # a recall's query is a question, not a citation
            said += [json.dumps(tc["args"]) for tc in m.tool_calls if tc["name"] != "recall"]
    text = "\n".join(said)
    return sorted(mid for mid in shown if _mentions(text, mid))


def recalled_ids(messages: Sequence[AnyMessage]) -> set[str]:
    """The memory ids the ``recall`` tool returned in this conversation (its artifacts)."""
    out: set[str] = set()
    for m in messages:
        if isinstance(m, ToolMessage) and m.name == "recall" and isinstance(m.artifact, list):
            out.update(str(a["memory_id"]) for a in m.artifact if isinstance(a, dict))
    return out


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
        #: episode id -> the memories shown in its prompts (one instance serves many runs)
        self._shown: dict[str, set[str]] = {}
        self._lock = threading.Lock()

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
        return self.finish(state)

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
        return await asyncio.to_thread(self.finish, state)

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
        with self._lock:
            self._shown.setdefault(episode_id, set()).update(h.memory.id for h in shown)
            while len(self._shown) > MAX_OPEN_RUNS:  # runs that died before after_agent
                del self._shown[next(iter(self._shown))]
        return shown

    def _with_memories(self, request: ModelRequest[Any], hits: list[Hit]) -> ModelRequest[Any]:
        if not hits:
            return request
        block = f"{self.header}\n{render_hits(hits)}"
        base = request.system_prompt
        text = block if not base else f"{base}\n\n{block}"
        return request.override(system_message=SystemMessage(content=text))

    def used(self, state: Mapping[str, Any]) -> list[str] | None:
        """The memories this run was shown and cited, or None if it cited none (then the
        library's default credit rule applies)."""
        episode_id = state.get(EPISODE_KEY)
        messages = state.get("messages", [])
        with self._lock:
            shown = (
                set(self._shown.get(episode_id, set())) if isinstance(episode_id, str) else set()
            )
        return cited_ids(messages, shown | recalled_ids(messages)) or None

    def finish(self, state: Mapping[str, Any]) -> dict[str, Any] | None:
        """Remember the answer, record the outcome the callback gives, close the episode;
        the state update keeps what the run used (``amem_used``) for a later outcome."""
        episode_id = state.get(EPISODE_KEY)
        if not isinstance(episode_id, str):
            return None
        used = self.used(state)
        with self._lock:
            self._shown.pop(episode_id, None)
        with self._session(episode_id) as session:
            answer = _final_answer(state.get("messages", []))
            if self.remember_answers and answer:
                question = conversation_query(state.get("messages", []))
                session.remember(answer, kind="episodic", context=question.splitlines()[0][:200])
            verdict = None if self.outcome is None else self.outcome(state)
            if verdict is not None:
                self._record(episode_id, success=bool(verdict), used=used)
        return {USED_KEY: used}

    def record_outcome(
        self,
        run: Mapping[str, Any] | str,
        *,
        success: bool,
        score: float | None = None,
        detail: str = "",
        used: Sequence[str] | None = None,
    ) -> None:
        """Credit a finished run (its result, or its episode id) with an outcome known later.

        ``used`` defaults to what the run cited (the result's ``amem_used``); with an episode
        id and no ``used``, the library's default rule applies.
        """
        episode_id = run if isinstance(run, str) else run.get(EPISODE_KEY)
        if not isinstance(episode_id, str):
            raise ValidationError(f"no {EPISODE_KEY!r} in this run: was the middleware on?")
        if used is None and not isinstance(run, str):
            used = run.get(USED_KEY)
        self._record(episode_id, success=success, score=score, detail=detail, used=used)

    def _record(
        self,
        episode_id: str,
        *,
        success: bool,
        score: float | None = None,
        detail: str = "",
        used: Sequence[str] | None = None,
    ) -> None:
        # an outcome reported already (by the report_outcome tool, say) stands
        with contextlib.suppress(ConflictError):
            self.graph.record_outcome(
                episode_id, success=success, score=score, detail=detail, used=used
            )


def _final_answer(messages: Sequence[AnyMessage]) -> str:
    """The text of the last AI message if it is an answer, not a tool call."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return "" if message.tool_calls else _text(message).strip()
    return ""
