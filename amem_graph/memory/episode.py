"""``EpisodeSession``: one agent run, the unit of provenance for reads, writes and outcomes."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from amem_graph.core.models import Episode, Hit, Memory, Outcome, utcnow, valid_name
from amem_graph.core.schema import EPISODE
from amem_graph.memory.writes import episode_nodes
from amem_graph.stores.base import EdgeWrite, NodeWrite, WriteBatch

if TYPE_CHECKING:
    from amem_graph.memory.graph import MemoryGraph


class EpisodeSession:
    """One agent run. Created on entry (or resumed, if the id exists), closed on exit."""

    def __init__(
        self,
        graph: MemoryGraph,
        *,
        agent: str | None,
        task: str | None,
        scope: str | None,
        episode_id: str | None,
    ) -> None:
        self.graph = graph
        self.agent = None if agent is None else valid_name(agent, "agent")
        self.task = None if task is None else valid_name(task, "task")
        self.scope = valid_name(scope or graph.config.default_scope, "scope")
        self.id = valid_name(episode_id, "episode") if episode_id else f"ep-{uuid.uuid4().hex}"
        self.started_at = utcnow()
        self._open = False

    def __enter__(self) -> EpisodeSession:
        nodes, edges = episode_nodes(self.id, self.agent, self.task, self.scope, self.started_at)
        self.graph.store.apply(WriteBatch(nodes=nodes, edges=edges))
        self._open = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stamp the episode's end time."""
        if self._open:
            self._open = False
            self.graph.store.apply(
                WriteBatch(nodes=[NodeWrite(EPISODE, self.id, {"ended_at": utcnow()})])
            )

    def info(self) -> Episode:
        """The episode as stored."""
        node = self.graph.store.get_nodes(EPISODE, [self.id])[self.id]
        return Episode(
            id=self.id,
            agent=node.props.get("agent"),
            task=node.props.get("task"),
            scope=node.props.get("scope", self.scope),
            started_at=node.props["started_at"],
            ended_at=node.props.get("ended_at"),
        )

    def recall(self, query: str, k: int = 10, **options: Any) -> list[Hit]:
        """Recall in the episode's scope and log each hit as a READ edge (rank, score, query)."""
        options.setdefault("scope", self.scope)
        hits = self.graph.recall(query, k, **options)
        self.log_reads(query, hits)
        return hits

    def log_reads(self, query: str, hits: Sequence[Hit]) -> None:
        """Log hits the agent was shown as READ edges (one recall): for callers that page or
        filter recall's output, or read by key, and must log only what they showed."""
        if hits:
            at = utcnow()
            key = uuid.uuid4().hex
            self.graph.store.apply(
                WriteBatch(
                    edges=[
                        EdgeWrite(
                            "READ",
                            self.id,
                            h.memory.id,
                            {"rank": h.rank, "score": h.score, "query": query, "at": at},
                            key=key,
                        )
                        for h in hits
                    ]
                )
            )

    def remember(self, content: str, **fields: Any) -> Memory:
        """Remember a memory GENERATED_IN this episode and ATTRIBUTED_TO its agent."""
        fields.setdefault("agent", self.agent)
        fields.setdefault("task", self.task)
        fields.setdefault("scope", self.scope)
        return self.graph.remember(content, episode=self.id, **fields)

    def outcome(
        self,
        *,
        success: bool,
        score: float | None = None,
        detail: str = "",
        used: Sequence[str] | None = None,
    ) -> Outcome:
        """Record the episode's outcome and credit the memories it acted on.

        ``used`` names them (each must be a memory this episode recalled); they get full
        credit and what was only read gets none. Without it, each recall's top hit is taken
        as used (``MemoryGraph.credit_policy`` sets both rules).
        """
        return self.graph.record_outcome(
            self.id, success=success, score=score, detail=detail, used=used
        )
