"""The embedded mirror's kept scope blocks (``scope_cosines``): the same values as
``cosines``, and never stale after a change."""

from __future__ import annotations

import numpy as np

from amem_graph.stores.local.mirror import _Mirror
from amem_graph.stores.local.recent import Recent

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
    for seed in range(3):  # the first call gathers, the next ones read the kept block
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
    a, b = np.arange(0, 100), np.arange(500, 600)
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


def test_blocks_stay_within_their_budget() -> None:
    mirror = _mirror(1000)
    block_bytes = 112 * _DIMS * 4 + 100 * 8  # 100 rows padded to 112, and their positions
    mirror._blocks = Recent(3 * block_bytes, lambda kept: int(kept[0].nbytes + kept[1].nbytes))
    q = _query(4)
    for start in range(0, 600, 100):
        mirror.scope_cosines(q, np.arange(start, start + 100))
    assert len(mirror._blocks) == 3  # the three most recent
    late = np.arange(500, 600)
    assert np.array_equal(mirror.scope_cosines(q, late), mirror.cosines(q, late))
