"""Agent tools over one ``MemoryGraph``: ``remember``, ``recall``, ``report_outcome``, ``trace``.

The graph, scope, agent and task are fields of the tool, never arguments, so a model cannot
write as another agent or read another scope. The episode comes from the agent state that
``AmemMemoryMiddleware`` keeps (``amem_episode``, injected by LangGraph's ToolNode, which
strips any value a model forges) or from the tool's own ``episode``; inside one, recalls log
READ edges, memories are GENERATED_IN it and ``report_outcome`` credits what it used: the
recalled memories the model names in ``used`` (an id it never read is refused, and the model
reads why), else each recall's top hit.
``recall`` answers with content and an artifact: each hit's provenance (``hit_metadata``).
Store errors come back to the model as the tool's message (``ToolException``), not a crash.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

from amem_graph.core.errors import AmemGraphError
from amem_graph.core.models import MemoryKind
from amem_graph.integrations._deps import missing
from amem_graph.integrations.retriever import hit_metadata, render_hits
from amem_graph.memory import EpisodeSession, MemoryGraph

try:
    from langgraph.prebuilt import InjectedState
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing("langchain", exc) from exc

#: the agent-state key holding the current episode id (written by AmemMemoryMiddleware)
EPISODE_KEY = "amem_episode"
InjectedEpisode = Annotated[str | None, InjectedState(EPISODE_KEY)]


class _MemoryTool(BaseTool):
    """What every memory tool is bound to; the model sees none of it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    graph: MemoryGraph = Field(exclude=True)
    scope: str | None = None
    agent: str | None = None
    task: str | None = None
    episode: EpisodeSession | None = Field(default=None, exclude=True)
    handle_tool_error: bool = True

    def _session(self, injected: str | None) -> EpisodeSession | None:
        """The episode to act in: the agent state's, else the tool's own, else none."""
        if injected is not None:
            return self.graph.episode(self.agent, self.task, scope=self.scope, id=injected)
        return self.episode

    def _scope(self) -> str:
        return self.scope or self.graph.config.default_scope


