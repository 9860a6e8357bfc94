"""The schema file applied on connect, the vector index and the recorded embedder, and ``wipe``."""

from __future__ import annotations

import importlib.resources
from typing import Final, LiteralString

from neo4j import ManagedTransaction

from amem_graph.core.errors import EmbedderMismatchError, ValidationError
from amem_graph.stores.neo4j.ann import SCOPED_INDEX_PROPERTIES, server_has_scoped_index
from amem_graph.stores.neo4j.connection import Neo4jConnection, _Reader
from amem_graph.stores.neo4j.cypher import _cypher

SCHEMA_VERSION: Final = "1"
META_LABEL: Final = "AmemMeta"
META_ID: Final = "store"
VECTOR_INDEX: Final = "memory_embedding"
TEXT_INDEX: Final = "memory_text"
#: the properties the full-text index covers (``schema.cypher``); an index without the scope
#: (made by an earlier release) is rebuilt on connect
TEXT_FIELDS: Final = ["search_terms", "scope"]
#: seconds to wait for indexes to come ONLINE after creating them
INDEX_WAIT_SECONDS: Final = 300
_DELETE_CHUNK: Final = 10_000


def _is_scoped(properties: object) -> bool:
    return properties == SCOPED_INDEX_PROPERTIES


def load_schema() -> str:
    """The packaged ``amem_graph/cypher/schema.cypher``."""
    resource = importlib.resources.files("amem_graph").joinpath("cypher/schema.cypher")
    return resource.read_text(encoding="utf-8")


def schema_statements(text: str | None = None) -> tuple[list[LiteralString], list[LiteralString]]:
    """(statements to run on connect, statements that need ``$dims``) from the schema file."""
    body = "\n".join(
        line
        for line in (load_schema() if text is None else text).splitlines()
        if not line.lstrip().startswith("//")
    )
    now: list[LiteralString] = []
    deferred: list[LiteralString] = []
    for raw in body.split(";"):
        statement = " ".join(raw.split())
        if statement:
            # the packaged schema file is trusted Cypher text
            (deferred if "$dims" in statement else now).append(statement)
    return now, deferred


_Q_META_READ: Final = """
MATCH (s:AmemMeta {id: $meta})
RETURN s.embedder_name AS name, s.embedder_dims AS dims
"""
_Q_META_RECORD: Final = """
MERGE (s:AmemMeta {id: $meta})
ON CREATE SET s.schema_version = $schema_version
SET s._amem_lock = true
REMOVE s._amem_lock
WITH s, s.embedder_name AS name, s.embedder_dims AS dims
SET s.embedder_name = coalesce(name, $name), s.embedder_dims = coalesce(dims, $dims)
RETURN name, dims
"""
_Q_VECTOR_INDEX: Final = (
    "SHOW INDEXES YIELD name, properties, options WHERE name = $name RETURN properties, options"
)
_Q_WIPE_CHUNK: Final = "MATCH (n) WITH n LIMIT $chunk DETACH DELETE n RETURN count(*) AS n"


