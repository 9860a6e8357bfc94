"""Which ``AmemGraphError`` a Neo4j driver error becomes, so callers see one error family.

The driver can wrap the server's answer: a transaction function whose statement hit a
uniqueness constraint is rolled back, and the rollback re-raises the failed result as
``ResultFailedError`` with the ``ConstraintError`` only as its ``__cause__``. Mapped by its
own class that is a bare ``StoreError``, and a racing writer that lost (which callers handle as
a ``ConflictError``) would fail instead; so a wrapped error is mapped by what it wraps."""

from __future__ import annotations

from typing import Final

from neo4j import exceptions as neo_errors

from amem_graph.core.errors import (
    AmemGraphError,
    ConflictError,
    StoreError,
    StoreUnavailableError,
)

START_HINT: Final = (
    "start one with `scripts/neo4j-local start` (or `docker compose up -d --wait`), "
    "and check NEO4J_URI"
)
AUTH_HINT: Final = "check NEO4J_USERNAME/NEO4J_PASSWORD (or pass username=/password=)"
#: Neo4j's answer, even to the right password, for a while after repeated wrong ones
LOCKOUT_CODE: Final = "Neo.ClientError.Security.AuthenticationRateLimit"
LOCKOUT_HINT: Final = (
    "wait until the lock expires (dbms.security.auth_lock_time, 5 s by default), then retry "
    "with the right password; " + AUTH_HINT
)
_UNREACHABLE: Final = (
    neo_errors.ServiceUnavailable,
    neo_errors.SessionExpired,
    neo_errors.ConnectionAcquisitionTimeoutError,
)


def server_cause(exc: BaseException) -> neo_errors.Neo4jError | None:
    """The server error a driver-side wrapper (``ResultFailedError``) carries, if any."""
    seen: set[int] = set()
    cause = exc.__cause__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, neo_errors.Neo4jError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__
    return None


def retryable(exc: BaseException) -> bool:
    """Whether running the work again may succeed: a transient server error (a deadlock, data
    changed under a read) or a dropped connection, bare or wrapped by a failed result."""
    if isinstance(exc, neo_errors.ResultFailedError):
        cause = server_cause(exc)
        return cause is not None and cause.is_retryable()
    return isinstance(exc, (neo_errors.Neo4jError, neo_errors.DriverError)) and exc.is_retryable()


def mapped_error(what: str, exc: Exception) -> AmemGraphError | None:
    """``exc`` as the library's error (``what`` opens its message); ``None``: not the driver's."""
    if isinstance(exc, neo_errors.ResultFailedError):
        cause = server_cause(exc)
        if cause is not None:
            return mapped_error(what, cause)
    if isinstance(exc, neo_errors.Neo4jError):
        return _server_error(what, exc)
    if isinstance(exc, _UNREACHABLE):
        return StoreUnavailableError(f"{what}: Neo4j is unreachable: {exc}", hint=START_HINT)
    if isinstance(exc, (neo_errors.GqlError, OSError, TypeError, ValueError, OverflowError)):
        return StoreError(f"{what} failed: {exc}")  # the last three: the driver refusing a value
    return None


def _server_error(what: str, exc: neo_errors.Neo4jError) -> AmemGraphError:
    if isinstance(exc, neo_errors.ConstraintError):
        return ConflictError(f"{what} conflicts with stored data: {exc.message}")
    if isinstance(exc, neo_errors.AuthError):
        return StoreUnavailableError(
            f"{what}: Neo4j refused the credentials: {exc.message}", hint=AUTH_HINT
        )
    if isinstance(exc, neo_errors.DatabaseUnavailable):
        return StoreUnavailableError(
            f"{what}: the Neo4j database is unavailable: {exc.message}", hint=START_HINT
        )
    if isinstance(exc, neo_errors.TransientError):
        return ConflictError(
            f"{what}: Neo4j could not complete it now (lock contention or deadlock): {exc.message}",
            hint="retry",
        )
    if exc.code == LOCKOUT_CODE:
        return StoreUnavailableError(
            f"{what}: Neo4j locked the user out after repeated wrong passwords: {exc.message}",
            hint=LOCKOUT_HINT,
        )
    if exc.code == "Neo.ClientError.Database.DatabaseNotFound":
        return StoreUnavailableError(
            f"{what}: {exc.message}", hint="check NEO4J_DATABASE (or database=)"
        )
    return StoreError(f"{what} failed: {exc.message or exc}")
