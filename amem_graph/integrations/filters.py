"""LangGraph's structured search filter, evaluated on an item's value.

The same rules as LangGraph's ``InMemoryStore`` (PostgreSQL JSONB semantics): a plain value
matches by equality, a nested dict matches field by field, a list matches element-wise, and
``$eq $ne $gt $gte $lt $lte`` compare. A comparison with a missing or non-numeric field is
false (SQL's NULL), where the reference store raises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from amem_graph.core.errors import ValidationError

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def check_filter(flt: Mapping[str, Any] | None) -> None:
    """Refuse unknown ``$`` operators up front, so a bad filter fails before any read."""
    for value in (flt or {}).values():
        if isinstance(value, Mapping):
            for key in value:
                if isinstance(key, str) and key.startswith("$") and key not in OPERATORS:
                    raise ValidationError(
                        f"unknown filter operator {key!r}; known: {', '.join(OPERATORS)}"
                    )
            check_filter(value)


def matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes the filter (every key must match)."""
    return all(_compare(value.get(key), wanted) for key, wanted in (flt or {}).items())


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_apply(actual, op, arg) for op, arg in wanted.items())
        return isinstance(actual, Mapping) and all(
            _compare(actual.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _apply(actual: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(actual == arg)
    if op == "$ne":
        return bool(actual != arg)
    left, right = _number(actual), _number(arg)
    if left is None or right is None:
        return False
    if op == "$gt":
        return left > right
    if op == "$gte":
        return left >= right
    if op == "$lt":
        return left < right
    if op == "$lte":
        return left <= right
    raise ValidationError(f"unknown filter operator {op!r}; known: {', '.join(OPERATORS)}")