class Neo4jSchema(Neo4jConnection):
    """Schema and embedder: what a connection applies and records before data arrives."""

    def _apply_schema(self) -> None:
        statements, _ = schema_statements()

        def run() -> None:
            with self._session() as session:
                rec = session.run(
                    "SHOW FULLTEXT INDEXES YIELD name, properties WHERE name = $name "
                    "RETURN properties",
                    {"name": TEXT_INDEX},
                ).single()
                if rec is not None and list(rec["properties"]) != TEXT_FIELDS:
                    session.run(_cypher("DROP INDEX %I% IF EXISTS", I=TEXT_INDEX)).consume()
                for statement in statements:
                    session.run(statement).consume()
                session.run(
                    "CALL db.awaitIndexes($timeout)", {"timeout": INDEX_WAIT_SECONDS}
                ).consume()

        self._guard("applying the schema", run)

    def _recorded_embedder(self) -> tuple[str, int] | None:
        if self._embedder is not None:
            return self._embedder

        def read(tx: _Reader) -> tuple[str, int] | None:
            rec = tx.run(_Q_META_READ, {"meta": META_ID}).single()
            if rec is None or rec["name"] is None:
                return None
            return str(rec["name"]), int(rec["dims"])

        found = self._read(read)
        if found is not None:
            self._embedder = found
        return found

    def embedder_info(self) -> tuple[str, int] | None:
        return self._guard("reading the embedder", self._recorded_embedder)

    def ensure_embedder(self, name: str, dims: int) -> None:
        if not isinstance(name, str) or not name:
            raise ValidationError(f"embedder name must be a non-empty string, got {name!r}")
        if isinstance(dims, bool) or not isinstance(dims, int) or dims <= 0:
            raise ValidationError(f"embedder dims must be a positive int, got {dims!r}")

        def record(tx: ManagedTransaction) -> tuple[str, int] | None:
            rec = tx.run(
                _Q_META_RECORD,
                {
                    "meta": META_ID,
                    "schema_version": SCHEMA_VERSION,
                    "name": name,
                    "dims": dims,
                },
            ).single(strict=True)
            if rec["name"] is None:
                return None
            return str(rec["name"]), int(rec["dims"])

        def run() -> None:
            recorded = self._embedder or self._write(record)
            if recorded is not None and recorded != (name, dims):
                self._embedder = recorded
                raise EmbedderMismatchError(
                    f"the Neo4j store at {self.uri} was built with embedder {recorded[0]!r} "
                    f"({recorded[1]} dims), not {name!r} ({dims} dims)",
                    hint="open it with the embedder it was built with, or move it to another "
                    "model: `amem export --out g.jsonl`, then `amem --store NEW --embedder "
                    "NAME import g.jsonl --re-embed`",
                )
            self._ensure_vector_index(dims)
            self._embedder = (name, dims)

        self._guard("recording the embedder", run)

    def _ensure_vector_index(self, dims: int) -> None:
        """The vector index for ``dims``, made by the schema statement for this server: on
        Neo4j 2026.01+ one that also holds the scope (``ann.py``). An index of the right size
        is kept as it is, with or without the scope."""
        _, deferred = schema_statements()
        scoped = server_has_scoped_index(self.server_version)
        with self._session() as session:
            rec = session.run(_Q_VECTOR_INDEX, {"name": VECTOR_INDEX}).single()
            if rec is not None:
                config = (rec["options"] or {}).get("indexConfig") or {}
                if config.get("vector.dimensions") == dims:
                    self.__dict__["_scoped_index"] = _is_scoped(rec["properties"])
                    return
                # left over from another embedder (e.g. the meta node was deleted by hand)
                session.run(_cypher("DROP INDEX %I% IF EXISTS", I=VECTOR_INDEX)).consume()
            for statement in deferred:
                if statement.startswith("CYPHER 25 ") == scoped:
                    session.run(statement, {"dims": dims}).consume()
            session.run(
                "CALL db.awaitIndex($name, $timeout)",
                {"name": VECTOR_INDEX, "timeout": INDEX_WAIT_SECONDS},
            ).consume()
            self.__dict__["_scoped_index"] = scoped

    def _index_filters_scope(self) -> bool:
        """Whether the vector index holds the scope, so ``SEARCH`` can filter by it; read once
        per connection (a missing index holds nothing)."""
        known: bool | None = self.__dict__.get("_scoped_index")
        if known is None:

            def read(tx: _Reader) -> bool:
                rec = tx.run(_Q_VECTOR_INDEX, {"name": VECTOR_INDEX}).single()
                return rec is not None and _is_scoped(rec["properties"])

            known = self.__dict__["_scoped_index"] = self._read(read)
        return known

    def _dims(self) -> int:
        info = self._recorded_embedder()
        return 0 if info is None else info[1]

    def wipe(self, *, keep_indexes: bool = False) -> None:
        """Delete every node and relationship and drop the vector index; keep the rest of the
        schema. The embedder is forgotten, so the next ``ensure_embedder`` records anew.

        The full-text index is rebuilt empty: Lucene keeps counting deleted documents in its
        BM25 statistics until segments merge, so text scores after a wipe would otherwise
        differ from the same data loaded into a fresh store.

        ``keep_indexes=True`` deletes the data only, for a store about to be loaded again
        with an embedder of the same size (tests, benches). It is ~20x faster to wipe and
        load again: any schema change makes the server throw away its compiled plans, and
        compiling recall's statements anew costs about a second each. Text scores still
        match a fresh store's, because deleting every node empties every Lucene segment and
        Lucene drops empty segments with their statistics (checked by a test). A vector index
        this server would not build (unscoped where it can hold the scope) is dropped all
        the same, so the store opens as a fresh one would; so is one of another size when
        the next embedder is recorded.
        """

        def run() -> None:
            with self._session() as session:
                while True:
                    rec = session.run(_Q_WIPE_CHUNK, {"chunk": _DELETE_CHUNK}).single(strict=True)
                    if not rec["n"]:
                        break
                dropped = [VECTOR_INDEX, TEXT_INDEX]
                if keep_indexes:
                    found = session.run(_Q_VECTOR_INDEX, {"name": VECTOR_INDEX}).single()
                    fits = found is not None and _is_scoped(found["properties"]) == (
                        server_has_scoped_index(self.server_version)
                    )
                    dropped = [] if fits else [VECTOR_INDEX]
                for index in dropped:
                    session.run(_cypher("DROP INDEX %I% IF EXISTS", I=index)).consume()
            self._embedder = None
            self.__dict__.pop("_scoped_index", None)

        self._guard("wiping the store", run)
        self._apply_schema()
