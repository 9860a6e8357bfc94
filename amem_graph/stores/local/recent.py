"""A map bounded by the bytes of its values, forgetting the least recently used first.

The mirror keeps what each filter admits. A fleet with many tenants asks for many scopes in
turn; a cache cleared whole at 32 entries recomputed nearly every scope's mask once there were
more scopes than that (100 tenants: ~0.3 ms a recall at 100k memories). A bound in bytes keeps
many small masks and few big ones.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


class Recent(Generic[_K, _V]):
    """Entries whose ``size`` adds up to at most ``budget`` (the newest is always kept);
    reading or writing one makes it the most recent. ``gone`` sees each value that leaves
    (forgotten, replaced or cleared), so a caller can reuse what it holds."""

    def __init__(
        self, budget: int, size: Callable[[_V], int], gone: Callable[[_V], None] | None = None
    ) -> None:
        if budget < 1:
            raise ValueError(f"budget must be at least 1, not {budget}")
        self.budget = budget
        self._size = size
        self._gone = gone
        self._items: OrderedDict[_K, tuple[_V, int]] = OrderedDict()
        self.used = 0

    def get(self, key: _K) -> _V | None:
        entry = self._items.get(key)
        if entry is None:
            return None
        self._items.move_to_end(key)
        return entry[0]

    def put(self, key: _K, value: _V) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self._left(*old)
        cost = self._size(value)
        self._items[key] = (value, cost)
        self.used += cost
        while self.used > self.budget and len(self._items) > 1:
            self._forget_oldest()

    def make_room(self, cost: int) -> None:
        """Forget the least recently used entries until one of ``cost`` more fits."""
        while self._items and self.used + cost > self.budget:
            self._forget_oldest()

    def _forget_oldest(self) -> None:
        _, forgotten = self._items.popitem(last=False)
        self._left(*forgotten)

    def clear(self) -> None:
        items = list(self._items.values())
        self._items.clear()
        for value, cost in items:
            self._left(value, cost)

    def _left(self, value: _V, cost: int) -> None:
        self.used -= cost
        if self._gone is not None:
            self._gone(value)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items
