"""bench_async's measuring parts: the loop-lateness ticker and the per-round ratio."""

from __future__ import annotations

import asyncio
import time

from bench_scripts import load

bench_async = load("bench_async.py")


def test_the_ticker_sees_a_blocked_loop_and_not_an_idle_one() -> None:
    async def blocked() -> None:
        time.sleep(0.06)  # a sync call on the loop: no tick can run meanwhile

    async def idle() -> None:
        await asyncio.sleep(0.06)

    stalled = asyncio.run(bench_async.lateness(blocked))
    free = asyncio.run(bench_async.lateness(idle))
    assert stalled.max >= 50.0
    assert free.p50 < stalled.max
    assert free.p50 <= free.p99 <= free.max


def test_the_ratio_is_the_median_of_each_rounds_pair() -> None:
    steady = bench_async.Run(8, seq=[100.0, 300.0, 200.0], conc=[50.0, 100.0, 200.0])
    assert steady.ratio() == 2.0  # pairs 2, 3, 1
    # a round slowed by other processes moves its pair, not the other rounds': the medians
    # of each column would give 100 / 300
    skewed = bench_async.Run(8, seq=[100.0, 100.0, 900.0], conc=[100.0, 900.0, 300.0])
    assert skewed.ratio() == 1.0  # pairs 1, 0.11, 3
