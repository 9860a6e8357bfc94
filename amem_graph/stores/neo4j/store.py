"""The Neo4j store: the same ``GraphStore`` contract as ``LocalStore``, on a Neo4j 5.13+ server.

- Schema: ``amem_graph/cypher/schema.cypher`` (read with ``importlib.resources``) is applied on
  connect; the vector index, which needs the embedder's dimension, is created by
  ``ensure_embedder``. The embedder is recorded on one ``(:AmemMeta {id: 'store'})`` node.
- Writes: every ``apply`` is ONE managed write transaction. Rows are sent with UNWIND per label
  and per relationship type (labels and types are checked against ``amem_graph.core.schema`` before
  they reach a query; every value is a parameter). Any failure, including an edge whose
  endpoint does not exist, raises inside the transaction function, so nothing of the batch is
  committed.
- Reads run on READ sessions: managed READ transactions (``execute_read``) on a routing
  ``neo4j://`` driver, so a cluster sends them to readers and retries them there, each query
  auto-committed on a direct ``bolt://`` one; one bookmark manager per store, so a read sees
  the store's own writes (see ``_read``). Vector and text
  search apply the ``MemoryFilter`` inside the query and over-fetch from the index, growing the
  fetch until k admitted hits are found or the index is exhausted; vector search falls back to
  an exact scan of the admitted memories when the filter is selective, so a filter never
  starves a search. Recall's read is ``search_expand``: both index calls with the candidates'
  ranking fields, the seed choice and the first expansion hop in one query (a second hop is
  ``neighbourhood``, one query too).
- Errors: every driver exception is turned into an ``AmemGraphError`` (see ``_guard``).

Where Neo4j's property model differs from the embedded store's JSON (each refused with a
``ValidationError`` before anything is written, or noted): ``id`` cannot be a node prop nor
``key`` an edge prop (they identify the element); lists must hold one type and no nulls (ints
mixed with floats become floats); a prop set to None is removed rather than kept as null, so it
reads back absent (``props.get(name)`` is None either way).

Connecting needs only ``Neo4jStore.connect()``; ``wipe()`` empties a database (tests, benchmarks)
and ``raw_vector_query()`` is a bare vector index call, the floor benchmarks compare against.

One module per concern, each a part of ``Neo4jStore``: ``connection`` (driver, sessions, error
mapping), ``schema`` (schema file, vector index, embedder, wipe), ``writes`` (``apply``),
``bulk`` (``import_memories``, from columns; ``vectext`` formats its vectors),
``reads`` (lookups), ``search`` (index searches), ``hood`` (the expansion hop), ``expand``
(``search_expand``), ``transfer`` (whole-store reads); ``props`` and ``cypher`` hold the
property conversions and the shared Cypher text.
"""

from __future__ import annotations

import os

from neo4j import Driver

from amem_graph.core.errors import ValidationError
from amem_graph.stores.neo4j.bulk import Neo4jImport
from amem_graph.stores.neo4j.connection import open_driver
from amem_graph.stores.neo4j.expand import Neo4jExpand
from amem_graph.stores.neo4j.integrity import Neo4jIntegrity
from amem_graph.stores.neo4j.many import Neo4jSearchMany
from amem_graph.stores.neo4j.transfer import Neo4jTransfer


class Neo4jStore(Neo4jImport, Neo4jExpand, Neo4jSearchMany, Neo4jTransfer, Neo4jIntegrity):
    """``GraphStore`` on Neo4j 5.13+ (Community is enough). Open it with ``Neo4jStore.connect``."""

    backend = "neo4j"

    @classmethod
    def connect(
        cls,
        uri: str | None = None,
        *,
        username: str | None = None,
        password: str | None = None,
        database: str | None = None,
        driver: Driver | None = None,
        connect_timeout: float = 10.0,
    ) -> Neo4jStore:
        """Connect, check the server, apply the schema.

        Defaults come from ``NEO4J_URI`` (else bolt://127.0.0.1:7687), ``NEO4J_USERNAME`` (else
        ``neo4j``), ``NEO4J_PASSWORD`` (unset or empty: no authentication) and
        ``NEO4J_DATABASE`` (else the server's default), read when this is called. An injected
        ``driver`` is used as is and left open by ``close()``.
        """
        target = uri or os.environ.get("NEO4J_URI") or "bolt://127.0.0.1:7687"
        user = username or os.environ.get("NEO4J_USERNAME") or "neo4j"
        secret = password if password is not None else os.environ.get("NEO4J_PASSWORD")
        db = database or os.environ.get("NEO4J_DATABASE") or None
        if connect_timeout <= 0:
            raise ValidationError(f"connect_timeout must be positive, got {connect_timeout}")
        owns = driver is None
        if driver is None:
            driver = open_driver(target, user, secret, connect_timeout)
        store = cls(driver, uri=target, database=db, owns_driver=owns)
        try:
            # a server that accepts TCP but never answers (or a router that never resolves)
            # would keep the driver waiting for its acquisition timeout; bound the wait here
            deadline = max(2 * connect_timeout, connect_timeout + 5.0)
            store._within(deadline, lambda: store._check_server(user))
            store._apply_schema()
        except BaseException:
            store.close()
            raise
        return store
