"""The embedded mirror's kept scope blocks (``scope_cosines``): the same values as
``cosines``, and never stale after a change."""

from __future__ import annotations

import numpy as np
import pytest

from amem_graph.stores.local.blocks import ADMIT_ON_SIGHT, ScopeBlocks
from amem_graph.stores.local.mirror import _ROW_BLOCK, _Mirror

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
    mirror._blocks = ScopeBlocks(3 * block_bytes, _ROW_BLOCK)
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
