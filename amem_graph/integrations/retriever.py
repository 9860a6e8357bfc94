"""``AmemRetriever``: hybrid recall as a langchain-core ``BaseRetriever``.

Each ``Document`` is one memory: ``page_content`` its text, ``id`` its id, and ``metadata`` its
provenance (author, episode, task, source), trust (confidence, status) and how it was found
(score, rank). With an ``episode`` every retrieval is logged as READ edges, so the episode's
outcome credits what it retrieved. The scope is fixed at construction; ``k``, ``agent`` and
``task`` can also be given per call (``retriever.invoke(q, k=3)``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import Hit
from amem_graph.memory import EpisodeSession, MemoryGraph

#: per-call keyword arguments a retrieval accepts (``verbose`` comes from langchain itself)
CALL_OPTIONS = frozenset({"k", "agent", "task", "verbose"})


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """A hit's provenance and scores as plain JSON values (``Document.metadata``, artifacts)."""
    m = hit.memory
    return {
        "memory_id": m.id,
        "author": m.agent,
        "episode": m.episode,
        "task": m.task,
        "source": m.source,
        "scope": m.scope,
        "kind": m.kind,
        "confidence": m.confidence,
        "status": m.status,
        "created_at": m.created_at.isoformat(),
        "score": hit.score,
        "rank": hit.rank,
    }


def render_hits(hits: list[Hit]) -> str:
    """Hits as numbered lines a model can cite: id, text, who wrote it, how trusted."""
    if not hits:
        return "No memories found."
    return "\n".join(
        f"{h.rank}. [{h.memory.id}] {h.memory.content} (by {h.memory.agent or 'unknown'}, "
        f"confidence {h.memory.confidence:.2f})"
        for h in hits
    )


class AmemRetriever(BaseRetriever):
    """Recall from one scope of a ``MemoryGraph``, optionally inside an episode."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    graph: MemoryGraph = Field(exclude=True)
    k: int = Field(default=4, ge=1)
    scope: str | None = None
    agent: str | None = None
    task: str | None = None
    episode: EpisodeSession | None = Field(default=None, exclude=True)

    def _recall(self, query: str, options: dict[str, Any]) -> list[Document]:
        unknown = set(options) - CALL_OPTIONS
        if unknown:
            raise ValidationError(
                f"unknown retriever option(s) {sorted(unknown)}; known: k, agent, task"
            )
        k = int(options.get("k", self.k))
        agent = options.get("agent", self.agent)
        task = options.get("task", self.task)
        if self.episode is not None:
            scope = self.scope or self.episode.scope
            hits = self.episode.recall(query, k, scope=scope, agent=agent, task=task)
        else:
            hits = self.graph.recall(query, k, self.scope, agent=agent, task=task)
        return [
            Document(page_content=h.memory.content, id=h.memory.id, metadata=hit_metadata(h))
            for h in hits
        ]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **options: Any
    ) -> list[Document]:
        return self._recall(query, options)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **options: Any
    ) -> list[Document]:
        return await asyncio.to_thread(self._recall, query, options)
