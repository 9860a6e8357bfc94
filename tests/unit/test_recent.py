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


def test_recent_tells_what_leaves() -> None:
    left: list[int] = []
    recent: Recent[str, int] = Recent(2, lambda _: 1, left.append)
    for key, value in (("a", 1), ("b", 2), ("c", 3), ("b", 4)):
        recent.put(key, value)
    assert left == [1, 2]  # "a" forgotten, then "b"'s old value replaced
    recent.clear()
    assert sorted(left) == [1, 2, 3, 4] and recent.used == 0


def test_make_room_forgets_the_oldest_until_a_cost_fits() -> None:
    left: list[bytes] = []
    memo: Recent[str, bytes] = Recent(10, len, left.append)
    memo.put("a", b"123")
    memo.put("b", b"456")
    memo.put("c", b"789")
    memo.make_room(4)  # 9 + 4 > 10: "a" goes, 6 + 4 fits
    assert left == [b"123"] and memo.used == 6 and "b" in memo
