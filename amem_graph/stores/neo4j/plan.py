"""How a vector search under a filter asks the index: exactly over a small scope, or the ANN
index with a first fetch scaled to how much of the store the scope is.

Neo4j 5's vector index cannot filter, so a scope holding 1% of the store finds about 1% of what
it asks for; before this, every such recall was starved, redone with a growing fetch, then
scanned exactly. The choice is made before the query from the scope's memory count, which is
cached for ``COUNT_TTL`` seconds: a stale count only picks a slower path, never other results
(the exact scan is complete, and a starved ANN fetch is still redone). An index that holds the
scope (Neo4j 2026.01+, ``ann.py``) filters by it itself and needs no plan.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Final

#: a filter whose scopes hold under this share of the store's memories is a selective one
SELECTIVE_SHARE: Final = 0.25
#: a selective scope of at most this many memories is scored exactly (every admitted cosine):
#: measured on this machine, an exact scan of 1k memories cost about one ANN call at recall's
#: depth, and 5k about four
EXACT_SMALL: Final = 2_000
#: a bigger selective scope is scanned exactly too when its scaled ANN fetch would ask for
#: more than 1/SCAN_PER_HIT hits per memory scanned: a large fetch costs far more per hit than
#: a scan per memory (measured, 2026-12-03: at 100k, 4,800 hits 130 ms against 1,000 scanned
#: in ~10 ms; at 1M, 4,848 hits 900 ms against 10,000 scanned in 100 ms, so a 1% scope of 1M
#: recalled in ~1.1 s through the index and ~130 ms exactly). 8 sits between the two sizes'
#: ratios (~3 and ~18); a wrong exact pick costs at most the scan of ``SCAN_MAX``
SCAN_PER_HIT: Final = 8
SCAN_MAX: Final = 20_000
#: the scaled first ANN fetch never grows past this (beyond it the exact scan is used)
ANN_MAX: Final = 16_384
#: seconds a scope's memory count is trusted
COUNT_TTL: Final = 10.0

_Q_SCOPE_COUNT: Final = """
CALL { MATCH (m:Memory) WHERE m.scope IN $scopes RETURN count(m) AS admitted }
CALL { MATCH (m:Memory) RETURN count(m) AS total }
RETURN admitted, total
"""


class ScopeCounts:
    """(memories in the scopes, memories in the store), per scope set, cached for a while."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, ...], tuple[float, int, int]] = {}

    def get(
        self, scopes: tuple[str, ...], count: Callable[[str, dict[str, object]], tuple[int, int]]
    ) -> tuple[int, int]:
        """The counts for ``scopes``; ``count(query, params)`` runs ``_Q_SCOPE_COUNT``."""
        key = tuple(sorted(set(scopes)))
        now = time.monotonic()
        with self._lock:
            hit = self._known.get(key)
        if hit is not None and now - hit[0] < COUNT_TTL:
            return hit[1], hit[2]
        admitted, total = count(_Q_SCOPE_COUNT, {"scopes": list(key)})
        with self._lock:
            if len(self._known) > 4096:
                self._known.clear()
            self._known[key] = (now, admitted, total)
        return admitted, total


def first_vector_fetch(first: int, admitted: int, total: int) -> int | None:
    """How many hits the ANN index is first asked for, ``first`` being the unfiltered fetch,
    when the filter's scopes hold ``admitted`` of ``total`` memories; None: scan exactly."""
    if admitted >= total * SELECTIVE_SHARE:
        return first
    if admitted <= EXACT_SMALL:
        return None
    fetch = math.ceil(first * total / admitted)
    if admitted <= min(SCAN_MAX, fetch * SCAN_PER_HIT):
        return None
    return min(fetch, ANN_MAX)
