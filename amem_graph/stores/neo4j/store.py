"""The Neo4j store: the same ``GraphStore`` contract as ``LocalStore``, on a Neo4j 5.13+ server.

- Schema: ``amem_graph/cypher/schema.cypher`` (read with ``importlib.resources``) is applied on
  connect; the vector index, which needs the embedder's dimension, is created by
  ``ensure_embedder``. The embedder is recorded on one ``(:AmemMeta {id: 'store'})`` node.
- Writes: every ``apply`` is ONE managed write transaction. Rows are sent with UNWIND per label
  and per relationship type (labels and types are checked against ``amem_graph.core.schema`` before
  they reach a query; every value is a parameter). Any failure, including an edge whose
  endpoint does not exist, raises inside the transaction function, so nothing of the batch is
  committed.
- Reads run with READ routing, each query auto-committed (see ``_read``). Vector and text
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
"""

from __future__ import annotations

import contextlib
import importlib.resources
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, LiteralString, TypeVar

import numpy as np
import pydantic
from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    Driver,
    GraphDatabase,
    ManagedTransaction,
    Record,
    Session,
)
from neo4j import exceptions as neo_errors

from amem_graph.core.errors import (
    AmemGraphError,
    ConflictError,
    EmbedderMismatchError,
    NotFoundError,
    StoreError,
    StoreUnavailableError,
    ValidationError,
)
from amem_graph.core.models import Memory
from amem_graph.core.schema import (
    EDGE_TYPES,
    MEMORY,
    MEMORY_STATUSES,
    NODE_LABELS,
    check_identifier,
    check_label,
)
from amem_graph.core.seeding import TIE_REL, SeedPlan
from amem_graph.core.text import BM25_K1 as K1
from amem_graph.core.text import analyze, search_text
from amem_graph.stores.base import (
    LINEAGE_EDGES,
    SIBLING_EDGES,
    Direction,
    Edge,
    EdgeWrite,
    Expansion,
    MemoryFilter,
    MemoryUpdate,
    Neighbourhood,
    Node,
    NodeWrite,
    RankFields,
    SearchResult,
    WriteBatch,
    search_by_parts,
    search_expand_by_parts,
)

SCHEMA_VERSION: Final = "1"
META_LABEL: Final = "AmemMeta"
META_ID: Final = "store"
VECTOR_INDEX: Final = "memory_embedding"
TEXT_INDEX: Final = "memory_text"
#: first Neo4j release with generally available vector indexes
MIN_SERVER_VERSION: Final = (5, 13)
#: seconds to wait for indexes to come ONLINE after creating them
INDEX_WAIT_SECONDS: Final = 300

START_HINT: Final = (
    "start one with `scripts/neo4j-local start` (or `docker compose up -d --wait`), "
    "and check NEO4J_URI"
)
NEO4J_SCHEMES: Final = (
    "bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://"
)  # fmt: skip
AUTH_HINT: Final = "check NEO4J_USERNAME/NEO4J_PASSWORD (or pass username=/password=)"

#: property written (then removed) to take a node's write lock before a read-modify-write
_LOCK_PROP: Final = "_amem_lock"
#: marks a memory whose embedding is all zeros (cosine is undefined; its score is 0)
_ZERO_PROP: Final = "embedding_is_zero"
#: the memory's analysed text (``text.analyze``), what the full-text index sees
_TERMS_PROP: Final = "search_terms"
_INTERNAL_MEMORY_PROPS: Final = frozenset({_ZERO_PROP, _LOCK_PROP, _TERMS_PROP})
_MEMORY_TIMES: Final = ("created_at", "valid_from", "valid_to")
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

#: ``search`` asks each index for this many times the candidates wanted, in one query
FIRST_FETCH: Final = 1.25
#: Lucene's BM25 leaves out the constant (k1 + 1): scores are multiplied by it, so both stores
#: report the same value
_BM25_SCALE: Final = K1 + 1
#: what a search path's scores are multiplied by, per column prefix (vector, text)
_PATH_SCALE: Final = {"v_": 1.0, "t_": _BM25_SCALE}
#: searches: first over-fetch is max(k * _OVERFETCH, _MIN_FETCH) from the index, then x4
_OVERFETCH: Final = 2
_MIN_FETCH: Final = 32
#: when the ANN index under-delivers and at most this many memories are admitted, score them
#: all exactly instead of growing the ANN fetch
_EXACT_MAX: Final = 20_000
#: the ANN fetch never grows past this; beyond it the exact scan is used
_ANN_MAX: Final = 16_384
#: Lucene's default limit on clauses in one query is 1024
_MAX_TERMS: Final = 1000

_DELETE_CHUNK: Final = 10_000
#: ``neighbourhood`` lists lineage edges in this type order, as ``edges`` does
_LINEAGE_ORDER: Final = {t: i for i, t in enumerate(LINEAGE_EDGES)}
#: the memory property naming the same hub as each sibling edge
_SIBLING_PROPS: Final = {"GENERATED_IN": "episode", "FOR_TASK": "task"}
#: hubs with more members than this are walked through the time index, not read whole
_SMALL_HUB: Final = 200
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_VERSION = re.compile(r"^(\d+)\.(\d+)")
_INT64 = (-(2**63), 2**63 - 1)

_T = TypeVar("_T")
#: what the store's read functions run their queries on: a READ session, each query
#: auto-committed (see ``Neo4jStore._read``)
_Reader = Session


# -- Cypher text --------------------------------------------------------------------------------


def _cypher(template: LiteralString, **names: str) -> LiteralString:
    """Fill ``%NAME%`` slots of a query with labels or types that passed the schema checks.

    Each name is checked again as an identifier here, so nothing else can reach Cypher text.
    """
    text = str(template)
    for slot, name in names.items():
        for part in name.split("|"):  # "A|B" is a relationship-type alternative
            check_identifier(part, "label or relationship type")
        text = text.replace(f"%{slot}%", name)
    # mypy treats LiteralString as str; for stricter checkers this is the one trusted seam
    return text


def _filter_clause(flt: MemoryFilter) -> tuple[LiteralString, dict[str, Any]]:
    """A boolean Cypher expression over ``m`` reproducing ``MemoryFilter.admits``."""
    parts: list[LiteralString] = []
    params: dict[str, Any] = {}
    memberships: tuple[tuple[LiteralString, str, tuple[str, ...] | None], ...] = (
        ("m.scope IN $f_scopes", "f_scopes", flt.scopes),
        ("m.status IN $f_statuses", "f_statuses", flt.statuses),
        ("m.agent IN $f_agents", "f_agents", flt.agents),
        ("m.task IN $f_tasks", "f_tasks", flt.tasks),
    )
    for clause, name, values in memberships:
        if values is not None:
            parts.append(clause)
            params[name] = list(values)
    if flt.as_of is not None:
        parts.append("m.valid_from <= $f_as_of AND (m.valid_to IS NULL OR m.valid_to > $f_as_of)")
        params["f_as_of"] = _aware(flt.as_of)
    if not parts:
        return "true", params
    return "(" + " AND ".join(parts) + ")", params


#: float counters the in-place path adds to
_COUNTERS: Final = ("successes", "failures")
#: fields the in-place path may set (text, times and embeddings need the full path)
_SCALAR_FIELDS: Final = frozenset({"status", "successes", "failures", "importance", "version"})


def _is_scalar_update(update: MemoryUpdate) -> bool:
    return (
        set(update.changes) <= _SCALAR_FIELDS
        and set(update.increments) <= {"successes", "failures", "version"}
        and not set(update.changes) & set(update.increments)
    )


def _check_scalar_changes(update: MemoryUpdate) -> None:
    """The checks Memory validation would make, for the fields the in-place path sets."""
    status = update.changes.get("status")
    if status is not None and status not in MEMORY_STATUSES:
        raise ValidationError(f"update of memory {update.id!r}: unknown status {status!r}")
    for name in ("successes", "failures", "importance"):
        value = update.changes.get(name)
        if name in update.changes and (not isinstance(value, int | float) or value < 0):
            raise ValidationError(f"update of memory {update.id!r}: bad {name} {value!r}")
    version = update.changes.get("version")
    if "version" in update.changes and (not isinstance(version, int) or version < 1):
        raise ValidationError(f"update of memory {update.id!r}: bad version {version!r}")


def lucene_query(text: str) -> str:
    """A Lucene query that ORs the analysed terms of ``text``, each quoted and escaped.

    Terms come from ``text.analyze`` (the embedded store's BM25 analyzer) and the index holds
    each memory's terms under the 'whitespace' analyzer, so both stores score the same terms
    with the same BM25. Operators in the input (AND, OR, NOT, +, -, *, ~, :, ...) are plain
    text: no injection, no parse errors. Empty when ``text`` has no terms.
    """
    terms = list(dict.fromkeys(analyze(text)))[:_MAX_TERMS]
    return " OR ".join('"' + _LUCENE_SPECIAL.sub(r"\\\1", t) + '"' for t in terms)


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


# -- values -------------------------------------------------------------------------------------


