"""Memories, nodes and edges as Neo4j properties and back, checked against its property rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import numpy as np

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import Memory
from amem_graph.core.text import analyze, search_text

#: property written (then removed) to take a node's write lock before a read-modify-write
_LOCK_PROP: Final = "_amem_lock"
#: marks a memory whose embedding is all zeros (cosine is undefined; its score is 0)
_ZERO_PROP: Final = "embedding_is_zero"
#: the memory's analysed text (``text.analyze``), what the full-text index sees
_TERMS_PROP: Final = "search_terms"
_INTERNAL_MEMORY_PROPS: Final = frozenset({_ZERO_PROP, _LOCK_PROP, _TERMS_PROP})
_MEMORY_TIMES: Final = ("created_at", "valid_from", "valid_to")
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_INT64 = (-(2**63), 2**63 - 1)


def _aware(value: datetime) -> datetime:
    """UTC; a naive time is read as local time, as ``datetime.timestamp()`` does."""
    return value.astimezone(UTC)


#: values the driver hands over as they are (no temporal value to convert)
_PLAIN: Final = frozenset({str, int, float, bool, type(None)})


def _native(value: Any) -> Any:
    """Driver temporal values to Python ones, recursively through lists."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:
        return [v if type(v) in _PLAIN else _native(v) for v in value]
    to_native = getattr(value, "to_native", None)
    if to_native is not None:
        return to_native()
    return value


def _scalar_kind(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise ValidationError(f"{where}: {value} does not fit a 64-bit integer")
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, datetime):
        return "datetime"
    raise ValidationError(f"{where}: a {type(value).__name__} cannot be stored as a property")


def _storable(props: Mapping[str, Any], where: str, reserved: str) -> dict[str, Any]:
    """Check props against Neo4j's property rules; lists must be homogeneous, no nulls inside.

    ``reserved`` (``id`` on nodes, ``key`` on relationships) identifies the element and cannot
    be set as an ordinary property.
    """
    out: dict[str, Any] = {}
    for key, value in props.items():
        at = f"property {key!r} of {where}"
        if key == reserved:
            raise ValidationError(f"{at}: {reserved!r} is reserved on Neo4j; use another name")
        if value is None:
            out[key] = None
        elif isinstance(value, list | tuple):
            kinds = {_scalar_kind(v, at) if v is not None else "null" for v in value}
            if "null" in kinds:
                raise ValidationError(f"{at}: Neo4j cannot store null inside a list")
            if kinds == {"int", "float"}:
                out[key] = [float(v) for v in value]
            elif len(kinds) > 1:
                raise ValidationError(f"{at}: Neo4j lists hold one type, got {sorted(kinds)}")
            else:
                out[key] = list(value)
        else:
            _scalar_kind(value, at)
            out[key] = value
    return out


def _unit_vector(values: Sequence[float], dims: int, what: str) -> tuple[str, bool]:
    """The float32 unit vector the embedded store keeps, as text for ``_VECTOR_EXPR``, and
    whether it is all zeros."""
    if len(values) != dims:
        raise ValidationError(f"{what} has a {len(values)}-dim embedding; the store uses {dims}")
    vec = np.asarray(values, dtype=np.float32)
    if not np.all(np.isfinite(vec)):
        raise ValidationError(f"{what} has a non-finite embedding value")
    norm = float(np.linalg.norm(vec))
    if norm > 0:
        vec = (vec / norm).astype(np.float32)
    return ",".join([f"{v:.9g}" for v in vec.tolist()]), norm == 0


def _memory_props(memory: Memory) -> dict[str, Any]:
    """Memory fields as node properties (None values included, so ``SET +=`` removes them)."""
    data = memory.model_dump(exclude={"embedding", "confidence"})
    data[_TERMS_PROP] = " ".join(analyze(search_text(memory)))
    for key in _MEMORY_TIMES:
        if isinstance(data.get(key), datetime):
            data[key] = _aware(data[key])
    return data


def _memory_row(props: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters for one memory: times as [epoch seconds, nanosecond] pairs, built into
    DateTime values by ``_SET_TIMES`` (the driver's own DateTime packing was slow)."""
    plain = {k: v for k, v in props.items() if k not in _MEMORY_TIMES}
    times = {key: _time_pair(props.get(key)) for key in _MEMORY_TIMES}
    return {"props": plain, "times": times}


def _time_pair(value: datetime | None) -> list[int] | None:
    """A time as the [epoch seconds, nanosecond] pair ``_SET_TIMES`` builds a DateTime from."""
    if value is None:
        return None
    micros = (_aware(value) - _EPOCH) // timedelta(microseconds=1)
    return [micros // 1_000_000, (micros % 1_000_000) * 1000]


def _memory_data(props: Mapping[str, Any]) -> dict[str, Any]:
    """Memory fields from a node's properties (times as DateTime or epoch microseconds)."""
    # every read of memories parses each of their ~27 properties: scalars skip the call
    data = {
        k: v if type(v) in _PLAIN else _native(v)
        for k, v in props.items()
        if k not in _INTERNAL_MEMORY_PROPS
    }
    for key in _MEMORY_TIMES:
        value = data.get(key)
        if type(value) is int:
            data[key] = _EPOCH + timedelta(microseconds=value)
        elif isinstance(value, datetime) and value.tzinfo is not None:
            data[key] = value.astimezone(UTC)
    return data


def _memory_from_props(props: Mapping[str, Any]) -> Memory:
    return Memory.model_validate(_memory_data(props))


def _node_props(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _native(v) for k, v in props.items() if k != "id"}


def _edge_props(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _native(v) for k, v in props.items() if k != "key"}
