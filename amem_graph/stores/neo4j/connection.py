"""The driver and its sessions: opening it, checking the server, READ and WRITE sessions, and
``_guard``, which turns every driver error into an ``AmemGraphError``."""

from __future__ import annotations

import contextlib
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar, cast

from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    Driver,
    GraphDatabase,
    ManagedTransaction,
    Neo4jDriver,
    Session,
)
from neo4j import exceptions as neo_errors

from amem_graph.core.errors import (
    AmemGraphError,
    StoreError,
    StoreUnavailableError,
    ValidationError,
)
from amem_graph.stores.base import GraphStore
from amem_graph.stores.neo4j.driver_errors import (
    AUTH_HINT,
    LOCKOUT_CODE,
    LOCKOUT_HINT,
    START_HINT,
    mapped_error,
    retryable,
)

#: how long a transaction function is run again after a failure worth retrying that the
#: driver's own retry did not take (the driver's ``max_transaction_retry_time`` is 30 s too)
RETRY_SECONDS: Final = 30.0

#: first Neo4j release with generally available vector indexes
MIN_SERVER_VERSION: Final = (5, 13)

NEO4J_SCHEMES: Final = (
    "bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://"
)  # fmt: skip
_VERSION = re.compile(r"^(\d+)\.(\d+)")

_T = TypeVar("_T")
#: what the store's read functions run their queries on: a managed READ transaction on a
#: routing driver, else a READ session with each query auto-committed (see ``Neo4jStore._read``)
_Reader = Session | ManagedTransaction


def open_driver(target: str, user: str, secret: str | None, connect_timeout: float) -> Driver:
    """A driver for ``target`` (not yet connected); a URI that is not Neo4j's is refused."""
    if not target.startswith(NEO4J_SCHEMES):
        raise ValidationError(
            f"{target!r} is not a Neo4j URI",
            hint="use bolt://host:port or neo4j://host:port (NEO4J_URI)",
        )
    try:
        return GraphDatabase.driver(
            target,
            auth=(user, secret) if secret else None,
            connection_timeout=connect_timeout,
            connection_acquisition_timeout=max(60.0, connect_timeout),
            notifications_min_severity="OFF",
            warn_notification_severity="OFF",
            user_agent="amem_graph",
        )
    except (neo_errors.GqlError, ValueError) as exc:
        raise StoreUnavailableError(
            f"cannot use Neo4j URI {target!r}: {exc}",
            hint="use bolt://host:port or neo4j://host:port (NEO4J_URI)",
        ) from exc


def server_release(version: str) -> tuple[int, int] | None:
    """(major, minor) of a ``dbms.components`` version ("5.26.30", "2026.08.1-aura"), or None."""
    match = _VERSION.match(version)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def check_server_version(version: str, uri: str = "") -> None:
    """Refuse servers without vector indexes (before 5.13); calendar versions (2025.x) pass."""
    parsed = server_release(version)
    if parsed is None or parsed < MIN_SERVER_VERSION:
        where = f" at {uri}" if uri else ""
        raise StoreUnavailableError(
            f"Neo4j {version or '(unknown version)'}{where} has no vector indexes; "
            f"amem_graph needs Neo4j {MIN_SERVER_VERSION[0]}.{MIN_SERVER_VERSION[1]} or later",
            hint="upgrade the server (scripts/neo4j-local and docker-compose.yml run 5.26)",
        )


