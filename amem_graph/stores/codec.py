"""JSON encoding of property maps with datetimes kept as datetimes (for SQLite and export)."""

from __future__ import annotations

import json
from datetime import datetime
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
