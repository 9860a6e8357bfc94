"""Which way a scoped vector search asks the Neo4j index (``stores/neo4j/plan.py``)."""

from __future__ import annotations

import pytest

from amem_graph.stores.neo4j.plan import (
    ANN_MAX,
    EXACT_SMALL,
    SCAN_MAX,
    SCAN_PER_HIT,
    first_vector_fetch,
)


@pytest.mark.parametrize(
    ("admitted", "total", "expected"),
    [
        (900_000, 1_000_000, 48),  # a wide scope: the unfiltered fetch
        (250_000, 1_000_000, 48),  # at the selective share: still wide
        (1_000, 100_000, None),  # small: scanned exactly
        (10_000, 1_000_000, None),  # 1% of 1M: a 4,800-hit fetch costs ~9x the scan
        (50_000, 1_000_000, 960),  # 5% of 1M: past the scan's cap, a scaled fetch
        (10_000, 100_000, 480),  # 10% of 100k: the scaled fetch is cheaper
        (25_000, 10_000_000, ANN_MAX),  # the fetch is capped
    ],
)
def test_first_fetch_by_share_and_size(admitted: int, total: int, expected: int | None) -> None:
    assert first_vector_fetch(48, admitted, total) == expected


def test_a_scope_is_scanned_while_the_scan_costs_less_than_the_fetch() -> None:
    """Between the small-scope size and the scan's cap, the choice follows the fetch's size:
    exact while at most ``SCAN_PER_HIT`` memories are scanned per hit the index would fetch."""
    total = 1_000_000
    for admitted in range(EXACT_SMALL + 1, SCAN_MAX + 1, 997):
        fetch = -(-48 * total // admitted)
        got = first_vector_fetch(48, admitted, total)
        assert (got is None) == (admitted <= fetch * SCAN_PER_HIT), admitted
        assert got is None or got == min(fetch, ANN_MAX)
    assert first_vector_fetch(48, SCAN_MAX + 1, 10 * total) is not None
