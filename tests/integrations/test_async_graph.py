"""AsyncMemoryGraph: the same answers as the sync facade, computed off the event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Sequence

import pytest

from amem_graph import HashingEmbedder, MemoryGraph, NotFoundError, ValidationError
from amem_graph.memory.async_graph import DEFAULT_WORKERS, AsyncMemoryGraph

REQUEST = contextvars.ContextVar("request", default="none")


class GatedEmbedder(HashingEmbedder):
    """Blocks each query embedding until the event loop opens the gate: a recall that ran on
    the loop itself could never finish."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.seen: list[tuple[str, str]] = []

    def embed_query(self, text: str) -> list[float]:
        self.seen.append((threading.current_thread().name, REQUEST.get()))
        if not self.gate.wait(timeout=10):
            raise TimeoutError("the event loop never ran while recall waited")
        return super().embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return super().embed_documents(texts)


def test_recall_runs_in_a_worker_while_the_loop_stays_free(mg: MemoryGraph) -> None:
    embedder = GatedEmbedder()
    graph = MemoryGraph(mg.store, embedder)
    graph.remember("Deploys to eu-west need the ops-eu VPN profile", id="vpn")

    async def main() -> list[str]:
        amg = AsyncMemoryGraph(graph, workers=4)
        REQUEST.set("req-7")
        pending = asyncio.ensure_future(amg.recall("eu-west deploy vpn", k=3))
        await asyncio.sleep(0.05)
        assert not pending.done()  # recall is parked in its worker...
        embedder.gate.set()  # ...and only the loop, still running, can release it
        hits = await pending
        return [h.memory.id for h in hits]

    assert asyncio.run(main()) == ["vpn"]
    assert embedder.seen and all(name.startswith("amem-async") for name, _ in embedder.seen)
    assert {ctx for _, ctx in embedder.seen} == {"req-7"}  # context variables travel along


def test_the_async_calls_answer_like_the_sync_ones(mg: MemoryGraph) -> None:
    async def main() -> None:
        amg = AsyncMemoryGraph(mg)
        await amg.remember_many(
            [
                {"content": "The staging DB rotates its password on Mondays", "id": "db"},
                {"content": "Use ops-eu VPN before deploy.sh", "id": "vpn", "agent": "ops"},
            ]
        )
        async with amg.episode(agent="deployer", task="deploy") as ep:
            hits = await ep.recall("vpn before deploy", k=2)
            sync_hits = mg.recall("vpn before deploy", k=2)
            await ep.remember("Deployed build 812", kind="episodic")
            await ep.outcome(success=True)
        assert [h.memory.id for h in hits] == [h.memory.id for h in sync_hits]
        assert (await amg.get("vpn")).confidence > 0.5
        gathered = await asyncio.gather(*(amg.recall("password", k=1) for _ in range(8)))
        assert {hits[0].memory.id for hits in gathered} == {"db"}
        assert (await amg.trace("vpn")).memory_id == "vpn"
        report = await amg.retract("vpn", reason="poisoned")
        assert "vpn" in report.retracted
        assert "vpn" not in [h.memory.id for h in await amg.recall("vpn", k=3)]
        await amg.restore(report.id)
        assert (await amg.agent("ops")).memory_count == 1
        with pytest.raises(NotFoundError):
            await amg.get("nope")
        with pytest.raises(ValidationError):
            await amg.recall("   ")
        await amg.close()

    asyncio.run(main())


def test_open_loads_off_the_loop(tmp_path: object) -> None:
    async def main() -> int:
        async with await AsyncMemoryGraph.open(":memory:", embedder="hashing") as amg:
            await amg.remember("one memory")
            stats = await amg.stats()
            return int(stats["counts"]["Memory"])

    assert asyncio.run(main()) == 1


class CountingEmbedder(HashingEmbedder):
    """Holds every query embedding until released, counting how many are held at once."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0

    def embed_query(self, text: str) -> list[float]:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        try:
            if not self.release.wait(timeout=10):
                raise TimeoutError("never released")
            return super().embed_query(text)
        finally:
            with self.lock:
                self.inside -= 1


def test_the_pool_bounds_how_many_calls_run_at_once(mg: MemoryGraph) -> None:
    embedder = CountingEmbedder()
    graph = MemoryGraph(mg.store, embedder)
    graph.remember("The staging DB rotates its password on Mondays", id="db")

    async def main() -> list[list[str]]:
        amg = AsyncMemoryGraph(graph, workers=2)
        assert amg.workers == 2
        pending = [asyncio.ensure_future(amg.recall("password rotation", k=1)) for _ in range(6)]
        for _ in range(100):  # until both workers hold a recall
            await asyncio.sleep(0.01)
            if embedder.inside == 2:
                break
        await asyncio.sleep(0.05)  # a third worker would have entered by now
        held = embedder.inside
        embedder.release.set()
        hits = await asyncio.gather(*pending)
        assert held == 2  # the other four waited their turn in the queue, not on the loop
        return [[h.memory.id for h in found] for found in hits]

    assert asyncio.run(main()) == [["db"]] * 6
    assert embedder.most == 2


def test_the_default_pool_is_the_measured_size(mg: MemoryGraph) -> None:
    assert AsyncMemoryGraph(mg).workers == DEFAULT_WORKERS == 8


@pytest.mark.parametrize("workers", [0, -3, 2.5, True, "8"])
def test_a_bad_pool_size_is_refused(mg: MemoryGraph, workers: object) -> None:
    with pytest.raises(ValidationError, match="workers"):
        AsyncMemoryGraph(mg, workers=workers)  # type: ignore[arg-type]
