"""``AsyncMemoryGraph``: the facade's calls as coroutines that never block the event loop.

Each call runs the synchronous ``MemoryGraph`` call in a bounded thread pool of its own. Both
stores are safe to share between threads: the embedded store serialises its SQLite connection
and mirrors under one lock, and the Neo4j driver pools connections and opens a session per
call. A profile of a Neo4j recall (``bench/bench_async.py --server-pid``, issue 14) found it
CPU-bound at both ends rather than waiting on the network: about 11 ms of client CPU (row
decoding, fusion) and 20 ms of the server's CPU each, one round trip. So concurrency pays by
keeping the server's cores and the client's busy at once, which a few threads in flight
already do. The driver's async API does not cut that CPU: on recall's statement alone it was
no faster than threads and held the loop longer, its decoding running on the loop
(``bench/bench_async_driver.py``), and it would need an async twin of the recall path. The
pool's size comes from the figures in ``bench/RESULTS.md``.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from amem_graph.core.config import MemoryGraphConfig
from amem_graph.core.errors import ValidationError
from amem_graph.core.models import Agent, Hit, Memory, MemoryInput, Outcome
from amem_graph.memory.episode import EpisodeSession
from amem_graph.memory.graph import MemoryGraph
from amem_graph.provenance.audit import AuditEvent
from amem_graph.provenance.retraction import RestoreReport, RetractionReport
from amem_graph.provenance.trace import Impact, Trace

P = ParamSpec("P")
T = TypeVar("T")

#: worker threads per graph, on either store: at load ~2 on 2 cores, 8 gave the best ratio of
#: 50 gathered recalls to 50 sequential on both stores (4 and 16 less); on a saturated machine
#: more threads only win CPU from other processes (``bench/RESULTS.md``, "Async (issue 14)")
DEFAULT_WORKERS = 8


class _Pool:
    """A thread pool that carries the caller's context variables into the worker."""

    def __init__(self, workers: int) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValidationError(f"workers must be a whole number >= 1, not {workers!r}")
        self.workers = workers
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="amem-async")

    async def run(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: ctx.run(fn, *args, **kwargs))


class AsyncEpisode:
    """``EpisodeSession`` with coroutine calls; ``async with`` opens and closes it."""

    def __init__(self, session: EpisodeSession, pool: _Pool) -> None:
        self.sync = session
        self._pool = pool

    @property
    def id(self) -> str:
        """The episode id (outcomes and traces name it)."""
        return self.sync.id

    async def __aenter__(self) -> AsyncEpisode:
        await self._pool.run(self.sync.__enter__)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._pool.run(self.sync.close)

    async def recall(self, query: str, k: int = 10, **options: Any) -> list[Hit]:
        """``EpisodeSession.recall``: recall and log the hits as READ edges."""
        return await self._pool.run(self.sync.recall, query, k, **options)

    async def remember(self, content: str, **fields: Any) -> Memory:
        """``EpisodeSession.remember``: a memory GENERATED_IN this episode."""
        return await self._pool.run(self.sync.remember, content, **fields)

    async def outcome(
        self, *, success: bool, score: float | None = None, detail: str = ""
    ) -> Outcome:
        """``EpisodeSession.outcome``: record how it ended and credit what it read."""
        return await self._pool.run(self.sync.outcome, success=success, score=score, detail=detail)


