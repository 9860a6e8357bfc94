"""Read-only Cypher for analysts on Neo4j: READ transactions, values made JSON-ready.

The store's capability behind ``stores.base.CypherReader``; the pack itself (parsing, binding)
lives in ``amem_graph.analyst`` and never imports this store.

Whether a query only reads is the server's call, not a pattern's: each query is first sent as
``EXPLAIN`` (planned, not run) and must come back with query type ``r``; ``w`` (writes), ``rw``
(reads and writes) and ``s`` (schema or system) are refused before anything runs. The READ
transaction it then runs in is the second guard: the server refuses a write there too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from neo4j import ManagedTransaction, unit_of_work
from neo4j import exceptions as neo_errors
from neo4j import time as neo4j_time
from neo4j.graph import Node, Path, Relationship

from amem_graph.core.codec import json_ready
from amem_graph.core.errors import ValidationError

if TYPE_CHECKING:
    from amem_graph.stores.neo4j.connection import Neo4jConnection


def plain(value: Any) -> Any:
    """A driver value as JSON-ready data: Neo4j temporal values, nodes, relationships and paths
    converted, the rest as ``codec.json_ready``."""
    if isinstance(value, neo4j_time.DateTime | neo4j_time.Date | neo4j_time.Time):
        return value.to_native().isoformat()
    if isinstance(value, neo4j_time.Duration):
        return value.iso_format()
    if isinstance(value, Node):
        return {"labels": sorted(value.labels), **plain(dict(value))}
    if isinstance(value, Relationship):
        return {"type": value.type, **plain(dict(value))}
    if isinstance(value, Path):
        return [plain(n) for n in value.nodes]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return json_ready(value)


#: what EXPLAIN's query type means, for the refusal
QUERY_TYPES = {"w": "writes", "rw": "reads and writes", "s": "changes the schema or the system"}


def check_reads_only(
    tx: ManagedTransaction, cypher: str, params: dict[str, Any], what: str
) -> None:
    """Plan ``cypher`` with EXPLAIN (nothing runs) and refuse it unless its type is ``r``."""
    kind = tx.run(f"EXPLAIN {cypher}", params).consume().query_type
    if kind != "r":
        meaning = QUERY_TYPES.get(str(kind), "not a read")
        raise ValidationError(
            f"{what} tried to write: the server plans it as query type {kind!r} ({meaning}); "
            "analyst queries may only read",
            hint="remove CREATE / MERGE / SET / DELETE / REMOVE and schema or admin commands",
        )


def run_read(
    store: Neo4jConnection,
    cypher: str,
    params: Mapping[str, Any] | None = None,
    *,
    timeout: float,
    what: str = "query",
) -> tuple[list[str], list[list[Any]]]:
    """Run read-only Cypher in a READ transaction; (columns, JSON-ready rows).

    The store's session settings and error mapping apply; a query the server rejects (a write,
    a syntax error) or plans as anything but a read is the caller's mistake, so it becomes a
    ValidationError.
    """
    values = dict(params or {})

    @unit_of_work(timeout=timeout)
    def work(tx: ManagedTransaction) -> tuple[list[str], list[list[Any]]]:
        try:
            check_reads_only(tx, cypher, values, what)
            result = tx.run(cypher, values)  # values are parameters, never text
            columns = list(result.keys())
            return columns, [[plain(v) for v in record.values()] for record in result]
        except neo_errors.ClientError as exc:
            if exc.code == "Neo.ClientError.Statement.AccessMode":
                raise ValidationError(f"{what} tried to write; the server refused it") from exc
            if exc.code is not None and ".Statement." in exc.code:
                raise ValidationError(f"{what} was rejected: {exc.message}") from exc
            raise

    return store.read_transaction(what, work)
