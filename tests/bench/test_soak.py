"""A short smoke run of bench/soak.py on the embedded store: a mixed multi-agent workload with
a writer process killed mid-write, then ``check`` (the 10-minute runs are by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_scripts import load


@pytest.mark.slow
def test_a_short_soak_with_a_killed_writer_ends_with_a_clean_check(tmp_path: Path) -> None:
    soak = load("soak.py")
    figures = soak.soak("local", seconds=8, agents=3, fault_every=6, target=str(tmp_path / "s.db"))
    assert figures["undocumented_errors"] == {}
    assert figures["check_ok"], figures["check_problems"]
    assert any("killed writer" in f for f in figures["faults"])
    for op in ("recall", "remember", "outcome", "retract"):
        assert figures["operations"].get(op, 0) > 0, figures["operations"]
    assert figures["counts"]["Memory"] >= figures["operations"]["remember"]
    assert figures["rss_mb"]["start"] > 0 and len(figures["p95_ms_per_window"]) >= 1
