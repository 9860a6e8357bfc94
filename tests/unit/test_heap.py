"""``release_freed``: the freed small blocks a rebuild leaves go back to the system."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import pytest

from amem_graph.stores.local.heap import release_freed

_GLIBC = sys.platform == "linux" and platform.libc_ver()[0] == "glibc"


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


@pytest.mark.skipif(not _GLIBC, reason="malloc_trim is glibc's")
def test_freed_small_arrays_leave_the_process() -> None:
    arrays = [np.ones(64) for _ in range(300_000)]  # ~150 MB of small blocks
    kept = arrays[::50]  # a few live among them: the heap cannot shrink from its top
    del arrays
    before = _rss_mb()
    assert release_freed()
    assert _rss_mb() < before - 50
    assert len(kept) == 6000


def test_it_answers_whether_it_could() -> None:
    assert release_freed() is _GLIBC