def _aware(value: datetime) -> datetime:
    """UTC; a naive time is read as local time, as ``datetime.timestamp()`` does."""
    return value.astimezone(UTC)


def _native(value: Any) -> Any:
    """Driver temporal values to Python ones, recursively through lists."""
    if isinstance(value, list):
        return [_native(v) for v in value]
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
    times: dict[str, list[int] | None] = {}
    for key in _MEMORY_TIMES:
        value = props.get(key)
        if value is None:
            times[key] = None
        else:
            micros = (_aware(value) - _EPOCH) // timedelta(microseconds=1)
            times[key] = [micros // 1_000_000, (micros % 1_000_000) * 1000]
    return {"props": plain, "times": times}


def _memory_data(props: Mapping[str, Any]) -> dict[str, Any]:
    """Memory fields from a node's properties (times as DateTime or epoch microseconds)."""
    data = {k: _native(v) for k, v in props.items() if k not in _INTERNAL_MEMORY_PROPS}
    for key in _MEMORY_TIMES:
        value = data.get(key)
        if isinstance(value, int):
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


def _top(pairs: Iterable[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    return sorted(pairs, key=lambda p: (-p[1], p[0]))[:k]


def _pick_nearest(
    found: Mapping[str, list[tuple[int, str, str]]],
    limit: int,
    out: dict[str, list[tuple[str, str]]],
) -> None:
    """Per seed, the ``limit`` nearest distinct (other, hub) of its (gap, other, hub) list."""
    for mid, candidates in found.items():
        seen: set[str] = set()
        for _, other, hub in sorted(candidates):
            if other not in seen and len(seen) < limit:
                seen.add(other)
                out[mid].append((other, hub))


def _rank_fields(values: Sequence[Any]) -> RankFields:
    """``RankFields`` of the values ``_RANK_FIELDS`` projects."""
    micros, importance, successes, failures = values
    return RankFields(micros / 1e6, float(importance), float(successes), float(failures))


def _collect_hits(
    rows: Iterable[Sequence[Any]], fields: dict[str, RankFields], scale: float
) -> list[tuple[str, float]]:
    """(id, score x scale) of ``[id, score, <_RANK_FIELDS>]`` rows; their ranking fields go to
    ``fields``."""
    out: list[tuple[str, float]] = []
    for mid, score, *values in rows:
        fields[str(mid)] = _rank_fields(values)
        out.append((str(mid), float(score) * scale))
    return out


def _fetch_size(n: int) -> int:
    """How many hits a search path's first fetch asks its index for, to keep n."""
    return math.ceil(n * FIRST_FETCH)


def _first_fetch(
    rec: Record, prefix: str, n: int, fields: dict[str, RankFields]
) -> list[tuple[str, float]] | None:
    """The top n of a search path's first fetch (columns ``<prefix>raw``/``<prefix>hits``),
    scaled by ``_PATH_SCALE``, their fields added to ``fields``; None when the filter starved
    it and the index may hold more (the path must be redone with a growing fetch)."""
    hits = _top(_collect_hits(rec[f"{prefix}hits"], fields, _PATH_SCALE[prefix]), n)
    if len(hits) < n and rec[f"{prefix}raw"] >= _fetch_size(n):
        return None
    return hits


def _search_expand_args(
    q: list[float] | None, lucene: str, sizes: Mapping[str, int], plan: SeedPlan
) -> dict[str, Any]:
    """``_Q_SEARCH_EXPAND``'s parameters beside the filter's: each path's query, first fetch
    (``<prefix>n``) and size (``<prefix>k``), the plan, and the hop's limits."""
    return {
        "v_index": VECTOR_INDEX, "v_q": q, "v_k": sizes["v_"],
        "v_n": _fetch_size(sizes["v_"]),
        "t_index": TEXT_INDEX, "t_q": lucene, "t_k": sizes["t_"],
        "t_n": _fetch_size(sizes["t_"]),
        "t_scale": _BM25_SCALE, "rel": TIE_REL, "rrf_k": plan.rrf_k,
        "v_w": float(plan.vector_weight), "t_w": float(plan.text_weight),
        "n_seeds": plan.seeds, "n_fetch": plan.fetch,
        "limit": max(plan.limit, 0), "small": _SMALL_HUB,
    }  # fmt: skip


def _add_lineage(
    rows: Iterable[Sequence[Any]],
    edges: dict[tuple[str, str, str, str], Edge],
    fields: dict[str, RankFields],
) -> None:
    """Collect ``_Q_HOOD_LINEAGE`` rows: each edge once, and the far end's fields if admitted."""
    for etype, src, dst, props, other, values in rows:
        key = str(props.get("key", ""))
        ident = (str(etype), str(src), str(dst), key)
        edges.setdefault(ident, Edge(*ident[:3], _edge_props(props), key))
        if values is not None:
            fields[str(other)] = _rank_fields(values)


def _read_rank_fields(tx: _Reader, flt: MemoryFilter, ids: list[str]) -> dict[str, RankFields]:
    where, params = _filter_clause(flt)
    params["ids"] = ids
    query = _cypher(_Q_RANK_FIELDS).replace("%FILTER%", where)
    rows = tx.run(query, params).single(strict=True)["rows"]
    return {str(mid): _rank_fields(values) for mid, *values in rows}


def _sibling_query(template: LiteralString, via: str, where: LiteralString) -> LiteralString:
    """A siblings template with the hub type's names, the filter and the time expressions."""
    names = {"T": via, "H": EDGE_TYPES[via][1], "P": _SIBLING_PROPS[via]}
    text = _cypher(template, **names).replace("%FILTER%", where)
    text = text.replace("%FIELDS%", _RANK_FIELDS)
    return text.replace("%MICROS_M%", _MICROS.replace("%V%", "m")).replace(
        "%MICROS_S%", _MICROS.replace("%V%", "s")
    )


def _hood_columns(vias: Sequence[str], lineage: bool) -> list[str]:
    """The parts of each seed's entry in ``_Q_HOOD``'s result, after its id and time."""
    return (["lineage"] if lineage else []) + [f"{via}_hubs" for via in vias]


def _neighbourhood_query(where: LiteralString, vias: Sequence[str], lineage: bool) -> LiteralString:
    """``neighbourhood``'s query: ``_hood_query`` from ``$ids``, fetching ``$fetch``."""
    head: LiteralString = "WITH $ids AS seed_ids, $fetch AS fetch_ids\n"
    return head + _hood_query(where, vias, lineage) + "RETURN seeds, fetched"


def _hood_query(where: LiteralString, vias: Sequence[str], lineage: bool) -> LiteralString:
    """``_Q_HOOD`` with a siblings part per hub type in ``vias`` and, if asked, the lineage."""
    parts: list[LiteralString] = []
    if lineage:
        text = _cypher(_Q_HOOD_LINEAGE, T="|".join(LINEAGE_EDGES)).replace("%FILTER%", where)
        parts.append(text.replace("%FIELDS%", _RANK_FIELDS))
    parts += [_sibling_query(_Q_HOOD_SIBLINGS, via, where) for via in vias]
    columns = ", ".join(_hood_columns(vias, lineage))
    query = _Q_HOOD.replace("%BODY%", "\n".join(parts)).replace("%COLUMNS%", columns)
    return query.replace("%AT%", _MICROS.replace("%V%", "s"))


def _search_expand_query(where: LiteralString, vector: bool, text: bool) -> LiteralString:
    """``_Q_SEARCH_EXPAND`` with the filter, each search path on or off, and the full hop."""
    parts = {
        "%VECTOR%": _Q_SEARCH_VECTOR if vector else _Q_SEARCH_NONE.replace("%P%", "v_"),
        "%TEXT%": _Q_SEARCH_TEXT if text else _Q_SEARCH_NONE.replace("%P%", "t_"),
        "%HOOD%": _hood_query(where, SIBLING_EDGES, lineage=True),
    }
    query = _Q_SEARCH_EXPAND
    for slot, part in parts.items():
        query = query.replace(slot, part)
    return query.replace("%FIELDS%", _RANK_FIELDS).replace("%FILTER%", where)


def check_server_version(version: str, uri: str = "") -> None:
    """Refuse servers without vector indexes (before 5.13); calendar versions (2025.x) pass."""
    match = _VERSION.match(version)
    parsed = None if match is None else (int(match.group(1)), int(match.group(2)))
    if parsed is None or parsed < MIN_SERVER_VERSION:
        where = f" at {uri}" if uri else ""
        raise StoreUnavailableError(
            f"Neo4j {version or '(unknown version)'}{where} has no vector indexes; "
            f"amem_graph needs Neo4j {MIN_SERVER_VERSION[0]}.{MIN_SERVER_VERSION[1]} or later",
            hint="upgrade the server (scripts/neo4j-local and docker-compose.yml run 5.26)",
        )


# -- queries (module constants; %X% slots are filled by _cypher with checked names) -------------

#: every Memory field but the embedding, projected by name: ``m {.*}`` would read the vector
#: times travel as integer microseconds since the epoch: hydrating driver DateTime objects
#: was most of the client's time in reads of many memories
_MEMORY_PROJECTION: Final = ", ".join(
    (
        f"{name}: m.{name}.epochSeconds * 1000000 + m.{name}.nanosecond / 1000"
        if name in _MEMORY_TIMES
        else "." + check_identifier(name)
    )
    for name in Memory.model_fields
    if name != "embedding"
)

#: vectors travel as text (9 significant digits per float32 value: exact) parsed by the
#: server; packing Python float lists was the client's biggest cost when ingesting
_VECTOR_EXPR: Final = "[x IN split(row.embedding, ',') | toFloat(x)]"

_SET_TIMES: Final = ", ".join(
    f"m.{name} = CASE WHEN row.times.{name} IS NULL THEN null ELSE datetime("
    f"{{epochSeconds: row.times.{name}[0], nanosecond: row.times.{name}[1]}}) END"
    for name in _MEMORY_TIMES
)

_Q_CREATE_MEMORIES: Final = """
UNWIND $rows AS row
CREATE (m:Memory)
SET m = row.props, %TIMES%
WITH m, row WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(m, 'embedding', %VECTOR%)
""".replace("%VECTOR%", _VECTOR_EXPR).replace("%TIMES%", _SET_TIMES)
_Q_MERGE_NODES: Final = """
UNWIND $rows AS row
MERGE (n:%L% {id: row.id})
ON CREATE SET n += row.on_create
SET n += row.props
"""
#: create-only nodes: the id's uniqueness constraint refuses one that exists (ConstraintError)
_Q_CREATE_NODES: Final = """
UNWIND $rows AS row
CREATE (n:%L% {id: row.id})
SET n += row.on_create
SET n += row.props
"""
_Q_LOCK_MEMORIES: Final = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})
SET m._amem_lock = true
REMOVE m._amem_lock
RETURN m {%P%} AS props
""".replace("%P%", _MEMORY_PROJECTION)
_Q_UPDATE_MEMORIES: Final = """
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
SET m += row.props, %TIMES%
""".replace("%TIMES%", _SET_TIMES)
#: status, counters and scalars set in place: no read-back, no re-validation of the whole node
_Q_SET_SCALARS: Final = """
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
SET m._amem_lock = true
REMOVE m._amem_lock
SET m += row.set,
    m.successes = coalesce(m.successes, 0.0) + row.inc.successes,
    m.failures = coalesce(m.failures, 0.0) + row.inc.failures,
    m.version = coalesce(m.version, 1) + row.inc.version
RETURN collect(m.id) AS found
"""
_Q_SET_VECTORS: Final = """
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
CALL db.create.setNodeVectorProperty(m, 'embedding', %VECTOR%)
""".replace("%VECTOR%", _VECTOR_EXPR)
_Q_MERGE_EDGES: Final = """
UNWIND $rows AS row
MATCH (a:%S% {id: row.src})
MATCH (b:%D% {id: row.dst})
MERGE (a)-[r:%T% {key: row.key}]->(b)
SET r += row.props
RETURN count(*) AS n
"""
_Q_MISSING_ENDPOINT: Final = """
UNWIND $rows AS row
OPTIONAL MATCH (a:%S% {id: row.src})
OPTIONAL MATCH (b:%D% {id: row.dst})
WITH row, a, b WHERE a IS NULL OR b IS NULL
RETURN row.src AS src, row.dst AS dst, a IS NULL AS no_src
LIMIT 1
"""
_Q_DELETE_EDGES: Final = """
UNWIND $rows AS row
MATCH (a:%S% {id: row.src})-[r:%T% {key: row.key}]->(b:%D% {id: row.dst})
DELETE r
"""
_Q_FOUND_MEMORIES: Final = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})
RETURN collect(m.id) AS found
"""
_Q_DELETE_MEMORIES: Final = """
UNWIND $ids AS id
MATCH (m:Memory {id: id})
DETACH DELETE m
"""
_Q_GET_MEMORIES: Final = (
    "UNWIND $ids AS id MATCH (m:Memory {id: id}) RETURN collect(m {%P%, .embedding}) AS rows"
).replace("%P%", _MEMORY_PROJECTION)
_Q_GET_MEMORIES_NO_VECTORS: Final = (
    "UNWIND $ids AS id MATCH (m:Memory {id: id}) RETURN collect(m {%P%}) AS rows"
).replace("%P%", _MEMORY_PROJECTION)
#: microseconds since the epoch of a memory's created_at (exact integer arithmetic)
_MICROS: Final = "(%V%.created_at.epochSeconds * 1000000 + %V%.created_at.nanosecond / 1000)"
#: every admitted member of a big hub at one instant (a tie group cut by the limit)
_Q_SIBLINGS_AT: Final = """
MATCH (s:Memory {id: $id})
MATCH (m:Memory)
USING INDEX SEEK m:Memory(%P%, created_at)
WHERE m.%P% = $hub AND m.created_at = datetime({epochSeconds: $secs, nanosecond: $nanos})
  AND m <> s AND %FILTER% AND EXISTS { (m)-[:%T%]->(:%H% {id: $hub}) }
RETURN collect(m.id) AS ids
"""
#: ``neighbourhood`` and ``siblings``: one entry per seed, each part a subquery that aggregates
#: (so a seed without edges or hubs still gives its entry), and the memories to ``fetch``
_Q_HOOD: Final = """
CALL {
  WITH seed_ids
  UNWIND seed_ids AS id MATCH (s:Memory {id: id}) %BODY%
  RETURN collect([id, %AT%, %COLUMNS%]) AS seeds
}
CALL {
  WITH fetch_ids
  UNWIND fetch_ids AS id MATCH (m:Memory {id: id}) RETURN collect(m {%P%}) AS fetched
}
""".replace("%P%", _MEMORY_PROJECTION)
_Q_HOOD_LINEAGE: Final = """
CALL {
  WITH s
  MATCH (s)-[r:%T%]-(m:Memory)
  RETURN collect([type(r), startNode(r).id, endNode(r).id, properties(r), m.id,
                  CASE WHEN %FILTER% THEN [%FIELDS%] END]) AS lineage
}
"""
#: per hub of the seed: a small hub read whole (nearest ``$limit``); a big one walked each way
#: through the (hub property, created_at) index in index order (ordering by both index keys
#: lets the planner stop at the LIMIT instead of sorting the hub; the SEEK hint, because it
#: otherwise chose, in some plans, to scan the whole index in order, or the task-only index and
#: a sort), one row past the limit showing a tie group the limit cut
_Q_HOOD_SIBLINGS: Final = """
CALL {
  WITH s
  MATCH (s)-[:%T%]->(h:%H%)
  WITH s, h, COUNT { (h)<-[:%T%]-() } AS degree
  CALL {
    WITH s, h, degree
    WITH s, h WHERE degree <= $small
    MATCH (h)<-[:%T%]-(m:Memory)
    WHERE m <> s AND %FILTER%
    WITH m, abs(%MICROS_M% - %MICROS_S%) AS gap
    ORDER BY gap, m.id
    LIMIT $limit
    RETURN collect([m.id, gap, %FIELDS%]) AS near
  }
  CALL {
    WITH s, h, degree
    WITH s, h WHERE degree > $small
    MATCH (m:Memory)
    USING INDEX SEEK m:Memory(%P%, created_at)
    WHERE m.%P% = h.id AND m.created_at >= s.created_at AND m <> s AND %FILTER%
      AND EXISTS { (m)-[:%T%]->(h) }
    WITH m ORDER BY m.%P% ASC, m.created_at ASC LIMIT $limit + 1
    RETURN collect([m.id, %MICROS_M%, %FIELDS%]) AS later
  }
  CALL {
    WITH s, h, degree
    WITH s, h WHERE degree > $small
    MATCH (m:Memory)
    USING INDEX SEEK m:Memory(%P%, created_at)
    WHERE m.%P% = h.id AND m.created_at < s.created_at AND %FILTER%
      AND EXISTS { (m)-[:%T%]->(h) }
    WITH m ORDER BY m.%P% DESC, m.created_at DESC LIMIT $limit + 1
    RETURN collect([m.id, %MICROS_M%, %FIELDS%]) AS earlier
  }
  RETURN collect([h.id, near, later, earlier]) AS %T%_hubs
}
"""
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
_Q_VECTOR_ANN: Final = """
CALL db.index.vector.queryNodes($index, $n, $q) YIELD node AS m, score
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN m END) AS admitted
RETURN raw, size(admitted) AS found,
       [x IN admitted | [x.id, 2.0 * vector.similarity.cosine(x.embedding, $q) - 1.0]] AS hits
"""
_Q_VECTOR_EXACT: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
WITH m.id AS id, CASE WHEN m.embedding_is_zero THEN 0.0
                      ELSE 2.0 * vector.similarity.cosine(m.embedding, $q) - 1.0 END AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
"""
_Q_VECTOR_ZERO_QUERY: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
RETURN m.id AS id, 0.0 AS score
ORDER BY id
LIMIT $k
"""
_Q_COUNT_ADMITTED_VECTORS: Final = """
MATCH (m:Memory)
WHERE %FILTER% AND m.embedding IS NOT NULL
RETURN count(m) AS n
"""
_Q_TEXT: Final = """
CALL db.index.fulltext.queryNodes($index, $q, {limit: $n}) YIELD node AS m, score
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN [m.id, score] END) AS hits
RETURN raw, hits
"""
#: a memory's ``RankFields`` in order (defaults as in ``Memory`` for a missing property)
_RANK_FIELDS: Final = (
    "%MICROS_M%, coalesce(m.importance, 0.5), coalesce(m.successes, 0.0), coalesce(m.failures, 0.0)"
).replace("%MICROS_M%", _MICROS.replace("%V%", "m"))
_Q_RANK_FIELDS: Final = """
MATCH (m:Memory)
USING INDEX m:Memory(id)
WHERE m.id IN $ids AND %FILTER%
RETURN collect([m.id, %FIELDS%]) AS rows
""".replace("%FIELDS%", _RANK_FIELDS)
#: ``search``'s vector part: exact cosines (as ``_Q_VECTOR_ANN``) and the ranking fields
_Q_SEARCH_VECTOR: Final = """
CALL db.index.vector.queryNodes($v_index, $v_n, $v_q) YIELD node AS m
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN m END) AS admitted
RETURN raw AS v_raw,
       [m IN admitted | [m.id, 2.0 * vector.similarity.cosine(m.embedding, $v_q) - 1.0,
                         %FIELDS%]] AS v_hits
"""
_Q_SEARCH_TEXT: Final = """
CALL db.index.fulltext.queryNodes($t_index, $t_q, {limit: $t_n}) YIELD node AS m, score
WITH count(*) AS raw, collect(CASE WHEN %FILTER% THEN [m.id, score, %FIELDS%] END) AS hits
RETURN raw AS t_raw, hits AS t_hits
"""
#: ``search_expand``: both search parts (a path that is off returns nothing), the seeds and
#: fetch list ``SeedPlan.choose`` picks from them, computed here as in Python (top $v_k/$t_k
#: by score then id; tie-aware ranks; weighted RRF summed vector part first; best first, ties
#: by id), then ``_Q_HOOD`` from those seeds
_Q_SEARCH_EXPAND: Final = """
CALL { %VECTOR% }
CALL { %TEXT% }
CALL {
  WITH v_hits
  UNWIND v_hits AS h WITH h ORDER BY h[1] DESC, h[0] LIMIT $v_k
  RETURN collect([h[0], h[1]]) AS v_top
}
CALL {
  WITH t_hits
  UNWIND t_hits AS h WITH h ORDER BY h[1] DESC, h[0] LIMIT $t_k
  RETURN collect([h[0], h[1] * $t_scale]) AS t_top
}
CALL {
  WITH v_top, t_top
  UNWIND [[$v_w, v_top], [$t_w, t_top]] AS weighted
  WITH weighted[0] AS w, weighted[1] AS top, [x IN weighted[1] | x[1]] AS vs
  WITH w, top, reduce(r = [], i IN range(0, size(vs) - 1) | r + [
         CASE WHEN i > 0 AND abs(vs[i - 1] - vs[i])
                             <= $rel * CASE WHEN abs(vs[i]) > 1.0 THEN abs(vs[i]) ELSE 1.0 END
              THEN r[i - 1] ELSE i + 1 END]) AS ranks
  UNWIND range(0, size(top) - 1) AS i
  WITH top[i][0] AS id, w / ($rrf_k + ranks[i]) AS part
  WITH id, sum(part) AS score
  ORDER BY score DESC, id
  RETURN collect(id) AS ranking
}
WITH v_raw, v_hits, t_raw, t_hits, ranking[..$n_seeds] AS seed_ids,
     ranking[..$n_fetch] AS fetch_ids
%HOOD%
RETURN v_raw, v_hits, t_raw, t_hits, seed_ids, fetch_ids, seeds, fetched
"""
#: ``search_expand``'s stand-in for a path that is off
_Q_SEARCH_NONE: Final = "RETURN 0 AS %P%raw, [] AS %P%hits"
_Q_STATUSES: Final = """
MATCH (m:Memory)
WHERE m.id IN $ids
RETURN collect([m.id, m.status]) AS pairs
"""
_Q_FILTER_IDS: Final = """
MATCH (m:Memory)
USING INDEX m:Memory(id)
WHERE m.id IN $ids AND %FILTER%
RETURN collect(m.id) AS ids
"""
_Q_FIND_MEMORIES: Final = """
MATCH (m:Memory)
WHERE %FILTER%
RETURN m {%P%, .embedding} AS props
ORDER BY m.created_at, m.id
"""
_Q_GET_NODES: Final = """
MATCH (n:%L%)
WHERE n.id IN $ids
RETURN collect(properties(n)) AS rows
"""
_Q_FIND_NODES: Final = """
MATCH (n:%L%)
WHERE all(i IN range(0, size($keys) - 1) WHERE n[$keys[i]] = $values[i])
RETURN n.id AS id, properties(n) AS props
"""
_Q_EDGES_OUT: Final = """
MATCH (a:%L%) WHERE a.id IN $ids
MATCH (a)-[r:%T%]->(b)
RETURN collect([type(r), a.id, b.id, properties(r)]) AS rows
"""
_Q_EDGES_IN: Final = """
MATCH (b:%L%) WHERE b.id IN $ids
MATCH (a)-[r:%T%]->(b)
RETURN collect([type(r), a.id, b.id, properties(r)]) AS rows
"""
_Q_COUNT_LABEL: Final = "MATCH (n:%L%) RETURN '%L%' AS name, count(n) AS n"
_Q_COUNT_TYPE: Final = "MATCH ()-[r:%T%]->() RETURN '%T%' AS name, count(r) AS n"
_Q_ALL_NODES: Final = "MATCH (n:%L%) RETURN '%L%' AS label, n.id AS id, properties(n) AS props"
_Q_ALL_EDGES: Final = """
MATCH (a)-[r]->(b)
RETURN type(r) AS type, a.id AS src, b.id AS dst, properties(r) AS props
"""
_Q_WIPE_CHUNK: Final = "MATCH (n) WITH n LIMIT $chunk DETACH DELETE n RETURN count(*) AS n"


@dataclass(frozen=True, slots=True)
class _HoodAsk:
    """What a ``_hood_query`` record is read against besides its seeds: the filter and fan-out
    limit, and the query's parts and parameters (for the extra reads a big hub's tie group
    needs)."""

    flt: MemoryFilter
    limit: int
    vias: tuple[str, ...]
    lineage: bool
    where: LiteralString
    params: dict[str, Any]


class _Plan:
    """A WriteBatch turned into parameter rows, validated before the database is touched."""

    def __init__(self) -> None:
        self.memories: list[dict[str, Any]] = []
        self.nodes: dict[str, list[dict[str, Any]]] = {}
        self.creates: dict[str, list[dict[str, Any]]] = {}
        self.updates: list[MemoryUpdate] = []
        self.edges: dict[str, list[dict[str, Any]]] = {}
        self.delete_edges: dict[str, list[dict[str, Any]]] = {}
        self.delete_memories: list[str] = []
        #: the recorded embedder's dimension (0 when the batch has no vectors to check)
        self.dims = 0


class Neo4jStore:
    """``GraphStore`` on Neo4j 5.13+ (Community is enough). Open it with ``Neo4jStore.connect``."""

    backend = "neo4j"

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

    # -- connecting ---------------------------------------------------------------------------

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
            if not target.startswith(NEO4J_SCHEMES):
                raise ValidationError(
                    f"{target!r} is not a Neo4j URI",
                    hint="use bolt://host:port or neo4j://host:port (NEO4J_URI)",
                )
            try:
                driver = GraphDatabase.driver(
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

    def _apply_schema(self) -> None:
        statements, _ = schema_statements()

        def run() -> None:
            with self._session() as session:
                for statement in statements:
                    session.run(statement).consume()
                session.run(
                    "CALL db.awaitIndexes($timeout)", {"timeout": INDEX_WAIT_SECONDS}
                ).consume()

        self._guard("applying the schema", run)

    # -- plumbing -----------------------------------------------------------------------------

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
        """Run the store's own read ``fn`` on a READ session, each query auto-committed.

        A managed transaction costs two more round trips (BEGIN, COMMIT) per read: about 2 ms
        of a ~15 ms recall. Neo4j reads are read-committed either way, so nothing is lost;
        what managed transactions add, retrying on a dropped connection, is kept (once).
        """
        try:
            with self._session(read=True) as session:
                return fn(session)
        except (neo_errors.SessionExpired, neo_errors.ServiceUnavailable):
            pass  # a pooled connection had dropped: once more, on a fresh one
        with self._session(read=True) as session:
            return fn(session)

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
            with self._session() as session:
                result: _T = session.execute_read(fn)
                return result

        return self._guard(what, run)

    def _write(self, fn: Callable[[ManagedTransaction], _T]) -> _T:
        with self._session() as session:
            result: _T = session.execute_write(fn)
            return result

    def _guard(self, what: str, fn: Callable[[], _T]) -> _T:
        """Run ``fn``, turning every driver error into an ``AmemGraphError``."""
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return fn()
        except AmemGraphError:
            raise
        except neo_errors.ConstraintError as exc:
            raise ConflictError(f"{what} conflicts with stored data: {exc.message}") from exc
        except neo_errors.AuthError as exc:
            raise StoreUnavailableError(
                f"{what}: Neo4j refused the credentials: {exc.message}", hint=AUTH_HINT
            ) from exc
        except neo_errors.DatabaseUnavailable as exc:
            raise StoreUnavailableError(
                f"{what}: the Neo4j database is unavailable: {exc.message}", hint=START_HINT
            ) from exc
        except neo_errors.TransientError as exc:
            raise ConflictError(
                f"{what}: Neo4j could not complete it now (lock contention or deadlock): "
                f"{exc.message}",
                hint="retry",
            ) from exc
        except neo_errors.Neo4jError as exc:
            if exc.code == "Neo.ClientError.Database.DatabaseNotFound":
                raise StoreUnavailableError(
                    f"{what}: {exc.message}", hint="check NEO4J_DATABASE (or database=)"
                ) from exc
            raise StoreError(f"{what} failed: {exc.message or exc}") from exc
        except (
            neo_errors.ServiceUnavailable,
            neo_errors.SessionExpired,
            neo_errors.ConnectionAcquisitionTimeoutError,
        ) as exc:
            raise StoreUnavailableError(
                f"{what}: Neo4j is unreachable: {exc}", hint=START_HINT
            ) from exc
        except (neo_errors.GqlError, OSError) as exc:
            raise StoreError(f"{what} failed: {exc}") from exc
        except (TypeError, ValueError, OverflowError) as exc:  # the driver refusing a value
            raise StoreError(f"{what} failed: {exc}") from exc

    # -- embedder -----------------------------------------------------------------------------

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
                    hint=f"open it with the embedder it was built with, or export and re-import "
                    f"into a new store to re-embed with {name!r}",
                )
            self._ensure_vector_index(dims)
            self._embedder = (name, dims)

        self._guard("recording the embedder", run)

    def _ensure_vector_index(self, dims: int) -> None:
        _, deferred = schema_statements()
        with self._session() as session:
            rec = session.run(
                "SHOW INDEXES YIELD name, options WHERE name = $name RETURN options",
                {"name": VECTOR_INDEX},
            ).single()
            if rec is not None:
                config = (rec["options"] or {}).get("indexConfig") or {}
                if config.get("vector.dimensions") == dims:
                    return
                # left over from another embedder (e.g. the meta node was deleted by hand)
                session.run(_cypher("DROP INDEX %I% IF EXISTS", I=VECTOR_INDEX)).consume()
            for statement in deferred:
                session.run(statement, {"dims": dims}).consume()
            session.run(
                "CALL db.awaitIndex($name, $timeout)",
                {"name": VECTOR_INDEX, "timeout": INDEX_WAIT_SECONDS},
            ).consume()

    def _dims(self) -> int:
        info = self._recorded_embedder()
        return 0 if info is None else info[1]

    # -- writes -------------------------------------------------------------------------------

    def apply(self, batch: WriteBatch) -> None:
        if batch.is_empty():
            return

        def run() -> None:
            plan = self._plan(batch, self._dims() if self._needs_dims(batch) else 0)
            self._write(lambda tx: self._apply_plan(tx, plan))

        self._guard("writing a batch", run)

    @staticmethod
    def _needs_dims(batch: WriteBatch) -> bool:
        return any(m.embedding is not None for m in batch.memories) or any(
            u.changes.get("embedding") is not None for u in batch.memory_updates
        )

    def _plan(self, batch: WriteBatch, dims: int) -> _Plan:
        plan = _Plan()
        plan.dims = dims
        for m in batch.memories:
            props = _memory_props(m)
            vector: str | None = None
            if m.embedding is not None:
                vector, zero = _unit_vector(m.embedding, dims, f"memory {m.id!r}")
                if zero:
                    props[_ZERO_PROP] = True
            plan.memories.append({**_memory_row(props), "embedding": vector})
        for n in batch.nodes:
            rows = plan.creates if n.create_only else plan.nodes
            rows.setdefault(n.label, []).append(self._node_row(n))
        plan.updates = list(batch.memory_updates)
        for e in batch.edges:
            plan.edges.setdefault(e.type, []).append(self._edge_row(e))
        for etype, src, dst, key in batch.delete_edges:
            if etype not in EDGE_TYPES:
                raise ValidationError(f"unknown edge type {etype!r}")
            plan.delete_edges.setdefault(etype, []).append({"src": src, "dst": dst, "key": key})
        seen: set[str] = set()
        for mid in batch.delete_memories:
            if mid in seen:  # the embedded store finds nothing left to delete the second time
                raise NotFoundError(f"no memory {mid!r} to delete")
            seen.add(mid)
        plan.delete_memories = list(batch.delete_memories)
        return plan

    @staticmethod
    def _node_row(n: NodeWrite) -> dict[str, Any]:
        where = f"{n.label} {n.id!r}"
        return {
            "id": n.id,
            "props": _storable(n.props, where, "id"),
            "on_create": _storable(n.on_create, where, "id"),
        }

    @staticmethod
    def _edge_row(e: EdgeWrite) -> dict[str, Any]:
        where = f"{e.type} edge {e.src!r}->{e.dst!r}"
        return {"src": e.src, "dst": e.dst, "key": e.key, "props": _storable(e.props, where, "key")}

    def _apply_plan(self, tx: ManagedTransaction, plan: _Plan) -> None:
        """The whole batch inside one transaction function: raising anywhere rolls it back."""
        if plan.memories:
            tx.run(_Q_CREATE_MEMORIES, {"rows": plan.memories}).consume()
        for label, rows in plan.creates.items():  # before merges of the same label
            tx.run(_cypher(_Q_CREATE_NODES, L=check_label(label)), {"rows": rows}).consume()
        for label, rows in plan.nodes.items():
            tx.run(_cypher(_Q_MERGE_NODES, L=check_label(label)), {"rows": rows}).consume()
        if plan.updates:
            self._apply_updates(tx, plan.updates, plan.dims)
        for etype, rows in plan.edges.items():
            src_label, dst_label = EDGE_TYPES[etype]
            query = _cypher(_Q_MERGE_EDGES, S=src_label, D=dst_label, T=etype)
            merged = tx.run(query, {"rows": rows}).single(strict=True)["n"]
            if merged != len(rows):
                self._raise_missing_endpoint(tx, etype, rows)
        for etype, rows in plan.delete_edges.items():
            src_label, dst_label = EDGE_TYPES[etype]
            query = _cypher(_Q_DELETE_EDGES, S=src_label, D=dst_label, T=etype)
            tx.run(query, {"rows": rows}).consume()
        if plan.delete_memories:
            rec = tx.run(_Q_FOUND_MEMORIES, {"ids": plan.delete_memories}).single(strict=True)
            found = set(rec["found"])
            for mid in plan.delete_memories:
                if mid not in found:
                    raise NotFoundError(f"no memory {mid!r} to delete")
            tx.run(_Q_DELETE_MEMORIES, {"ids": plan.delete_memories}).consume()

    @staticmethod
    def _raise_missing_endpoint(
        tx: ManagedTransaction, etype: str, rows: list[dict[str, Any]]
    ) -> None:
        src_label, dst_label = EDGE_TYPES[etype]
        query = _cypher(_Q_MISSING_ENDPOINT, S=src_label, D=dst_label)
        rec = tx.run(query, {"rows": rows}).single()
        if rec is None:  # every endpoint exists: a row matched twice cannot happen (unique ids)
            raise StoreError(f"{etype} edges: wrote a different number of edges than asked")
        label, nid = (src_label, rec["src"]) if rec["no_src"] else (dst_label, rec["dst"])
        raise NotFoundError(f"{etype} edge {rec['src']!r}->{rec['dst']!r}: no {label} {nid!r}")

    def _apply_updates(
        self, tx: ManagedTransaction, updates: list[MemoryUpdate], dims: int
    ) -> None:
        """Scalar-only updates (status, counters) in place; the rest read-modify-write."""
        simple = [u for u in updates if _is_scalar_update(u)]
        if simple:
            self._apply_scalar_updates(tx, simple)
        rest = [u for u in updates if not _is_scalar_update(u)]
        if rest:
            self._apply_full_updates(tx, rest, dims)

    @staticmethod
    def _apply_scalar_updates(tx: ManagedTransaction, updates: list[MemoryUpdate]) -> None:
        """One SET per memory under its write lock: increments add atomically, nothing is read
        back to the client (a 10k-memory retraction would otherwise ship every node twice)."""
        rows = []
        for u in updates:
            _check_scalar_changes(u)
            inc = {name: float(u.increments.get(name, 0)) for name in _COUNTERS}
            inc["version"] = int(u.increments.get("version", 0))
            rows.append({"id": u.id, "set": dict(u.changes), "inc": inc})
        found = set(tx.run(_Q_SET_SCALARS, {"rows": rows}).single(strict=True)["found"])
        for u in updates:
            if u.id not in found:
                raise NotFoundError(f"no memory {u.id!r} to update")

    def _apply_full_updates(
        self, tx: ManagedTransaction, updates: list[MemoryUpdate], dims: int
    ) -> None:
        """Read-modify-write under the memories' write locks, so increments never lose one."""
        ids = list(dict.fromkeys(u.id for u in updates))
        current: dict[str, dict[str, Any]] = {}
        for rec in tx.run(_Q_LOCK_MEMORIES, {"ids": ids}):
            props = _memory_data(rec["props"])
            props.pop("embedding", None)
            current[str(props["id"])] = props
        vectors: dict[str, str | None] = {}
        zero: dict[str, bool] = {}
        for u in updates:
            data = current.get(u.id)
            if data is None:
                raise NotFoundError(f"no memory {u.id!r} to update")
            data.update({k: v for k, v in u.changes.items() if k != "embedding"})
            for name, amount in u.increments.items():
                data[name] = (data.get(name) or 0) + amount
            try:
                validated = Memory.model_validate(data)
            except pydantic.ValidationError as exc:
                raise ValidationError(f"update of memory {u.id!r}: {exc}") from None
            current[u.id] = _memory_props(validated)
            if "embedding" in u.changes:
                new = u.changes["embedding"]
                if new is None:
                    vectors[u.id], zero[u.id] = None, False
                else:
                    vectors[u.id], zero[u.id] = _unit_vector(new, dims, f"memory {u.id!r}")
        rows = []
        for mid in ids:
            props = dict(current[mid])
            if mid in vectors:
                props[_ZERO_PROP] = True if zero[mid] else None
                if vectors[mid] is None:
                    props["embedding"] = None
            rows.append({"id": mid, **_memory_row(props)})
        tx.run(_Q_UPDATE_MEMORIES, {"rows": rows}).consume()
        vector_rows = [{"id": mid, "embedding": v} for mid, v in vectors.items() if v is not None]
        if vector_rows:
            tx.run(_Q_SET_VECTORS, {"rows": vector_rows}).consume()

    # -- reads --------------------------------------------------------------------------------

    def get_memories(self, ids: Sequence[str], *, embeddings: bool = True) -> dict[str, Memory]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return {}
        query = _Q_GET_MEMORIES if embeddings else _Q_GET_MEMORIES_NO_VECTORS

        def read(tx: _Reader) -> dict[str, Memory]:
            out: dict[str, Memory] = {}
            # one record holding a list: far fewer Bolt messages than one record per memory
            for props in tx.run(query, {"ids": unique}).single(strict=True)["rows"]:
                m = _memory_from_props(props)
                out[m.id] = m
            return out

        return self._guard("reading memories", lambda: self._read(read))

    def find_memories(self, flt: MemoryFilter, limit: int | None = None) -> list[Memory]:
        where, params = _filter_clause(flt)
        query = _cypher(_Q_FIND_MEMORIES).replace("%FILTER%", where)
        query = query.replace("%P%", _MEMORY_PROJECTION)
        if limit is not None:
            if limit == 0:
                return []
            if limit > 0:  # a negative limit means none, as in SQLite
                query += " LIMIT $limit"
                params["limit"] = int(limit)

        def read(tx: _Reader) -> list[Memory]:
            return [_memory_from_props(rec["props"]) for rec in tx.run(query, params)]

        return self._guard("listing memories", lambda: self._read(read))

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, Node]:
        check_label(label)
        unique = list(dict.fromkeys(ids))
        if label == MEMORY or not unique:
            return {}
        query = _cypher(_Q_GET_NODES, L=label)

        def read(tx: _Reader) -> dict[str, Node]:
            rows = tx.run(query, {"ids": unique}).single(strict=True)["rows"]
            return {str(p["id"]): Node(label, str(p["id"]), _node_props(p)) for p in rows}

        return self._guard(f"reading {label} nodes", lambda: self._read(read))

    def find_nodes(self, label: str, where: Mapping[str, Any] | None = None) -> list[Node]:
        check_label(label)
        conditions = dict(where or {})
        for key in conditions:
            check_identifier(key, "property name")
        if label == MEMORY:
            return []
        # strings are pushed into the query; every condition is checked again below with
        # Python equality, the embedded store's semantics (None matches a missing property)
        pushed = {k: v for k, v in conditions.items() if isinstance(v, str)}
        query = _cypher(_Q_FIND_NODES, L=label)
        params = {"keys": list(pushed), "values": list(pushed.values())}

        def read(tx: _Reader) -> list[Node]:
            nodes = [
                Node(label, rec["id"], _node_props(rec["props"])) for rec in tx.run(query, params)
            ]
            return sorted(
                (n for n in nodes if all(n.props.get(k) == v for k, v in conditions.items())),
                key=lambda n: n.id,
            )

        return self._guard(f"listing {label} nodes", lambda: self._read(read))

    def edges(
        self,
        ids: Iterable[str],
        types: Sequence[str] | None = None,
        direction: Direction = "out",
    ) -> list[Edge]:
        wanted = list(EDGE_TYPES) if types is None else list(dict.fromkeys(types))
        for t in wanted:
            if t not in EDGE_TYPES:
                raise ValidationError(f"unknown edge type {t!r}")
        id_list = list(dict.fromkeys(ids))
        if not id_list or not wanted or direction not in ("out", "in", "both"):
            return []
        branches: list[LiteralString] = []
        for side, template in ((0, _Q_EDGES_OUT), (1, _Q_EDGES_IN)):
            if direction == ("in", "out")[side]:
                continue
            by_label: dict[str, list[str]] = {}
            for t in wanted:
                by_label.setdefault(EDGE_TYPES[t][side], []).append(t)
            for label, group in by_label.items():
                branches.append(_cypher(template, L=label, T="|".join(group)))
        query = " UNION ALL ".join(branches)
        order = {t: i for i, t in enumerate(wanted)}

        def read(tx: _Reader) -> list[Edge]:
            found: dict[tuple[str, str, str, str], Edge] = {}
            for rec in tx.run(query, {"ids": id_list}):
                for etype, src, dst, props in rec["rows"]:
                    key = str(props.get("key", ""))
                    ident = (str(etype), str(src), str(dst), key)
                    if ident not in found:
                        found[ident] = Edge(*ident[:3], _edge_props(props), key)
            return [found[i] for i in sorted(found, key=lambda i: (order[i[0]], i[1:]))]

        return self._guard("reading edges", lambda: self._read(read))

    def _unit_query(self, vector: Sequence[float]) -> list[float] | None:
        """The query vector checked and normalised; None when no memory can have a vector
        (no embedder recorded) or the query is all zeros (every cosine is 0)."""
        info = self._recorded_embedder()
        if info is None:
            return None
        dims = info[1]
        q = np.asarray(vector, dtype=np.float32)
        if q.shape != (dims,):
            raise ValidationError(f"query vector has {q.size} dimensions, the store uses {dims}")
        if not np.all(np.isfinite(q)):
            raise ValidationError("query vector has a non-finite value")
        norm = float(np.linalg.norm(q))
        return None if norm == 0 else [float(v) for v in (q / norm).tolist()]

    def vector_search(
        self, vector: Sequence[float], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]:
        if k <= 0:
            return []

        def run() -> list[tuple[str, float]]:
            q = self._unit_query(vector)
            where, params = _filter_clause(flt)
            params["k"] = int(k)
            if q is None:
                if self._recorded_embedder() is None:
                    return []  # no embedder recorded: no memory can have a vector
                # every cosine is 0: the embedded store ranks by id
                query = _cypher(_Q_VECTOR_ZERO_QUERY).replace("%FILTER%", where)
                return self._read(lambda tx: self._pairs(tx, query, params))
            params["q"] = q
            params["index"] = VECTOR_INDEX
            return self._read(lambda tx: self._vector_search(tx, k, where, params))

        return self._guard("searching vectors", run)

    def search(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
    ) -> SearchResult:
        """Each index call with the filter and the ranking fields in one query; the vector and
        the text query run at once, in two sessions.

        The first fetch from each index is ``FIRST_FETCH`` times what is asked; when the filter
        left too few of them and the index may hold more, that path is redone by
        ``vector_search``/``text_search``, which grow the fetch (and scan exactly if need be).
        """
        lucene = lucene_query(query) if n_text > 0 else ""

        def run() -> SearchResult:
            q = self._unit_query(vector) if vector is not None and n_vector > 0 else None
            if q is None and vector is not None and n_vector > 0:
                return search_by_parts(self, vector, query, n_vector, n_text, flt)
            where, params = _filter_clause(flt)
            fields: dict[str, RankFields] = {}
            calls: list[Callable[[], list[tuple[str, float]]]] = []
            if q is not None:
                v_params = {**params, "v_q": q, "v_index": VECTOR_INDEX}
                calls.append(
                    lambda: self._search_part(
                        _Q_SEARCH_VECTOR, "v_", where, v_params, n_vector, fields,
                        lambda: self.vector_search(q, n_vector, flt),
                    )
                )  # fmt: skip
            if lucene:
                t_params = {**params, "t_q": lucene, "t_index": TEXT_INDEX}
                calls.append(
                    lambda: self._search_part(
                        _Q_SEARCH_TEXT, "t_", where, t_params, n_text, fields,
                        lambda: self.text_search(query, n_text, flt),
                    )
                )  # fmt: skip
            results = self._concurrently(calls)
            by_vector = results.pop(0) if q is not None else []
            by_text = results.pop(0) if lucene else []
            missing = [i for i, _ in by_vector + by_text if i not in fields]
            if missing:
                fields.update(self.rank_fields(missing, flt))
            return SearchResult(by_vector, by_text, fields)

        return self._guard("searching", run)

    def _search_part(
        self,
        template: LiteralString,
        prefix: str,
        where: LiteralString,
        params: dict[str, Any],
        n: int,
        fields: dict[str, RankFields],
        redo: Callable[[], list[tuple[str, float]]],
    ) -> list[tuple[str, float]]:
        """One index path of ``search`` (its parameters and columns named with ``prefix``):
        the top n admitted (id, scaled score), their fields added to ``fields``; ``redo``
        when the filter starved the first fetch."""
        cypher = template.replace("%FIELDS%", _RANK_FIELDS).replace("%FILTER%", where)
        args = {**params, f"{prefix}n": _fetch_size(n)}
        rec = self._read(lambda tx: tx.run(cypher, args).single(strict=True))
        found: dict[str, RankFields] = {}
        hits = _first_fetch(rec, prefix, n, found)
        if hits is None:
            hits = redo()
        fields.update(found)  # dict updates are atomic under the GIL
        return hits

    def search_expand(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
        plan: SeedPlan,
    ) -> Expansion:
        """Both searches, the seed choice and the first hop in ONE query.

        The server picks the seeds with ``_Q_SEARCH_EXPAND``'s copy of ``SeedPlan.choose``;
        they are checked here against the plan applied to the lists as ``search`` returns
        them, and the hop is redone from the right seeds when they differ (a starved first
        fetch redone, or a rounding difference). Against ``search`` then ``neighbourhood`` it
        saves a round trip and the wait between them: on the settled 100k benchmark index,
        recall p50 fell from about 20 to 16 ms.
        """
        lucene = lucene_query(query) if n_text > 0 else ""

        def run() -> Expansion:
            q = self._unit_query(vector) if vector is not None and n_vector > 0 else None
            if q is None and vector is not None and n_vector > 0:
                return search_expand_by_parts(self, vector, query, n_vector, n_text, flt, plan)
            where, params = _filter_clause(flt)
            sizes = {"v_": n_vector if q is not None else 0, "t_": n_text if lucene else 0}
            params.update(_search_expand_args(q, lucene, sizes, plan))
            ask = _HoodAsk(flt, params["limit"], SIBLING_EDGES, True, where, params)
            redo: dict[str, Callable[[], list[tuple[str, float]]]] = {
                "v_": lambda: self.vector_search(vector or [], n_vector, flt),
                "t_": lambda: self.text_search(query, n_text, flt),
            }
            cypher = _search_expand_query(where, vector=sizes["v_"] > 0, text=sizes["t_"] > 0)
            return self._read(lambda tx: self._expansion(tx, cypher, sizes, redo, plan, ask))

        return self._guard("searching", run)

    def _expansion(
        self,
        tx: _Reader,
        cypher: LiteralString,
        sizes: Mapping[str, int],
        redo: Mapping[str, Callable[[], list[tuple[str, float]]]],
        plan: SeedPlan,
        ask: _HoodAsk,
    ) -> Expansion:
        """Run ``_Q_SEARCH_EXPAND``; each path's top ``sizes[prefix]`` (``redo`` when its first
        fetch starved), then the hop it read if its seeds are the plan's, else a new one."""
        rec = tx.run(cypher, ask.params).single(strict=True)
        fields: dict[str, RankFields] = {}
        lists: dict[str, list[tuple[str, float]]] = {}
        for prefix, n in sizes.items():
            hits = _first_fetch(rec, prefix, n, fields) if n else []
            lists[prefix] = redo[prefix]() if hits is None else hits
        by_vector, by_text = lists["v_"], lists["t_"]
        missing = [i for i, _ in by_vector + by_text if i not in fields]
        if missing:
            fields.update(_read_rank_fields(tx, ask.flt, missing))
        found = SearchResult(by_vector, by_text, fields)
        seeds, fetch_ids = plan.choose(by_vector, by_text)
        if set(seeds) != set(rec["seed_ids"]) or set(fetch_ids) != set(rec["fetch_ids"]):
            hood = self.neighbourhood(sorted(seeds), ask.flt, plan.limit, fetch_ids)
        else:
            hood = self._hood_from(tx, rec, sorted(seeds), ask)
        return Expansion(found, seeds, hood)

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

    @staticmethod
    def _pairs(
        tx: _Reader, query: LiteralString, params: dict[str, Any]
    ) -> list[tuple[str, float]]:
        return [(str(r["id"]), float(r["score"])) for r in tx.run(query, params)]

    def _vector_search(
        self, tx: _Reader, k: int, where: LiteralString, params: dict[str, Any]
    ) -> list[tuple[str, float]]:
        """ANN with over-fetch, filter inside; exact scan of the admitted set when it starves.

        Every admitted candidate is re-scored with the exact cosine (the index's own scores
        are quantised and vary with the fetch size), so a memory's score does not depend on k,
        ties break by id, and scores match the embedded store's.
        """
        ann = _cypher(_Q_VECTOR_ANN).replace("%FILTER%", where)
        n = max(k * _OVERFETCH, _MIN_FETCH)
        counted: int | None = None
        while True:
            rec = tx.run(ann, {**params, "n": n}).single(strict=True)
            hits = [(str(i), float(s)) for i, s in rec["hits"]]
            if rec["found"] >= k:
                return _top(hits, k)
            if rec["raw"] < n:
                break  # every indexed vector was seen; all-zero embeddings are not indexed
            if counted is None:
                count_query = _cypher(_Q_COUNT_ADMITTED_VECTORS).replace("%FILTER%", where)
                counted = int(tx.run(count_query, params).single(strict=True)["n"])
                if counted <= len(hits):
                    return _top(hits, k)
                if counted <= _EXACT_MAX:
                    break
            if n >= _ANN_MAX:
                break
            n = min(n * 4, _ANN_MAX)
        exact = _cypher(_Q_VECTOR_EXACT).replace("%FILTER%", where)
        return self._pairs(tx, exact, params)

    def raw_vector_query(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """A bare ``db.index.vector.queryNodes`` call (no filter, no re-scoring), for benchmarks.

        Scores are ``2s - 1`` of the index's score, i.e. the index's (quantised) cosine.
        """
        if k <= 0:
            return []
        params = {"index": VECTOR_INDEX, "n": int(k), "q": [float(v) for v in vector]}

        def read(tx: _Reader) -> list[tuple[str, float]]:
            return [
                (str(r["id"]), 2.0 * float(r["score"]) - 1.0)
                for r in tx.run(
                    "CALL db.index.vector.queryNodes($index, $n, $q) YIELD node, score "
                    "RETURN node.id AS id, score",
                    params,
                )
            ]

        return self._guard("searching the vector index", lambda: self._read(read))

    def text_search(self, query: str, k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        lucene = lucene_query(query)
        if not lucene or k <= 0:
            return []
        where, params = _filter_clause(flt)
        params.update({"index": TEXT_INDEX, "q": lucene})
        cypher = _cypher(_Q_TEXT).replace("%FILTER%", where)

        def read(tx: _Reader) -> list[tuple[str, float]]:
            n = max(k * _OVERFETCH, _MIN_FETCH)
            while True:
                rec = tx.run(cypher, {**params, "n": n}).single(strict=True)
                hits = [(str(i), float(s) * _BM25_SCALE) for i, s in rec["hits"]]
                if len(hits) >= k or rec["raw"] < n:
                    return _top(hits, k)
                n *= 4

        return self._guard("searching text", lambda: self._read(read))

    def filter_ids(self, ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return set()
        where, params = _filter_clause(flt)
        params["ids"] = id_list
        query = _cypher(_Q_FILTER_IDS).replace("%FILTER%", where)

        def read(tx: _Reader) -> set[str]:
            return {str(i) for i in tx.run(query, params).single(strict=True)["ids"]}

        return self._guard("filtering memories", lambda: self._read(read))

    def rank_fields(self, ids: Iterable[str], flt: MemoryFilter) -> dict[str, RankFields]:
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        return self._guard(
            "reading ranking fields",
            lambda: self._read(lambda tx: _read_rank_fields(tx, flt, id_list)),
        )

    def neighbourhood(
        self, ids: Sequence[str], flt: MemoryFilter, limit: int, fetch: Sequence[str] = ()
    ) -> Neighbourhood:
        """Lineage edges, siblings through both hub types, the neighbours' ranking fields and
        the ``fetch`` memories in ONE query (see ``siblings``); a tie group cut by the limit in
        a big hub costs one more query."""
        return self._hood(
            ids, flt, limit, SIBLING_EDGES, lineage=True, what="expanding", fetch=fetch
        )

    def _hood(
        self,
        ids: Sequence[str],
        flt: MemoryFilter,
        limit: int,
        vias: Sequence[str],
        *,
        lineage: bool,
        what: str,
        fetch: Sequence[str] = (),
    ) -> Neighbourhood:
        """``neighbourhood`` through the given hub types, with or without lineage edges."""
        unique = list(dict.fromkeys(ids))
        if not unique:
            siblings: dict[str, dict[str, list[tuple[str, str]]]] = {via: {} for via in vias}
            return Neighbourhood([], siblings, {}, self.get_memories(fetch, embeddings=False))
        where, params = _filter_clause(flt)
        params.update(
            {
                "ids": unique,
                "limit": max(int(limit), 0),
                "small": _SMALL_HUB,
                "fetch": list(dict.fromkeys(fetch)),
            }
        )
        query = _neighbourhood_query(where, vias, lineage)
        ask = _HoodAsk(flt, params["limit"], tuple(vias), lineage, where, params)

        def read(tx: _Reader) -> Neighbourhood:
            return self._hood_from(tx, tx.run(query, params).single(strict=True), unique, ask)

        return self._guard(what, lambda: self._read(read))

    def _hood_from(self, tx: _Reader, rec: Record, ids: list[str], ask: _HoodAsk) -> Neighbourhood:
        """The ``Neighbourhood`` of the seeds ``ids`` (keyed in that order) in a record of
        ``_hood_query``'s ``seeds`` and ``fetched``; a tie group a big hub's limit cut is read
        in ``tx``."""
        limit, vias = ask.limit, ask.vias
        siblings: dict[str, dict[str, list[tuple[str, str]]]] = {
            via: {mid: [] for mid in ids} for via in vias
        }
        columns = _hood_columns(vias, ask.lineage)
        edges: dict[tuple[str, str, str, str], Edge] = {}
        fields: dict[str, RankFields] = {}
        found: dict[str, dict[str, list[tuple[int, str, str]]]] = {v: {} for v in vias}

        def big_hub_side(
            side: Sequence[Sequence[Any]], via: str, mid: str, hub: str
        ) -> list[tuple[str, int]]:
            """(member, micros) nearest first, with the tie group the limit cut, if any."""
            rows = [(str(o), int(t)) for o, t, *_ in side]
            for other, _, *values in side:
                fields[str(other)] = _rank_fields(values)
            if limit > 0 and len(rows) > limit and rows[limit][1] == rows[limit - 1][1]:
                tie_query = _sibling_query(_Q_SIBLINGS_AT, via, ask.where)
                return self._tie_group(tx, tie_query, ask.params, mid, hub, rows, limit)
            return rows

        for seed_id, seed_at, *entry in rec["seeds"]:
            mid, at, part = str(seed_id), int(seed_at), dict(zip(columns, entry, strict=True))
            if ask.lineage:
                _add_lineage(part["lineage"], edges, fields)
            for via in vias:
                bucket = found[via].setdefault(mid, [])
                for hub, near, later, earlier in part[f"{via}_hubs"]:
                    for other, gap, *values in near:
                        fields[str(other)] = _rank_fields(values)
                        bucket.append((int(gap), str(other), str(hub)))
                    for side in (later, earlier):
                        rows = big_hub_side(side, via, mid, str(hub))
                        bucket.extend((abs(t - at), o, str(hub)) for o, t in rows)
        for via in vias:
            _pick_nearest(found[via], limit, siblings[via])
        picked = {o for by_seed in siblings.values() for b in by_seed.values() for o, _ in b}
        unscored = picked - fields.keys()
        if unscored:  # tie groups add members the query did not score
            fields.update(_read_rank_fields(tx, ask.flt, sorted(unscored)))
        seeds = set(ids)
        wanted = picked | {b for _, x, y, _ in edges for a, b in ((x, y), (y, x)) if a in seeds}
        order = sorted(edges, key=lambda i: (_LINEAGE_ORDER[i[0]], i[1:]))
        return Neighbourhood(
            [edges[i] for i in order],
            siblings,
            {mid: f for mid, f in fields.items() if mid in wanted},
            {m.id: m for m in map(_memory_from_props, rec["fetched"])},
        )

    def statuses(self, ids: Iterable[str]) -> dict[str, str]:
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}

        def read(tx: _Reader) -> dict[str, str]:
            pairs = tx.run(_Q_STATUSES, {"ids": id_list}).single(strict=True)["pairs"]
            return {str(i): str(status) for i, status in pairs}

        return self._guard("reading statuses", lambda: self._read(read))

    def siblings(
        self, ids: Sequence[str], via: str, flt: MemoryFilter, limit: int
    ) -> dict[str, list[tuple[str, str]]]:
        """Memories sharing a ``via`` hub with each id, nearest in time first, then by id.

        A hub with at most ``_SMALL_HUB`` members is read whole. A bigger one is walked
        outwards from the seed's time through the (task|episode, created_at) index, so its
        cost does not grow with its size; that path finds the members whose ``task`` (or
        ``episode``) property names the hub, which the write path always sets with the edge.
        """
        if via not in SIBLING_EDGES:
            raise ValidationError(f"siblings via {via!r}: use one of {SIBLING_EDGES}")
        hood = self._hood(ids, flt, limit, (via,), lineage=False, what="finding siblings")
        return hood.siblings[via]

    @staticmethod
    def _tie_group(
        tx: _Reader,
        query: LiteralString,
        params: dict[str, Any],
        mid: str,
        hub: str,
        rows: list[tuple[str, int]],
        limit: int,
    ) -> list[tuple[str, int]]:
        """Rows before the instant the limit cut through, plus everyone at that instant."""
        cut = rows[limit - 1][1]
        secs, micros = divmod(cut, 1_000_000)
        args = {**params, "id": mid, "hub": hub, "secs": secs, "nanos": micros * 1000}
        tied = tx.run(query, args).single(strict=True)["ids"]
        return [r for r in rows if r[1] != cut] + [(str(o), cut) for o in tied]

    def counts(self) -> dict[str, int]:
        parts = [_cypher(_Q_COUNT_LABEL, L=label) for label in sorted(NODE_LABELS)]
        parts += [_cypher(_Q_COUNT_TYPE, T=etype) for etype in EDGE_TYPES]
        query = " UNION ALL ".join(parts)

        def read(tx: _Reader) -> dict[str, int]:
            return {str(r["name"]): int(r["n"]) for r in tx.run(query) if r["n"]}

        return self._guard("counting", lambda: self._read(read))

    def iter_nodes(self) -> Iterator[Node]:
        labels = sorted(NODE_LABELS - {MEMORY})
        query = " UNION ALL ".join(_cypher(_Q_ALL_NODES, L=label) for label in labels)

        def read(tx: _Reader) -> list[Node]:
            return [
                Node(str(r["label"]), str(r["id"]), _node_props(r["props"])) for r in tx.run(query)
            ]

        nodes = self._guard("exporting nodes", lambda: self._read(read))
        yield from sorted(nodes, key=lambda n: (n.label, n.id))

    def iter_edges(self) -> Iterator[Edge]:
        def read(tx: _Reader) -> list[Edge]:
            out = []
            for r in tx.run(_Q_ALL_EDGES):
                if r["type"] not in EDGE_TYPES:
                    continue
                props = dict(r["props"])
                out.append(
                    Edge(
                        str(r["type"]),
                        str(r["src"]),
                        str(r["dst"]),
                        _edge_props(props),
                        str(props.get("key", "")),
                    )
                )
            return out

        edges = self._guard("exporting edges", lambda: self._read(read))
        yield from sorted(edges, key=lambda e: (e.type, e.src, e.dst, e.key))

    # -- admin --------------------------------------------------------------------------------

    def wipe(self) -> None:
        """Delete every node and relationship and drop the vector index; keep the rest of the
        schema. The embedder is forgotten, so the next ``ensure_embedder`` records anew.

        The full-text index is rebuilt empty: Lucene keeps counting deleted documents in its
        BM25 statistics until segments merge, so text scores after a wipe would otherwise
        differ from the same data loaded into a fresh store.
        """

        def run() -> None:
            with self._session() as session:
                while True:
                    rec = session.run(_Q_WIPE_CHUNK, {"chunk": _DELETE_CHUNK}).single(strict=True)
                    if not rec["n"]:
                        break
                for index in (VECTOR_INDEX, TEXT_INDEX):
                    session.run(_cypher("DROP INDEX %I% IF EXISTS", I=index)).consume()
            self._embedder = None

        self._guard("wiping the store", run)
        self._apply_schema()

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
