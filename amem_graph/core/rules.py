"""What the public API would accept, as checks over whole stored records.

``remember``, episodes and outcomes validate their arguments before writing; an imported file or
a damaged store bypasses those calls. Import refuses a record these rules flag, and ``check``
reports stored ones, so a value the API refuses (an id that is not a name, a NaN importance, a
negative success count, a READ rank that is not a whole number) cannot break later reads.
Each function returns the problems found, as short phrases naming the field; empty means fine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from amem_graph.core.models import Memory, check_name, content_hash

#: Memory fields that hold names (``check_name``); ``None`` is allowed except for id and scope
_MEMORY_NAMES = ("id", "scope", "agent", "task", "episode")


def _name(value: object) -> str | None:
    try:
        check_name(value)  # type: ignore[arg-type]
    except ValueError as exc:
        return str(exc)
    return None


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: object) -> bool:
    return _number(value) and math.isfinite(value)  # type: ignore[arg-type]


def _value_problems(where: str, value: Any) -> list[str]:
    """Any stored value: no NaN or infinity, text valid Unicode, times with a timezone."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if isinstance(item, float) and not math.isfinite(item):
            out.append(f"{where} is {item}, not a finite number")
        elif isinstance(item, str) and not _encodable(item):
            out.append(f"{where} is not valid Unicode (a lone surrogate)")
        elif isinstance(item, datetime) and item.utcoffset() is None:
            out.append(f"{where} is a datetime without a timezone")
    return out


def props_problems(where: str, props: Mapping[str, Any]) -> list[str]:
    """Every property of a node or edge passes ``_value_problems``."""
    return [p for key, value in props.items() for p in _value_problems(f"{where} {key}", value)]


def memory_problems(memory: Memory) -> list[str]:
    """A stored memory against what ``remember`` and the credit rules can produce."""
    out: list[str] = []
    for name in _MEMORY_NAMES:
        value = getattr(memory, name)
        if value is None and name not in ("id", "scope"):
            continue
        problem = _name(value)
        if problem:
            out.append(f"{name}: {problem}")
    if not memory.content.strip():
        out.append("content is empty")
    for name in ("content", "context", "source"):
        text = getattr(memory, name)
        if text is not None and not _encodable(text):
            out.append(f"{name} is not valid Unicode (a lone surrogate)")
    for name in ("tags", "keywords"):
        terms = getattr(memory, name)
        if any(not t.strip() or not _encodable(t) for t in terms):
            out.append(f"{name} holds an empty or non-Unicode term")
    if not (_finite(memory.importance) and 0.0 <= memory.importance <= 1.0):
        out.append(f"importance {memory.importance} is not a number within [0, 1]")
    for name in ("successes", "failures"):
        count = getattr(memory, name)
        if not (_finite(count) and count >= 0):
            out.append(f"{name} {count} is not a finite count >= 0")
    if memory.version < 1:
        out.append(f"version {memory.version} is below 1")
    if memory.content_hash != content_hash(memory.content):
        out.append("content_hash does not match the content")
    for name in ("created_at", "valid_from", "valid_to"):
        when = getattr(memory, name)
        if when is not None and when.utcoffset() is None:
            out.append(f"{name} has no timezone")
    if memory.embedding is not None and not all(math.isfinite(v) for v in memory.embedding):
        out.append("embedding has a non-finite value")
    return out


def node_problems(label: str, nid: str, props: Mapping[str, Any]) -> list[str]:
    """A node: its id a name, its props storable, an outcome's fields of their types."""
    where = f"{label} {nid!r}"
    out = [f"{where}: id: {p}" for p in [_name(nid)] if p]
    out += props_problems(where, props)
    if label == "Outcome":
        if not isinstance(props.get("success"), bool):
            out.append(f"{where}: success {props.get('success')!r} is not true or false")
        score = props.get("score")
        if score is not None and not (_finite(score) and 0.0 <= score <= 1.0):
            out.append(f"{where}: score {score!r} is not a number within [0, 1]")
    return out


def edge_problems(etype: str, src: str, dst: str, key: str, props: Mapping[str, Any]) -> list[str]:
    """An edge: endpoint ids names, props storable, a READ's rank and score usable by credit."""
    where = f"{etype} edge {src!r}->{dst!r}"
    out = [f"{where}: {end}: {p}" for end, v in (("src", src), ("dst", dst)) if (p := _name(v))]
    if key and (p := _name(key)):
        out.append(f"{where}: key: {p}")
    out += props_problems(where, props)
    if etype == "READ":
        rank = props.get("rank")
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            out.append(f"{where}: rank {rank!r} is not a whole number >= 1")
        if "score" in props and not _finite(props["score"]):
            out.append(f"{where}: score {props['score']!r} is not a finite number")
    if etype == "LINKED" and "weight" in props and not _finite(props["weight"]):
        out.append(f"{where}: weight {props['weight']!r} is not a finite number")
    return out
