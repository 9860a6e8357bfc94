"""bench/bench_notes.py runs, and its scripted model exercises retries and fallbacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_ingest_counts_calls_retries_and_fallbacks() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_notes.py"), "--n", "120",
         "--embedder", "hashing"],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    ).stdout  # fmt: skip
    assert "notes off" in out and "notes offline" in out and "fake LLM" in out
    header = next(line for line in out.splitlines() if line.startswith("operation"))
    columns = header.split()[1:]
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()
            if line.split() and line.split()[0] in ("enrich", "link")}  # fmt: skip
    enrich = dict(zip(columns, map(int, rows["enrich"]), strict=True))
    assert enrich["calls"] > 120 and enrich["retries"] > 0 and enrich["fallbacks"] > 0
    assert enrich["malformed"] > 0 and enrich["errors"] > 0
    link = dict(zip(columns, map(int, rows["link"]), strict=True))
    assert link["dropped_ids"] > 0  # the rank-like id the fake adds is never written
