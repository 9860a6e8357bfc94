"""LangGraph namespaces as amem_graph scopes, and item keys as sources and memory ids.

A namespace ``("users", "alice")`` is the scope ``lg:users.alice``. Scope names allow only
``[A-Za-z0-9_.:@/-]``, so every other character of a label is escaped as ``@<hex>:`` (``@`` and
``:`` included); LangGraph forbids ``.`` in labels, so ``.`` separates them and the mapping is
one-to-one: two namespaces never share a scope, and recall, which is filtered by scope inside
every path, can never hand one namespace another's items.

Version ``n`` of item ``key`` is memory ``lg-<digest of scope and key>-<n>``, from the source
``langgraph://users.alice/<key>``: the source is how a key finds its versions, and the memory's
provenance says which store item it holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from amem_graph.core.errors import ValidationError

SCOPE_PREFIX = "lg:"
SOURCE_PREFIX = "langgraph://"
MAX_SCOPE = 200
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_ESCAPED = re.compile(r"@([0-9a-f]+):")


def _escape(label: str) -> str:
    return "".join(c if c in _PLAIN else f"@{ord(c):x}:" for c in label)


def _unescape(text: str) -> str:
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def check_labels(namespace: Sequence[str]) -> tuple[str, ...]:
    """LangGraph's label rules: non-empty strings without ``.`` or NUL."""
    labels = tuple(namespace)
    for label in labels:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise ValidationError(
                f"namespace {labels!r}: label {label!r} must be a non-empty string "
                "without '.' or NUL"
            )
    return labels


def encode(namespace: Sequence[str]) -> str:
    """The namespace's labels, escaped and joined by ``.`` (``""`` for the empty prefix)."""
    return ".".join(_escape(label) for label in check_labels(namespace))


def decode(encoded: str) -> tuple[str, ...]:
    """Inverse of ``encode``."""
    return tuple(_unescape(part) for part in encoded.split(".")) if encoded else ()


def namespace_scope(namespace: Sequence[str]) -> str:
    """The scope holding a namespace's items: ``("users", "alice")`` -> ``lg:users.alice``."""
    if not tuple(namespace):
        raise ValidationError("a namespace needs at least one label")
    scope = SCOPE_PREFIX + encode(namespace)
    if len(scope) > MAX_SCOPE:
        raise ValidationError(
            f"namespace {tuple(namespace)!r} is {len(scope)} characters as a scope; "
            f"the limit is {MAX_SCOPE}",
            hint="use shorter labels (characters other than letters, digits, _ and - take 4+)",
        )
    return scope


def scope_namespace(scope: str) -> tuple[str, ...] | None:
    """The namespace a scope holds, or None for a scope that is not a namespace's."""
    if not scope.startswith(SCOPE_PREFIX):
        return None
    return decode(scope[len(SCOPE_PREFIX) :])


def under(encoded: str, prefix: str) -> bool:
    """Whether encoded namespace ``encoded`` is ``prefix`` or below it (whole labels only)."""
    return not prefix or encoded == prefix or encoded.startswith(prefix + ".")


def item_source(scope: str, key: str) -> str:
    """The source URI of a namespace's item: ``langgraph://users.alice/<key>``."""
    return f"{SOURCE_PREFIX}{scope[len(SCOPE_PREFIX) :]}/{key}"


def parse_source(uri: str) -> tuple[str, str] | None:
    """(scope, key) of an item source URI, or None for any other source."""
    if not uri.startswith(SOURCE_PREFIX) or "/" not in uri[len(SOURCE_PREFIX) :]:
        return None
    encoded, key = uri[len(SOURCE_PREFIX) :].split("/", 1)
    return SCOPE_PREFIX + encoded, key


#: hex digits of the scope-and-key digest in an item's memory ids
_DIGEST = 32
#: what every item memory id starts with
_ITEM_ID = "lg-"


def _digest(scope: str, key: str) -> str:
    return hashlib.sha256(f"{scope}\x00{key}".encode()).hexdigest()[:_DIGEST]


def item_stem(scope: str, key: str) -> str:
    """What the ids of an item's memories start with: ``lg-<digest of scope and key>-``."""
    return f"{_ITEM_ID}{_digest(scope, key)}-"


def item_memory_id(scope: str, key: str, version: int) -> str:
    """The memory holding version ``version`` (from 1) of an item."""
    return f"{item_stem(scope, key)}{version}"


def item_version(memory_id: str, scope: str, key: str) -> int | None:
    """The version a memory holds of this item, or None if it holds none of it."""
    stem = item_stem(scope, key)
    tail = memory_id[len(stem) :]
    return int(tail) if memory_id.startswith(stem) and tail.isdigit() else None


def memory_stem(memory_id: str) -> str | None:
    """The ``item_stem`` a memory id is made of, or None for an id no item version has."""
    stem, _, tail = memory_id.rpartition("-")
    if memory_id.startswith(_ITEM_ID) and tail.isdigit() and len(stem) == len(_ITEM_ID) + _DIGEST:
        return stem + "-"
    return None
