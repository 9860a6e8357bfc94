"""The embedded store's options: given to ``LocalStore`` or through ``MemoryGraph.open``, they
reach the part they tune, and a bad or foreign one is refused by name before anything opens."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.core.errors import ValidationError
from amem_graph.stores.factory import LOCAL_OPTIONS
from amem_graph.stores.local import LocalStore
from amem_graph.stores.local.blocks import ADMIT_ON_SIGHT, SCOPE_BLOCKS_BYTES
from amem_graph.stores.local.mirror import _Mirror
from amem_graph.stores.local.search import SEARCH_BLAS_THREADS


def _scattered(mg: MemoryGraph, tenants: int, per: int) -> None:
    """``tenants`` agents' memories dealt round-robin in one scope: each agent's filter is
    selective and scattered whatever the order of the vectors (a scattered scope is sorted
    into one stretch instead: ``test_scattered_scopes_are_sorted_into_stretches``)."""
    mg.remember_many(
        [
            {"content": f"note {i} about topic {i % 7}", "agent": f"a{i % tenants}"}
            for i in range(tenants * per)
        ]
    )


def _kept_after_recalls(mg: MemoryGraph, tenants: int) -> int:
    """How many filters' blocks the mirror keeps once each was recalled often enough."""
    for _ in range(ADMIT_ON_SIGHT):
        for t in range(tenants):
            mg.recall("topic 3", k=3, agent=f"a{t}")
    mirror = mg.store._fresh_mirror()  # type: ignore[attr-defined]
    return len(mirror._blocks)


def test_the_default_budget_keeps_every_small_scattered_filter(tmp_path: Path) -> None:
    with MemoryGraph.open(tmp_path / "s.db", embedder=HashingEmbedder()) as mg:
        assert mg.store.scope_blocks_bytes == SCOPE_BLOCKS_BYTES  # type: ignore[attr-defined]
        _scattered(mg, tenants=12, per=20)
        assert _kept_after_recalls(mg, 12) == 12


def test_a_small_budget_reaches_the_mirror_and_keeps_fewer_blocks(tmp_path: Path) -> None:
    one_block = 32 * 256 * 4 + 20 * 8  # 20 rows padded to a row block, and their positions
    with MemoryGraph.open(
        tmp_path / "s.db", embedder=HashingEmbedder(dims=256), scope_blocks_bytes=3 * one_block
    ) as mg:
        _scattered(mg, tenants=12, per=20)
        mirror = mg.store._fresh_mirror()  # type: ignore[attr-defined]
        assert mirror._blocks.budget == 3 * one_block
        assert 1 <= _kept_after_recalls(mg, 12) <= 3
        hits = mg.recall("topic 3", k=3, agent="a5")
        assert hits and all(h.memory.agent == "a5" for h in hits)


def test_scattered_scopes_are_sorted_into_stretches(tmp_path: Path) -> None:
    """Tenants written round-robin: their vectors are sorted by scope at the first scoped
    recall, after which no tenant needs a kept block, and each recall stays in its scope
    with the hits a store whose tenants were written in runs gives."""
    runs = MemoryGraph.open(tmp_path / "runs.db", embedder=HashingEmbedder())
    dealt = MemoryGraph.open(tmp_path / "dealt.db", embedder=HashingEmbedder())
    items = [
        {"id": f"m{i}", "content": f"note {i} about topic {i % 7}", "scope": f"t{i % 12}"}
        for i in range(240)
    ]
    runs.remember_many(sorted(items, key=lambda item: item["scope"]))
    dealt.remember_many(items)
    with runs, dealt:
        for _ in range(ADMIT_ON_SIGHT):
            for t in range(12):
                got = dealt.recall("topic 3", k=3, scope=f"t{t}")
                want = runs.recall("topic 3", k=3, scope=f"t{t}")
                assert [(h.memory.id, h.score) for h in got] == [
                    (h.memory.id, h.score) for h in want
                ]
                assert got and all(h.memory.scope == f"t{t}" for h in got)
        mirror = dealt.store._fresh_mirror()  # type: ignore[attr-defined]
        assert mirror.sorted_upto == 240 and len(mirror._blocks) == 0


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "128"])
def test_a_bad_budget_is_refused_by_name(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValidationError, match="scope_blocks_bytes"):
        LocalStore(tmp_path / "s.db", scope_blocks_bytes=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "s.db").exists()


def test_a_neo4j_option_for_an_embedded_store_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="max_connection_pool_size"):
        MemoryGraph.open(tmp_path / "s.db", embedder=HashingEmbedder(), max_connection_pool_size=4)
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("threshold", [None, 500])
def test_the_ann_threshold_reaches_the_store_through_open(
    tmp_path: Path, threshold: int | None
) -> None:
    with MemoryGraph.open(
        tmp_path / "s.db", embedder=HashingEmbedder(), ann_threshold=threshold
    ) as mg:
        assert mg.store.ann_threshold == threshold  # type: ignore[attr-defined]


def _threads_in_vector_search(mg: MemoryGraph, monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """The BLAS thread counts seen while a recall scores its vectors."""
    seen: set[int] = set()
    scope_cosines = _Mirror.scope_cosines

    def watched(self: _Mirror, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
        seen.update(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return scope_cosines(self, q, pos)

    monkeypatch.setattr(_Mirror, "scope_cosines", watched)
    mg.remember_many([{"content": f"note {i} about topic {i % 7}"} for i in range(40)])
    assert mg.recall("topic 3", k=3)
    return seen


@pytest.mark.parametrize("threads", [1, 2, None])
def test_a_recall_scores_vectors_on_the_blas_threads_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int | None
) -> None:
    found = 3  # what numpy would use: not 1, so that a cap shows
    with (
        threadpool_limits(limits=found, user_api="blas"),
        MemoryGraph.open(tmp_path / "s.db", embedder=HashingEmbedder(), blas_threads=threads) as mg,
    ):
        assert mg.store.blas_threads == threads  # type: ignore[attr-defined]
        seen = _threads_in_vector_search(mg, monkeypatch)
        assert seen == {found if threads is None else threads}
        assert {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"} == {found}


def test_the_default_scores_on_one_blas_thread(tmp_path: Path) -> None:
    with MemoryGraph.open(tmp_path / "s.db", embedder=HashingEmbedder()) as mg:
        assert mg.store.blas_threads == SEARCH_BLAS_THREADS == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_bad_blas_threads_are_refused_by_name(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValidationError, match="blas_threads must be positive"):
        MemoryGraph.open(tmp_path / "s.db", embedder=HashingEmbedder(), blas_threads=bad)
    assert not (tmp_path / "s.db").exists()


def test_open_knows_every_option_the_embedded_store_takes() -> None:
    # open_store refuses what is not in LOCAL_OPTIONS: a new LocalStore keyword must join it
    taken = [p for p in inspect.signature(LocalStore).parameters if p != "path"]
    assert sorted(LOCAL_OPTIONS) == sorted(taken)
