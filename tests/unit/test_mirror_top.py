"""The embedded store's top-k cut on a whole score array, against a plain sort."""

from __future__ import annotations

import numpy as np
import pytest

from amem_graph.stores.local.mirror import _Mirror


def _plain_top(ids: list[str], scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The k best positive scores by score then id, the slow way."""
    pairs = [(ids[i], float(s)) for i, s in enumerate(scores.tolist()) if s > 0]
    return sorted(pairs, key=lambda p: (-p[1], p[0]))[:k]


@pytest.mark.parametrize("k", [1, 3, 10, 50, 400])
@pytest.mark.parametrize("share", [0.0, 0.02, 0.3, 0.5, 0.8, 1.0])
def test_top_of_matches_a_plain_sort(k: int, share: float) -> None:
    """Ties at the cut (few distinct values), zeros, and fewer positive scores than k."""
    rng = np.random.default_rng(k * 100 + int(share * 10))
    n = 300
    mirror = _Mirror(4)
    mirror.ids = [f"m{i:04d}" for i in rng.permutation(n)]  # id order unlike position order
    values = rng.integers(1, 6, n).astype(np.float32) / 4  # five values: many ties
    scores = np.where(rng.random(n) < share, values, 0).astype(np.float32)
    assert mirror.top_of(scores, k) == _plain_top(mirror.ids, scores, k)


@pytest.mark.parametrize("k", [1, 10, 400])
@pytest.mark.parametrize("share", [0.0, 0.3, 0.8])
def test_top_of_scores_at_some_positions_names_those_positions(k: int, share: float) -> None:
    """Scores aligned with ``pos`` (a selective filter's positions) rank the memories at
    those positions, as a whole-store array zero elsewhere would."""
    rng = np.random.default_rng(k + int(share * 10))
    n = 300
    mirror = _Mirror(4)
    mirror.ids = [f"m{i:04d}" for i in rng.permutation(n)]
    pos = np.flatnonzero(rng.random(n) < 0.4)
    values = rng.integers(1, 6, len(pos)).astype(np.float32) / 4
    scores = np.where(rng.random(len(pos)) < share, values, 0).astype(np.float32)
    whole = np.zeros(n, dtype=np.float32)
    whole[pos] = scores
    assert mirror.top_of(scores, k, pos) == _plain_top(mirror.ids, whole, k)
