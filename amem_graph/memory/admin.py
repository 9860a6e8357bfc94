"""Store-level work behind the facade: opening a graph with the right embedder, moving a whole
graph in and out, the analyst pack and Neo4j administration.

The CLI (and any other door) calls these instead of touching a store, so the store protocol
stays below the facade.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from amem_graph.analyst import pack
from amem_graph.analyst.pack import AnalystQuery, QueryResult
from amem_graph.core.errors import NotFoundError, ValidationError
from amem_graph.embeddings import Embedder, HashingEmbedder, RecordedEmbedder, resolve_embedder
from amem_graph.memory.graph import MemoryGraph
from amem_graph.stores.base import GraphStore
from amem_graph.stores.factory import NEO4J_SCHEMES, is_neo4j_uri, open_store
from amem_graph.transfer import jsonl as transfer
from amem_graph.transfer.jsonl import Progress, TransferReport

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "NEO4J_SCHEMES",
    "AnalystQuery",
    "QueryResult",
    "TransferReport",
    "bind_query",
    "export_graph",
    "guess_values",
    "import_graph",
    "is_local_file",
    "is_neo4j_uri",
    "list_queries",
    "load_query",
    "neo4j_init",
    "open_graph",
    "parse_assignments",
    "run_cypher",
    "run_cypher_text",
]

DEFAULT_BATCH_SIZE = transfer.DEFAULT_BATCH_SIZE
list_queries = pack.list_queries
load_query = pack.load_query
parse_assignments = pack.parse_assignments
bind_query = pack.bind


def is_local_file(target: str) -> bool:
    """A path to an embedded store file (not ``:memory:``, not a Neo4j URI)."""
    return target != ":memory:" and not is_neo4j_uri(target)


def require_existing(target: str) -> None:
    """Refuse a store file that does not exist, for work that only makes sense on data."""
    if is_local_file(target) and not Path(target).expanduser().exists():
        raise NotFoundError(f"no store at {target}", hint="pass --store PATH or set AMEM_STORE")


def embedder_for(store: GraphStore, choice: str | None, no_embedding: bool) -> Embedder:
    """The embedder to open with: the store's own unless the user chose one.

    Without a choice, a store built with ``hashing`` keeps working without repeating
    ``--embedder hashing`` on every call.
    """
    recorded = store.embedder_info()
    if no_embedding and recorded is not None:
        return RecordedEmbedder(*recorded)
    if choice is None and recorded is not None:
        name, dims = recorded
        if name.startswith("hashing-"):
            return HashingEmbedder(dims)
        if name.startswith(("st:", "numpy:")):  # the same model directory, not MiniLM
            return resolve_embedder(name)
    return resolve_embedder(choice or "minilm")


def open_graph(
    target: str,
    choice: str | None,
    *,
    existing: bool = False,
    embeds: bool = True,
    warm_up: Callable[[Embedder], None] | None = None,
) -> MemoryGraph:
    """Open a MemoryGraph on a path, ``:memory:`` or a bolt/neo4j URI.

    ``existing`` refuses a store file that does not exist rather than creating one. Work that
    never embeds (``embeds=False``) uses the store's recorded embedder and loads no model;
    ``warm_up`` runs on the embedder once the store is open (a CLI shows a spinner there).
    """
    if existing:
        require_existing(target)
    store = open_store(target)
    try:
        embedder = embedder_for(store, choice, no_embedding=not embeds)
        mg = MemoryGraph(store, embedder)
        if embeds and warm_up is not None:
            warm_up(embedder)
        return mg
    except BaseException:
        store.close()
        raise


def export_graph(target: str, path: Path, *, progress: Progress | None = None) -> TransferReport:
    """Write the whole graph at ``target`` to ``path`` (lossless JSONL)."""
    require_existing(target)
    with closing(open_store(target)) as store:
        return transfer.export_graph(store, path, progress=progress)


def import_graph(
    target: str,
    file: str | Path,
    *,
    batch_size: int | None = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    re_embed: str | None = None,
) -> TransferReport:
    """Load a whole-graph export into the empty store at ``target`` (``None``: one transaction).

    ``re_embed`` names an embedder (``minilm``, ``hashing``, ...) whose vectors replace the
    file's: the way to move a graph to another model.
    """
    embedder = None if re_embed is None else resolve_embedder(re_embed)
    with closing(open_store(target)) as store:
        return transfer.import_graph(
            store, file, batch_size=batch_size, progress=progress, re_embed=embedder
        )


def _neo4j_target(target: str) -> str:
    if not is_neo4j_uri(target):
        raise ValidationError(
            f"this command needs a Neo4j store, not {target}",
            hint="pass --store bolt://HOST:PORT (or set AMEM_STORE)",
        )
    return target


def run_cypher(
    target: str,
    query: AnalystQuery,
    params: Mapping[str, Any],
    *,
    timeout: float = pack.DEFAULT_TIMEOUT,
) -> QueryResult:
    """Run one packaged analyst query on the Neo4j store at ``target``."""
    pack.bind(query, params)  # bad parameters fail before connecting
    with closing(open_store(_neo4j_target(target))) as store:
        return pack.run_query(store, query, params, timeout=timeout)


def guess_values(assignments: Mapping[str, str]) -> dict[str, Any]:
    """Values of ``--param`` for a query with no header to type them: JSON when they parse as
    JSON (``10``, ``true``, ``null``, ``["a"]``, ``"quoted"``), else the text as given."""
    out: dict[str, Any] = {}
    for key, raw in assignments.items():
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def run_cypher_text(
    target: str,
    text: str,
    params: Mapping[str, Any],
    *,
    name: str = "query",
    timeout: float = pack.DEFAULT_TIMEOUT,
) -> QueryResult:
    """Run the user's own Cypher on the Neo4j store at ``target`` if the server plans it as a
    read (``EXPLAIN`` query type ``r``); anything that would write is refused unrun."""
    cypher = text.strip().rstrip(";").strip()
    if not cypher:
        raise ValidationError(f"{name} holds no query")
    with closing(open_store(_neo4j_target(target))) as store:
        columns, rows = pack.run_read(store, cypher, params, timeout=timeout, what=name)
    return QueryResult(query=name, params=dict(params), columns=columns, rows=rows)


def neo4j_init(target: str, embedder_choice: str | None) -> dict[str, Any]:
    """Apply the schema to a Neo4j database (idempotent); its version, embedder and indexes.

    The vector index needs the embedder's dimension: it exists once the store records an
    embedder (its first write), or here when ``embedder_choice`` names one.
    """
    store = open_store(_neo4j_target(target))
    with closing(store):
        recorded = store.embedder_info()
        if embedder_choice is not None:
            chosen = resolve_embedder(embedder_choice)
            store.ensure_embedder(chosen.name, chosen.dims)  # a mismatch is an error
        elif recorded is not None:
            store.ensure_embedder(*recorded)  # makes sure its vector index exists
        embedder = store.embedder_info()
        indexes = pack.show_indexes(store)
        version = getattr(store, "server_version", None)
    return {
        "uri": target,
        "server_version": version,
        "embedder": None if embedder is None else {"name": embedder[0], "dims": embedder[1]},
        "indexes": indexes,
    }