class Neo4jConnection:
    """The driver, its sessions and the error mapping every store method runs under."""

    def __init__(
        self,
        driver: Driver,
        *,
        uri: str = "",
        database: str | None = None,
        owns_driver: bool = True,
    ) -> None:
        self._driver = driver
        self.uri = uri
        self.database = database
        self._owns_driver = owns_driver
        self._closed = False
        self._close_lock = threading.Lock()
        self._pool_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._embedder: tuple[str, int] | None = None
        self.server_version = ""
        #: shared by every session, so a read after a write sees it (causal consistency)
        self._bookmarks = driver.execute_query_bookmark_manager
        #: a ``neo4j://`` driver (a cluster, Aura, or one server that routes to itself): reads
        #: run as managed READ transactions, which the driver retries on another reader
        self.routing = isinstance(driver, Neo4jDriver)

    def _within(self, seconds: float, fn: Callable[[], None]) -> None:
        """Run ``fn`` in a helper thread; StoreUnavailableError if it takes over ``seconds``."""
        outcome: list[BaseException | None] = []

        def target() -> None:
            try:
                fn()
                outcome.append(None)
            except BaseException as exc:  # handed to the caller below
                outcome.append(exc)

        worker = threading.Thread(target=target, name="amem-neo4j-connect", daemon=True)
        worker.start()
        worker.join(seconds)
        if worker.is_alive() or not outcome:
            raise StoreUnavailableError(
                f"Neo4j at {self.uri} did not answer within {seconds:g} s", hint=START_HINT
            )
        if outcome[0] is not None:
            raise outcome[0]

    def _verify(self, user: str) -> None:
        try:
            self._driver.verify_connectivity()
        except neo_errors.AuthError as exc:
            raise StoreUnavailableError(
                f"Neo4j at {self.uri} refused the credentials of user {user!r}: {exc.message}",
                hint=AUTH_HINT,
            ) from exc
        except neo_errors.Neo4jError as exc:
            if exc.code == LOCKOUT_CODE:
                raise StoreUnavailableError(
                    f"Neo4j at {self.uri} locked user {user!r} out after repeated wrong "
                    f"passwords: {exc.message}",
                    hint=LOCKOUT_HINT,
                ) from exc
            raise StoreUnavailableError(
                f"cannot reach Neo4j at {self.uri}: {exc}", hint=START_HINT
            ) from exc
        except (neo_errors.GqlError, OSError) as exc:
            raise StoreUnavailableError(
                f"cannot reach Neo4j at {self.uri}: {exc}", hint=START_HINT
            ) from exc

    def _check_server(self, user: str) -> None:
        """Reachable, credentials accepted, and a server with vector indexes."""
        self._verify(user)

        def read(tx: _Reader) -> tuple[str, str]:
            rec = tx.run(
                "CALL dbms.components() YIELD name, versions, edition "
                "WHERE name = 'Neo4j Kernel' RETURN versions[0] AS version, edition"
            ).single()
            return ("", "") if rec is None else (str(rec["version"]), str(rec["edition"]))

        version, _edition = self._guard("checking the server", lambda: self._read(read))
        self.server_version = version
        check_server_version(version, self.uri)

    def _session(self, *, read: bool = False) -> Session:
        # notifications (e.g. "relationship type X does not exist yet" in an empty store) are
        # not errors; switched off so the driver does not log them as warnings
        return self._driver.session(
            database=self.database,
            bookmark_manager=self._bookmarks,
            notifications_min_severity="OFF",
            default_access_mode=READ_ACCESS if read else WRITE_ACCESS,
        )

    def _read(self, fn: Callable[[_Reader], _T]) -> _T:
        """Run the store's own read ``fn`` on a READ session (routed to a reader on a cluster).

        On a routing driver (``neo4j://``, ``neo4j+s://``) ``fn`` runs in ``execute_read``: a
        reader that leaves the cluster or a role change mid-read is retried by the driver on
        another member, and the session waits for this store's bookmarks first, so a read sees
        this store's own writes. On a direct ``bolt://`` driver (one server, no readers to
        pick) each query is auto-committed instead: a managed transaction costs two more round
        trips (BEGIN, COMMIT) per read, about 2 ms of a ~15 ms recall, and Neo4j reads are
        read-committed either way. A dropped pooled connection is retried once, at once (a
        server that is gone fails fast); a transient server error ("read outdated data" while
        writers commit, seen with eight threads) runs the read again in a managed READ
        transaction, retried as writes are (``_managed``).
        """
        if not self.routing:
            try:
                with self._session(read=True) as session:
                    return fn(session)
            except (neo_errors.SessionExpired, neo_errors.ServiceUnavailable):
                with self._session(read=True) as session:  # once more, on a fresh connection
                    return fn(session)
            except (neo_errors.Neo4jError, neo_errors.ResultFailedError) as exc:
                if not retryable(exc):
                    raise
        return self._managed(lambda session: session.execute_read(fn), read=True)

    def run_read_query(
        self, cypher: str, params: Mapping[str, Any], *, timeout: float, what: str = "query"
    ) -> tuple[list[str], list[list[Any]]]:
        """Read-only Cypher for analysts (``CypherReader``): a READ transaction, JSON-ready rows."""
        from amem_graph.stores.neo4j.analyst import run_read

        return run_read(self, cypher, params, timeout=timeout, what=what)

    def read_transaction(self, what: str, fn: Callable[[ManagedTransaction], _T]) -> _T:
        """Run ``fn`` in a managed READ transaction (the server refuses writes in it) with this
        store's session settings and error mapping (``what`` names it in errors); the analyst
        query runner uses it."""

        def run() -> _T:
            return self._managed(lambda session: session.execute_read(fn), read=True)

        return self._guard(what, run)

    def _write(self, fn: Callable[[ManagedTransaction], _T]) -> _T:
        return self._managed(lambda session: session.execute_write(fn), read=False)

    def _managed(self, run: Callable[[Session], _T], *, read: bool) -> _T:
        """``run`` (an ``execute_read``/``execute_write`` call) on a fresh session, again with
        backoff while it fails with a failed result that wraps a transient error. The driver
        retries a transaction function only on an error that is itself retryable; when a
        deadlock fails a statement, the rollback that follows can replace the deadlock with a
        ``ResultFailedError`` (a driver error, never retryable) that wraps it, and one of eight
        writers in CI lost its write to a deadlock the driver would otherwise have retried."""
        deadline: float | None = None
        delay = 0.1
        while True:
            try:
                with self._session(read=read) as session:
                    return run(session)
            except neo_errors.ResultFailedError as exc:
                now = time.monotonic()
                deadline = deadline or now + RETRY_SECONDS
                if not retryable(exc) or now >= deadline:
                    raise
            time.sleep(delay * random.uniform(0.8, 1.2))  # jitter: racing writers spread out
            delay = min(delay * 2, 2.0)

    def _guard(self, what: str, fn: Callable[[], _T]) -> _T:
        """Run ``fn``, turning every driver error into an ``AmemGraphError``."""
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return fn()
        except AmemGraphError:
            raise
        except Exception as exc:
            mapped = mapped_error(what, exc)
            if mapped is None:
                raise
            raise mapped from exc

    def _whole(self) -> GraphStore:
        """This part as the whole store (each part is only ever mixed into ``Neo4jStore``), for
        the ``stores.base`` helpers made of single-path calls."""
        return cast("GraphStore", self)

    def _concurrently(self, calls: Sequence[Callable[[], _T]]) -> list[_T]:
        """Run independent reads at once (each in its own session); results in call order."""
        if len(calls) < 2:
            return [call() for call in calls]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="amem-neo4j")
            pool = self._pool
        futures = [pool.submit(call) for call in calls[1:]]
        first = calls[0]()
        return [first, *(f.result() for f in futures)]

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._embedder = None
            if self._pool is not None:
                self._pool.shutdown(wait=False)
        if self._owns_driver:
            with contextlib.suppress(neo_errors.GqlError, OSError):  # a broken connection
                self._driver.close()

    def __repr__(self) -> str:
        return f"Neo4jStore({self.uri!r}, database={self.database!r})"