class AsyncMemoryGraph:
    """A ``MemoryGraph`` for asyncio code. ``await AsyncMemoryGraph.open(...)`` or wrap one.

    Method names and arguments are ``MemoryGraph``'s; ``sync`` is the wrapped graph. At most
    ``workers`` calls run at once (default ``DEFAULT_WORKERS``); the rest wait their
    turn without holding the loop.
    """

    def __init__(self, graph: MemoryGraph, *, workers: int | None = None) -> None:
        self.sync = graph
        self._pool = _Pool(DEFAULT_WORKERS if workers is None else workers)

    @property
    def workers(self) -> int:
        """How many calls may run at once."""
        return self._pool.workers

    @classmethod
    async def open(
        cls,
        target: str | os.PathLike[str] | None = None,
        *,
        embedder: object = "minilm",
        config: MemoryGraphConfig | None = None,
        workers: int | None = None,
        **store_options: Any,
    ) -> AsyncMemoryGraph:
        """``MemoryGraph.open`` in a thread (it may load a model or connect to a server)."""
        graph = await asyncio.to_thread(
            MemoryGraph.open, target, embedder=embedder, config=config, **store_options
        )
        return cls(graph, workers=workers)

    async def __aenter__(self) -> AsyncMemoryGraph:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the store and the worker threads; idempotent."""
        await self._pool.run(self.sync.close)
        self._pool.executor.shutdown(wait=False)

    def episode(
        self,
        agent: str | None = None,
        task: str | None = None,
        *,
        scope: str | None = None,
        id: str | None = None,
    ) -> AsyncEpisode:
        """``MemoryGraph.episode`` for ``async with``."""
        return AsyncEpisode(self.sync.episode(agent, task, scope=scope, id=id), self._pool)

    async def remember(self, content: str, **fields: Any) -> Memory:
        """``MemoryGraph.remember``."""
        return await self._pool.run(self.sync.remember, content, **fields)

    async def remember_many(self, items: Sequence[Mapping[str, Any] | MemoryInput]) -> list[Memory]:
        """``MemoryGraph.remember_many``: one transaction."""
        return await self._pool.run(self.sync.remember_many, items)

    async def recall(
        self, query: str, k: int = 10, scope: str | Sequence[str] | None = None, **options: Any
    ) -> list[Hit]:
        """``MemoryGraph.recall``."""
        return await self._pool.run(self.sync.recall, query, k, scope, **options)

    async def get(self, memory_id: str) -> Memory:
        """``MemoryGraph.get``."""
        return await self._pool.run(self.sync.get, memory_id)

    async def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """``MemoryGraph.get_many``."""
        return await self._pool.run(self.sync.get_many, memory_ids)

    async def find(self, scope: str | Sequence[str] | None = None, **options: Any) -> list[Memory]:
        """``MemoryGraph.find``."""
        return await self._pool.run(self.sync.find, scope, **options)

    async def record_outcome(self, episode_id: str, *, success: bool, **options: Any) -> Outcome:
        """``MemoryGraph.record_outcome``."""
        return await self._pool.run(
            self.sync.record_outcome, episode_id, success=success, **options
        )

    async def agent(self, agent_id: str) -> Agent:
        """``MemoryGraph.agent``."""
        return await self._pool.run(self.sync.agent, agent_id)

    async def trace(self, memory_id: str) -> Trace:
        """``MemoryGraph.trace``."""
        return await self._pool.run(self.sync.trace, memory_id)

    async def impact(self, memory_id: str) -> Impact:
        """``MemoryGraph.impact``."""
        return await self._pool.run(self.sync.impact, memory_id)

    async def retract(
        self, id: str | Sequence[str] | None = None, *, reason: str, **options: Any
    ) -> RetractionReport:
        """``MemoryGraph.retract``."""
        return await self._pool.run(self.sync.retract, id, reason=reason, **options)

    async def restore(self, retraction_id: str, **options: Any) -> RestoreReport:
        """``MemoryGraph.restore``."""
        return await self._pool.run(self.sync.restore, retraction_id, **options)

    async def forget(self, memory_id: str, **options: Any) -> AuditEvent:
        """``MemoryGraph.forget``."""
        return await self._pool.run(self.sync.forget, memory_id, **options)

    async def audit(self, **options: Any) -> list[AuditEvent]:
        """``MemoryGraph.audit``."""
        return await self._pool.run(self.sync.audit, **options)

    async def stats(self) -> dict[str, Any]:
        """``MemoryGraph.stats``."""
        return await self._pool.run(self.sync.stats)