def _guarded(fn: Any) -> Any:
    """Turn library errors into ToolExceptions, which the model reads as the tool's answer."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AmemGraphError as exc:
            raise ToolException(str(exc)) from exc

    return run


class RememberArgs(BaseModel):
    content: str = Field(description="the fact, lesson or outcome to keep, in one sentence")
    kind: MemoryKind = Field(default="semantic", description="semantic, episodic or procedural")
    tags: list[str] = Field(default_factory=list, description="a few topic tags")
    amem_episode: InjectedEpisode = None


class RememberTool(_MemoryTool):
    name: str = "remember"
    description: str = (
        "Store a fact or lesson in long-term memory so later runs can recall it. "
        "Use it for what this conversation established and future work will need."
    )
    args_schema: type[BaseModel] = RememberArgs

    @_guarded
    def _run(
        self,
        content: str,
        kind: MemoryKind = "semantic",
        tags: list[str] | None = None,
        amem_episode: str | None = None,
    ) -> str:
        session = self._session(amem_episode)
        fields: dict[str, Any] = {"kind": kind, "tags": tags or []}
        if session is not None:
            memory = session.remember(content, **fields)
        else:
            memory = self.graph.remember(
                content, agent=self.agent, task=self.task, scope=self.scope, **fields
            )
        return f"Remembered as {memory.id}."


class RecallArgs(BaseModel):
    query: str = Field(description="what you need to know, as a question or keywords")
    k: int = Field(default=5, ge=1, le=20, description="how many memories to return")
    amem_episode: InjectedEpisode = None


class RecallTool(_MemoryTool):
    name: str = "recall"
    description: str = (
        "Search long-term memory for facts, lessons and past outcomes relevant to a question. "
        "Returns numbered memories with their ids, authors and confidence."
    )
    args_schema: type[BaseModel] = RecallArgs
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    @_guarded
    def _run(
        self, query: str, k: int = 5, amem_episode: str | None = None
    ) -> tuple[str, list[dict[str, Any]]]:
        session = self._session(amem_episode)
        if session is not None:
            hits = session.recall(query, k, scope=self._scope())
        else:
            hits = self.graph.recall(query, k, self._scope())
        return render_hits(hits), [hit_metadata(h) for h in hits]


class OutcomeArgs(BaseModel):
    success: bool = Field(description="whether the task succeeded")
    used: list[str] | None = Field(
        default=None,
        description="ids of the recalled memories you acted on; they get the credit "
        "(omit if you cannot tell: then each recall's top hit is taken as used)",
    )
    score: float | None = Field(default=None, ge=0, le=1, description="how well, 0 to 1")
    detail: str = Field(default="", description="one line on what happened")
    amem_episode: InjectedEpisode = None


class ReportOutcomeTool(_MemoryTool):
    name: str = "report_outcome"
    description: str = (
        "Report whether the current task succeeded, and which recalled memories you acted on "
        "(used). Those gain confidence on success and lose it on failure; call it once, at "
        "the end."
    )
    args_schema: type[BaseModel] = OutcomeArgs

    @_guarded
    def _run(
        self,
        success: bool,
        used: list[str] | None = None,
        score: float | None = None,
        detail: str = "",
        amem_episode: str | None = None,
    ) -> str:
        session = self._session(amem_episode)
        if session is None:
            raise ToolException("there is no episode to report on: this run is not tracked")
        session.outcome(success=success, score=score, detail=detail, used=used)
        verdict = "success" if success else "failure"
        credited = (
            "each recall's top hit was credited"
            if used is None
            else f"credited {', '.join(used)}"
            if used
            else "credited none of what it read"
        )
        return f"Recorded {verdict} for episode {session.id}; {credited}."


class TraceArgs(BaseModel):
    memory_id: str = Field(description="the id of a memory, as shown by recall")


class TraceTool(_MemoryTool):
    name: str = "trace"
    description: str = (
        "Show where a memory came from (author, episode, task, sources, what it was derived "
        "from) and where it was used (episodes that read it and how they ended)."
    )
    args_schema: type[BaseModel] = TraceArgs

    @_guarded
    def _run(self, memory_id: str) -> str:
        memory = self.graph.get_many([memory_id]).get(memory_id)
        if memory is None or memory.scope != self._scope():
            raise ToolException(f"no memory {memory_id!r} in this agent's memory")
        trace = self.graph.trace(memory_id)
        up, down = trace.upstream, trace.downstream
        lines = [
            f"{memory.id}: {memory.content}",
            f"status {memory.status}, confidence {memory.confidence:.2f}, kind {memory.kind}",
            f"written by {', '.join(up.agent_ids) or 'unknown'}"
            f" in episode(s) {', '.join(up.episode_ids) or 'none'}"
            f" for task(s) {', '.join(up.task_ids) or 'none'}",
            f"sources: {', '.join(up.sources) or 'none'}",
            f"derived from: {', '.join(up.ancestor_ids) or 'nothing'}",
            f"read by {len(down.episode_ids)} episode(s); {len(down.outcome_ids)} outcome(s), "
            f"{len(down.failed_outcome_ids)} failed; {len(down.derived_ids)} memories derive "
            "from it",
        ]
        return "\n".join(lines)


def memory_tools(
    graph: MemoryGraph,
    *,
    scope: str | None = None,
    agent: str | None = None,
    task: str | None = None,
    episode: EpisodeSession | None = None,
) -> list[BaseTool]:
    """The four tools, bound to one graph, scope and agent."""
    bound: dict[str, Any] = {
        "graph": graph,
        "scope": scope,
        "agent": agent,
        "task": task,
        "episode": episode,
    }
    return [
        RememberTool(**bound),
        RecallTool(**bound),
        ReportOutcomeTool(**bound),
        TraceTool(**bound),
    ]
