"""How the Neo4j store maps the driver's errors (``stores/neo4j/driver_errors.py``).

The errors are the driver's own classes, built the way the driver builds them from a server
FAILURE (``Neo4jError._hydrate_neo4j``); no server is needed to decide what they become."""

from __future__ import annotations

import pytest
from neo4j import exceptions as neo_errors

from amem_graph.core.errors import ConflictError, StoreError, StoreUnavailableError
from amem_graph.stores.neo4j.driver_errors import (
    mapped_error,
    retryable,
    server_cause,
)

CONSTRAINT = "Neo.ClientError.Schema.ConstraintValidationFailed"
DEADLOCK = "Neo.TransientError.Transaction.DeadlockDetected"


def server(code: str, message: str) -> neo_errors.Neo4jError:
    return neo_errors.Neo4jError._hydrate_neo4j(code=code, message=message)


def wrapped(cause: BaseException) -> neo_errors.ResultFailedError:
    """What a rolled-back transaction function raises: the failed result, the server's
    error as its cause (``Result.__iter__`` raises ``ResultFailedError(...) from exc``)."""
    try:
        raise neo_errors.ResultFailedError(None, "The result has failed.") from cause
    except neo_errors.ResultFailedError as exc:
        return exc


def test_a_constraint_error_wrapped_by_the_rollback_is_a_conflict() -> None:
    """The flake seen in CI: a racing writer's duplicate Outcome id came back as the
    rollback's ResultFailedError; it is a conflict the caller resolves, not a store failure."""
    exc = wrapped(server(CONSTRAINT, "Node(141) already exists with label `Outcome`"))
    mapped = mapped_error("writing a batch", exc)
    assert isinstance(mapped, ConflictError)
    assert "writing a batch conflicts with stored data" in str(mapped)
    assert "Node(141) already exists" in str(mapped)


def test_a_wrapped_deadlock_stays_a_retryable_conflict() -> None:
    mapped = mapped_error("writing a batch", wrapped(server(DEADLOCK, "cycle of locks")))
    assert isinstance(mapped, ConflictError)
    assert mapped.hint == "retry"


def test_the_cause_is_found_through_a_chain_and_a_cycle_ends() -> None:
    inner = server(CONSTRAINT, "dup")
    middle = RuntimeError("driver internals")
    middle.__cause__ = inner
    assert server_cause(wrapped(middle)) is inner
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a
    assert server_cause(a) is None


def test_a_wrapper_without_a_server_cause_is_a_store_error() -> None:
    exc = neo_errors.ResultFailedError(None, "The result has failed.")
    mapped = mapped_error("reading", exc)
    assert type(mapped) is StoreError
    assert str(mapped).startswith("reading failed: The result has failed.")


@pytest.mark.parametrize(
    ("exc", "kind", "text"),
    [
        (server(CONSTRAINT, "dup id"), ConflictError, "conflicts with stored data: dup id"),
        (server(DEADLOCK, "cycle"), ConflictError, "lock contention or deadlock"),
        (
            server("Neo.ClientError.Security.Unauthorized", "bad password"),
            StoreUnavailableError,
            "refused the credentials",
        ),
        (
            server("Neo.ClientError.Security.AuthenticationRateLimit", "too many"),
            StoreUnavailableError,
            "locked the user out",
        ),
        (
            server("Neo.ClientError.Database.DatabaseNotFound", "no such db"),
            StoreUnavailableError,
            "no such db",
        ),
        (server("Neo.ClientError.Statement.SyntaxError", "bad cypher"), StoreError, "bad cypher"),
        (neo_errors.ServiceUnavailable("no route"), StoreUnavailableError, "unreachable"),
        (OSError("broken pipe"), StoreError, "broken pipe"),
        (TypeError("cannot encode"), StoreError, "cannot encode"),
    ],
)
def test_each_driver_error_has_its_library_error(
    exc: Exception, kind: type[Exception], text: str
) -> None:
    mapped = mapped_error("doing it", exc)
    assert type(mapped) is kind
    assert text in str(mapped)


def test_an_error_that_is_not_the_drivers_is_left_alone() -> None:
    """A bug (KeyError, ...) propagates as itself rather than as a vague store error."""
    assert mapped_error("doing it", KeyError("x")) is None


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (server(DEADLOCK, "cycle"), True),
        (wrapped(server(DEADLOCK, "cycle")), True),
        (wrapped(server("Neo.TransientError.Transaction.Outdated", "read outdated data")), True),
        (neo_errors.ServiceUnavailable("gone"), True),
        (server(CONSTRAINT, "dup"), False),
        (wrapped(server(CONSTRAINT, "dup")), False),
        (neo_errors.ResultFailedError(None, "no cause"), False),
        (ValueError("not the driver's"), False),
    ],
)
def test_retryable_looks_through_a_failed_result(exc: BaseException, expected: bool) -> None:
    assert retryable(exc) is expected
