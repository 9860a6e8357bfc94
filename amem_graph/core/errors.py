"""The one exception tree of amem_graph.

Callers catch ``AmemGraphError`` and never see raw sqlite3, neo4j or pydantic errors::

    AmemGraphError
    ├── ValidationError      (also ValueError)   bad input; nothing was written
    ├── NotFoundError        (also KeyError)     an id that does not exist
    ├── ConflictError                            id reused with other content; busy store
    ├── EmbedderMismatchError                    store built with another embedder
    ├── StoreUnavailableError                    unreachable, bad credentials, old server
    └── StoreError                               any other storage failure, cause chained
"""

from __future__ import annotations

import pydantic


class AmemGraphError(Exception):
    """Root of every error raised by amem_graph; ``hint`` says what to do about it."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message} (hint: {hint})")

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} (hint: {self.hint})"


class ValidationError(AmemGraphError, ValueError):
    """Input was rejected before anything was stored."""


class NotFoundError(AmemGraphError, KeyError):
    """An id names nothing in the store."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return AmemGraphError.__str__(self)


class ConflictError(AmemGraphError):
    """A write contradicts what is stored (same id, different content) or lost a race."""


class EmbedderMismatchError(AmemGraphError):
    """The store was built with a different embedder name or vector dimension."""


class StoreUnavailableError(AmemGraphError):
    """The store cannot be reached or used: down, wrong credentials, unsupported version."""


class StoreError(AmemGraphError):
    """A storage operation failed for a reason not covered above; the cause is chained."""


__all__ = [
    "AmemGraphError",
    "ConflictError",
    "EmbedderMismatchError",
    "NotFoundError",
    "StoreError",
    "StoreUnavailableError",
    "ValidationError",
]


def format_pydantic_error(exc: pydantic.ValidationError, where: str) -> str:
    """One line per problem, naming the field: 'item 3: content: ...'."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "input"
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}")
    return f"{where}: " + "; ".join(parts)


def refuse_unless_positive(value: object, name: str, hint: str = "") -> None:
    """An option that must be a positive int (not a bool), refused by ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be positive: an int{hint}, not {value!r}")
