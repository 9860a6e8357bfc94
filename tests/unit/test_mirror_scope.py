"""The embedded mirror's scoped products (``scope_cosines``): kept scope blocks and tenants
sorted by scope give the same values as ``cosines``, and are never stale after a change."""

from __future__ import annotations

import numpy as np
import pytest

from amem_graph.stores.base import MemoryFilter
from amem_graph.stores.local.blocks import ADMIT_ON_SIGHT, ScopeBlocks
from amem_graph.stores.local.mirror import _Mirror
from amem_graph.stores.local.row_order import ROW_BLOCK

_DIMS = 8


def _mirror(n: int, seed: int = 0) -> _Mirror:
    mirror = _Mirror(_DIMS)
    rng = np.random.default_rng(seed)
    mirror.ids = [f"m{i}" for i in range(n)]
    mirror.vectors = rng.standard_normal((1024, _DIMS)).astype(np.float32)
    return mirror


def _query(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(_DIMS).astype(np.float32)


def test_scope_scores_are_cosines_bit_for_bit_first_and_kept() -> None:
    mirror = _mirror(1000)
    pos = np.arange(3, 1000, 17)  # 59 rows: selective
    assert mirror.selective(len(pos))
    for seed in range(ADMIT_ON_SIGHT + 2):  # gathered, then kept, then read from the block
        q = _query(seed)
        assert np.array_equal(mirror.scope_cosines(q, pos), mirror.cosines(q, pos))
    assert len(mirror._blocks) == 1


def test_a_change_drops_the_kept_block() -> None:
    mirror = _mirror(1000)
    pos = np.arange(0, 200, 2)
    q = _query(1)
    before = mirror.scope_cosines(q, pos)
    mirror.vectors[pos] *= -1  # as a write would, followed by its ``_changed``
    mirror._changed()
    after = mirror.scope_cosines(q, pos)
    assert np.array_equal(after, -before)
    assert np.array_equal(after, mirror.cosines(q, pos))


def test_scopes_of_one_size_are_kept_apart() -> None:
    mirror = _mirror(1000)
    a, b = np.arange(0, 1000, 10), np.arange(3, 1000, 10)
    q = _query(2)
    sa, sb = mirror.scope_cosines(q, a), mirror.scope_cosines(q, b)
    assert not np.array_equal(sa, sb)
    assert np.array_equal(mirror.scope_cosines(q, a), mirror.cosines(q, a))
    assert np.array_equal(mirror.scope_cosines(q, b), mirror.cosines(q, b))


def test_a_whole_store_scope_is_not_kept() -> None:
    mirror = _mirror(1000)
    pos = np.arange(1000)
    q = _query(3)
    assert np.array_equal(mirror.scope_cosines(q, pos), mirror.cosines(q, pos))
    assert len(mirror._blocks) == 0


def _seen(mirror: _Mirror, pos: np.ndarray, times: int = ADMIT_ON_SIGHT) -> np.ndarray:
    q = _query(5)
    for _ in range(times):
        scores = mirror.scope_cosines(q, pos)
    return scores


def test_a_scope_is_kept_only_once_seen_again_and_again() -> None:
    mirror = _mirror(1000)
    pos = np.arange(0, 1000, 10)
    _seen(mirror, pos, ADMIT_ON_SIGHT - 1)
    assert len(mirror._blocks) == 0  # a scope asked once or twice is only gathered
    _seen(mirror, pos, 1)
    assert len(mirror._blocks) == 1


def test_blocks_stay_within_their_budget() -> None:
    mirror = _mirror(1000)
    block_bytes = 112 * _DIMS * 4 + 100 * 8  # 100 rows padded to 112, and their positions
    mirror._blocks = ScopeBlocks(3 * block_bytes, ROW_BLOCK)
    for start in range(6):  # scattered: kept as blocks, not scored in place
        _seen(mirror, np.arange(start, 1000, 10))
    assert len(mirror._blocks) == 3  # the three most recent
    assert mirror._blocks._kept.used + mirror._blocks._spare_bytes <= 3 * block_bytes
    late = np.arange(5, 1000, 10)
    assert np.array_equal(mirror.scope_cosines(_query(4), late), mirror.cosines(_query(4), late))


def test_a_change_leaves_the_buffers_for_the_next_blocks() -> None:
    mirror = _mirror(1000)
    first = np.arange(0, 1000, 10)
    _seen(mirror, first)
    ((_, block),) = (entry for entry, _ in mirror._blocks._kept._items.values())
    mirror._changed()
    assert len(mirror._blocks) == 0
    other = np.arange(5, 1000, 10)  # 100 rows: the same padded size
    scores = _seen(mirror, other, 1)  # a spare fits: kept at first sight
    ((_, reused),) = (entry for entry, _ in mirror._blocks._kept._items.values())
    assert np.shares_memory(reused, block)  # no fresh pages for the new block
    assert not mirror._blocks._spares
    assert np.array_equal(scores, mirror.cosines(_query(5), other))


@pytest.mark.parametrize("dims", [8, 384, 10])
def test_a_scope_close_together_is_scored_in_place_bit_for_bit(dims: int) -> None:
    mirror = _Mirror(dims)
    rng = np.random.default_rng(dims)
    mirror.ids = [f"m{i}" for i in range(1000)]
    mirror.vectors = rng.standard_normal((1024, dims)).astype(np.float32)
    q = rng.standard_normal(dims).astype(np.float32)
    runs = [np.arange(37, 137), np.arange(900, 1000), np.arange(10, 210)[rng.random(200) < 0.7]]
    for pos in runs:
        assert mirror.selective(len(pos))
        assert np.array_equal(mirror.scope_cosines(q, pos), mirror.gathered(q, pos))
    assert len(mirror._blocks) == 0  # nothing copied or kept


def _row(i: int, scope: str, vector: np.ndarray, mid: str | None = None) -> dict[str, object]:
    """A memory's mirrored columns, as SQLite hands them to ``upsert``."""
    return {
        "id": mid or f"m{i}",
        "rid": i,
        "scope": scope,
        "embedding": vector.astype(np.float32).tobytes(),
        "status": "active",
        "agent": None,
        "task": None,
        "valid_from": 0.0,
        "valid_to": None,
        "created_at": 0.0,
        "importance": 0.5,
        "successes": 0.0,
        "failures": 0.0,
        "search_text": f"note {i} topic{i % 7} tenant{i % 10} " + "word " * (i % 5),
    }


def _dealt(tenants: int, n: int, dims: int = 16) -> tuple[_Mirror, np.ndarray]:
    """A mirror of ``n`` rows dealt round-robin to ``tenants`` scopes, and their vectors."""
    mirror = _Mirror(dims)
    vectors = np.random.default_rng(n).standard_normal((n, dims)).astype(np.float32)
    for i in range(n):
        mirror.upsert(_row(i, f"t{i % tenants}", vectors[i]))  # type: ignore[arg-type]
    return mirror, vectors


def _scope(mirror: _Mirror, name: str) -> np.ndarray:
    return mirror.admitted(MemoryFilter(scopes=(name,)))[1]


def test_scattered_tenants_are_sorted_by_scope_and_scored_in_place() -> None:
    """Ten tenants dealt round-robin: the first scoped search sorts the vectors by scope,
    after which each tenant is scored where it lies (nothing gathered or kept), with the
    values of the whole store's product, and every position keeps its own vector."""
    mirror, vectors = _dealt(10, 3000)
    q = _query(7).repeat(2)
    pos = _scope(mirror, "t3")
    assert mirror.sorted_upto == 0 and mirror.selective(len(pos))
    texts = ["topic3 tenant3", "word topic1", "note 17"]
    bm25 = {text: mirror.text_scores(text) for text in texts}
    scores = mirror.scope_cosines(q, pos)
    assert mirror.sorted_upto == 3000 and mirror.permuted
    for text in texts:  # the postings sorted with the vectors: the same scores, in place
        assert mirror.text_scores(text).tobytes() == bm25[text].tobytes()
        at = mirror.text_scores_at(text, pos)
        assert at.tobytes() == bm25[text][pos].tobytes()
    assert np.array_equal(scores, mirror.cosines(q, pos))
    assert np.array_equal(mirror.vectors_at(np.arange(3000)), vectors)
    rows = mirror.rows_of(pos)
    assert rows[-1] - rows[0] == len(pos) - 1  # one stretch
    for tenant in range(10):
        pos = _scope(mirror, f"t{tenant}")
        assert np.array_equal(mirror.scope_cosines(q, pos), mirror.cosines(q, pos))
        assert np.allclose(mirror.scope_cosines(q, pos), vectors[pos] @ q, atol=1e-5)
    assert len(mirror._blocks) == 0


def test_writes_after_the_sort_are_scored_with_it_and_sorted_in_later() -> None:
    """Rows written after the sort are their own rows at the end: a few of a tenant's are
    gathered beside its stretch, a row moved to another scope is found where it lies, and
    once an eighth of the store is new a scattered search sorts again."""
    mirror, vectors = _dealt(10, 2000)
    q = _query(8).repeat(2)
    mirror.scope_cosines(q, _scope(mirror, "t0"))
    assert mirror.sorted_upto == 2000
    rng = np.random.default_rng(3)
    extra = rng.standard_normal((400, 16)).astype(np.float32)
    for j in range(40):  # a few rows each: gathered, no new sort
        mirror.upsert(_row(2000 + j, f"t{j % 10}", extra[j]))  # type: ignore[arg-type]
    sights = len(mirror._blocks._sights)
    pos = _scope(mirror, "t0")
    assert np.array_equal(mirror.scope_cosines(q, pos), mirror.cosines(q, pos))
    assert len(mirror._blocks._sights) == sights  # its stretch and 4 new rows: not a block
    moved = rng.standard_normal(16).astype(np.float32)
    mirror.upsert(_row(5, "t2", moved, mid="m5"))  # m5 leaves t5 for t2, with a new vector
    pos = _scope(mirror, "t2")
    assert mirror.pos["m5"] in pos
    assert np.array_equal(mirror.scope_cosines(q, pos), mirror.cosines(q, pos))
    assert mirror.sorted_upto == 2000
    assert np.array_equal(mirror.vectors_at(np.array([mirror.pos["m5"]])), moved[None])
    for j in range(40, 400):  # now over an eighth of the store is new: sorted again
        mirror.upsert(_row(2000 + j, f"t{j % 10}", extra[j]))  # type: ignore[arg-type]
    for tenant in range(10):
        pos = _scope(mirror, f"t{tenant}")
        assert np.array_equal(mirror.scope_cosines(q, pos), mirror.cosines(q, pos))
    assert mirror.sorted_upto == 2400
    expected = np.concatenate([vectors, extra])
    expected[5] = moved
    assert np.array_equal(mirror.vectors_at(np.arange(2400)), expected)
    afresh = _Mirror(16)  # the same rows, never sorted
    for i, vector in enumerate(expected):
        afresh.upsert(_row(i, "t2" if i == 5 else f"t{i % 10}", vector))  # type: ignore[arg-type]
    for text in ["topic3 tenant2", "word", "note 5 tenant5"]:
        assert mirror.text_scores(text).tobytes() == afresh.text_scores(text).tobytes()
        for tenant in ("t2", "t5"):
            pos = _scope(mirror, tenant)
            at = mirror.text_scores_at(text, pos)
            assert at.tobytes() == afresh.text_scores(text)[pos].tobytes()
    both = np.union1d(_scope(mirror, "t1"), _scope(mirror, "t8"))  # two stretches apart
    assert np.array_equal(mirror.scope_cosines(q, both), mirror.cosines(q, both))


def test_a_store_already_in_scope_order_is_not_moved() -> None:
    """A scattered filter in a store whose rows are in scope order already (one scope):
    nothing is copied, and positions stay their own rows, so whole-store reads need no
    mapping; the filter is kept as a block."""
    mirror = _mirror(1000)
    vectors = mirror.vectors
    pos = np.arange(0, 1000, 10)
    assert np.array_equal(_seen(mirror, pos), mirror.cosines(_query(5), pos))
    assert mirror.sorted_upto == 1000 and not mirror.permuted
    assert mirror.vectors is vectors and len(mirror._blocks) == 1
    assert mirror.rows_of(pos) is pos
