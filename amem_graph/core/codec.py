"""JSON encoding of property maps with datetimes kept as datetimes (for SQLite and export)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any

_DT = "$dt"


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return {_DT: value.isoformat()}
    raise TypeError(f"cannot store a {type(value).__name__} as a property")


def _hook(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and _DT in obj:
        return datetime.fromisoformat(obj[_DT])
    return obj


def dumps(props: Any) -> str:
    """Compact JSON; datetimes tagged so they come back as datetimes."""
    return json.dumps(props, default=_default, separators=(",", ":"), ensure_ascii=False)


def loads(text: str) -> Any:
    """Inverse of ``dumps``."""
    return json.loads(text, object_hook=_hook)


def json_ready(value: Any) -> Any:
    """Python values as JSON-ready data: temporal values as ISO 8601 strings, durations as
    seconds, mappings and sequences converted inside."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value
