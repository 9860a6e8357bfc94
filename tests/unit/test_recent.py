"""The mirror's byte-bounded filter cache."""

from __future__ import annotations

import pytest

from amem_graph.stores.local.recent import Recent


def test_the_least_recently_used_goes_first_when_over_budget() -> None:
    memo: Recent[str, bytes] = Recent(10, len)
    memo.put("a", b"1234")
    memo.put("b", b"1234")
    assert memo.get("a") == b"1234"  # now "b" is the oldest
    memo.put("c", b"1234")  # 12 bytes > 10: "b" goes
    assert "b" not in memo and "a" in memo and "c" in memo
    assert memo.used == 8 and len(memo) == 2


def test_a_value_bigger_than_the_budget_is_still_kept_alone() -> None:
    memo: Recent[str, bytes] = Recent(4, len)
    memo.put("a", b"12")
    memo.put("big", b"123456789")
    assert list(memo._items) == ["big"] and memo.used == 9
    memo.put("small", b"1")
    assert list(memo._items) == ["small"] and memo.used == 1


def test_replacing_a_key_counts_its_new_size_only() -> None:
    memo: Recent[str, bytes] = Recent(10, len)
    memo.put("a", b"123456")
    memo.put("a", b"12")
    memo.put("b", b"12345678")
    assert memo.get("a") == b"12" and memo.used == 10
    memo.clear()
    assert len(memo) == 0 and memo.used == 0 and memo.get("a") is None


def test_a_budget_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="budget must be at least 1"):
        Recent(0, len)
