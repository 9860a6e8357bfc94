"""Every bad argument to a public call is a clear ValidationError and changes nothing stored.

The store is exported before and after each bad call; the two exports must be identical.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from amem_graph import MemoryGraph, ValidationError
from amem_graph.transfer.jsonl import export_graph

PLUS5 = timezone(timedelta(hours=5))
MINUS5 = timezone(timedelta(hours=-5))

#: (name, the bad call, words the message must contain)
CASES: list[tuple[str, Callable[[MemoryGraph], Any], str]] = [
    ("naive as_of", lambda mg: mg.recall("x", as_of=datetime(2024, 1, 1)), "as_of: timestamp"),
    (
        "naive outcome time",
        lambda mg: mg.record_outcome("ep", success=True, at=datetime(2024, 1, 1)),
        "no timezone",
    ),
    ("k as text", lambda mg: mg.recall("x", k="5"), "k must be a whole number"),
    ("k None", lambda mg: mg.recall("x", k=None), "k must be a whole number"),
    ("k float", lambda mg: mg.recall("x", k=2.5), "k must be a whole number"),
    ("k bool", lambda mg: mg.recall("x", k=True), "k must be a whole number"),
    ("trace a list", lambda mg: mg.trace(["seed"]), "memory id"),
    ("get a dict", lambda mg: mg.get({}), "memory id"),
    ("impact a dict", lambda mg: mg.impact({}), "memory id"),
    (
        "year 1 east of UTC",
        lambda mg: mg.recall("x", as_of=datetime(1, 1, 1, tzinfo=PLUS5)),
        "outside the range",
    ),
    (
        "year 9999 west of UTC",
        lambda mg: mg.audit(until=datetime(9999, 12, 31, 23, tzinfo=MINUS5)),
        "outside the range",
    ),
    (
        "remember at year 1",
        lambda mg: mg.remember("y", timestamp=datetime(1, 1, 1, tzinfo=PLUS5)),
        "outside the range",
    ),
    (
        "retract since year 1",
        lambda mg: mg.retract(agent="ana", since=datetime(1, 1, 1, tzinfo=PLUS5), reason="r"),
        "since: timestamp",
    ),
    ("lone surrogate", lambda mg: mg.remember("bad \ud800 text"), "not valid Unicode"),
    ("tags as a string", lambda mg: mg.remember("t", tags="abc"), "got the string 'abc'"),
    ("parents as a string", lambda mg: mg.remember("t", derived_from="seed"), "got the string"),
    ("id with a newline", lambda mg: mg.remember("t", id="ab\n"), "not a valid name"),
    ("agent with a newline", lambda mg: mg.remember("t", agent="ana\n"), "not a valid name"),
    ("scope with a newline", lambda mg: mg.recall("x", scope="s\n"), "not a valid name"),
    ("importance NaN", lambda mg: mg.remember("t", importance=float("nan")), "importance"),
]


def _export(mg: MemoryGraph, path: Path) -> list[str]:
    export_graph(mg.store, path)
    return path.read_text(encoding="utf-8").splitlines()[1:]  # the header carries a time


@pytest.mark.parametrize(("name", "call", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_clear_error_and_changes_nothing(
    mg: MemoryGraph, tmp_path: Path, name: str, call: Callable[[MemoryGraph], Any], words: str
) -> None:
    mg.remember("seed memory about the staging database", id="seed", agent="ana")
    with mg.episode(agent="bob", id="ep") as ep:
        ep.recall("staging database")
    before = _export(mg, tmp_path / "before.jsonl")
    with pytest.raises(ValidationError) as info:
        call(mg)
    assert words in info.value.message, info.value.message
    assert _export(mg, tmp_path / "after.jsonl") == before
