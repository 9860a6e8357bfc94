"""The README's quick loop really leaves Neo4j out: the mark is there at collection time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_not_neo4j_deselects_every_neo4j_store_test() -> None:
    quick = _collected("-m", "not neo4j", "tests/contract/test_store_contract.py")
    everything = _collected("tests/contract/test_store_contract.py")
    assert quick, "the quick loop collected nothing"
    assert not [t for t in quick if "[neo4j" in t]
    assert any("[neo4j" in t for t in everything), "the full run must still hold the Neo4j side"
