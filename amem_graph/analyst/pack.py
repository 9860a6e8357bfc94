"""The Cypher analyst pack: read-only, parameterised questions about a Neo4j memory graph.

Each query is one ``amem_graph/cypher/<name>.cypher`` file (shipped in the wheel) whose leading
comment block is its metadata::

    // name: blast_radius                       (must equal the file name)
    // question: What would retracting this memory touch? ...   (continues on "//   " lines)
    // param: $memory_id (string, required) the root memory
    // param: $limit (int, default 20) how many rows
    // param: $since (datetime, optional) ...
    // returns: memory_id, memories, ...

Parameter types are ``string``, ``int``, ``float``, ``bool`` and ``datetime`` (an aware
datetime, or an ISO 8601 string with a timezone); optional parameters without a default are
sent as null. Every ``$name`` the body uses must be declared, and every declared one used.

Queries run in a READ transaction (READ routing and access mode: the server refuses writes),
and, as a second line of defence, text with a write clause is refused before it is sent.
Values come back JSON-ready: Neo4j temporal values as ISO 8601 strings.
"""

from __future__ import annotations

import importlib.resources
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from amem_graph.core.codec import json_ready
from amem_graph.core.errors import (
    NotFoundError,
    ValidationError,
)
from amem_graph.core.models import ensure_aware
from amem_graph.stores.base import CypherReader, GraphStore

PARAM_TYPES: Final = ("string", "int", "float", "bool", "datetime")
DEFAULT_TIMEOUT: Final = 60.0
_SCHEMA_FILE: Final = "schema"

_HEADER_KEY = re.compile(r"^//\s*(name|question|param|returns|note):\s*(.*)$")
_PARAM = re.compile(
    r"^\$(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(\s*(?P<type>\w+)\s*"
    r"(?:,\s*(?P<mode>required|optional|default\s+(?P<default>[^)]*?)))?\s*\)\s*(?P<doc>.*)$"
)
_USED_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_LITERALS = re.compile(
    r"""//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`[^`]*`""", re.DOTALL
)
#: clauses that change data or schema; matched as keywords, not as property or label names
_WRITE_CLAUSE = re.compile(
    r"(?<![\w.:$])(CREATE|MERGE|SET|DELETE|REMOVE|DETACH|DROP|FOREACH|LOAD\s+CSV|"
    r"IN\s+TRANSACTIONS|ALTER|RENAME|GRANT|DENY|REVOKE)(?![\w])",
    re.IGNORECASE,
)
#: procedure calls (``CALL name.space(``); subqueries (``CALL {`` / ``CALL (x) {``) are fine
_PROCEDURE_CALL = re.compile(r"(?<![\w.])CALL\s+([A-Za-z_][\w.]*)\s*\(", re.IGNORECASE)
_READ_ONLY_PROCEDURES: Final = frozenset(
    {
        "db.index.vector.querynodes",
        "db.index.fulltext.querynodes",
        "db.labels",
        "db.relationshiptypes",
        "db.propertykeys",
    }
)


@dataclass(frozen=True)
class Param:
    """One declared parameter of a query."""

    name: str
    type: str
    required: bool = False
    default: Any = None
    doc: str = ""

    def describe(self) -> str:
        """``$name (type, required|default X|optional)`` as in the header."""
        mode = (
            "required"
            if self.required
            else "optional"
            if self.default is None
            else f"default {self.default}"
        )
        return f"${self.name} ({self.type}, {mode})"


@dataclass(frozen=True)
class AnalystQuery:
    """A parsed query file: its metadata and its Cypher text."""

    name: str
    question: str
    params: tuple[Param, ...]
    returns: tuple[str, ...]
    text: str
    note: str = ""

    def param(self, name: str) -> Param | None:
        """The declared parameter ``name``, if any."""
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class QueryResult:
    """Rows of one run, as JSON-ready values in ``columns`` order."""

    query: str
    params: dict[str, Any]
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        """Rows as column -> value dicts."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``amem --json cypher``."""
        return {
            "query": self.query,
            "params": json_ready(self.params),
            "columns": self.columns,
            "rows": self.records(),
        }


# -- parsing --------------------------------------------------------------------------------


def convert(value: Any, type_name: str, what: str) -> Any:
    """Turn a given value (or a command-line string) into the declared type."""
    if value is None:
        return None
    if type_name not in _CONVERTERS:
        raise ValidationError(f"{what}: unknown type {type_name!r}; known: {list(PARAM_TYPES)}")
    try:
        return _CONVERTERS[type_name](value)
    except ValueError as exc:
        raise ValidationError(f"{what}: {exc} (got {value!r})") from None


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("expected an integer")
    try:
        return int(value)
    except ValueError:
        raise ValueError("expected an integer") from None


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("expected a number")
    try:
        number = float(value)
    except ValueError:
        raise ValueError("expected a number") from None
    if not math.isfinite(number):
        raise ValueError("expected a finite number")
    return number


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.lower() in ("true", "yes", "1")
    raise ValueError("expected true or false")


def _datetime(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("expected an ISO 8601 time, e.g. 2026-01-05T09:30:00Z") from None
    if not isinstance(value, datetime):
        raise ValueError("expected a datetime")
    return ensure_aware(value)


_CONVERTERS: Final[dict[str, Callable[[Any], Any]]] = {
    "string": _string,
    "int": _int,
    "float": _float,
    "bool": _bool,
    "datetime": _datetime,
}


def _parse_param(spec: str, where: str) -> Param:
    match = _PARAM.match(spec.strip())
    if match is None:
        raise ValidationError(
            f"{where}: bad param line {spec!r}; write `$name (type, required|optional|"
            "default VALUE) what it is`"
        )
    type_name = match["type"]
    if type_name not in PARAM_TYPES:
        raise ValidationError(f"{where}: param ${match['name']} has unknown type {type_name!r}")
    mode = match["mode"] or "optional"
    default = None
    if match["default"] is not None:
        default = convert(
            match["default"].strip(), type_name, f"{where}: default of ${match['name']}"
        )
    return Param(match["name"], type_name, mode == "required", default, match["doc"].strip())


def body_of(text: str) -> str:
    """The Cypher without comments, string literals and quoted names (for keyword checks)."""
    return _LITERALS.sub(lambda m: " " if m.group(0).startswith("/") else "''", text)


def check_read_only(text: str, where: str = "query") -> None:
    """Refuse text containing a write clause or a procedure call that is not known read-only."""
    body = body_of(text)
    clause = _WRITE_CLAUSE.search(body)
    if clause is not None:
        keyword = " ".join(clause.group(1).upper().split())
        raise ValidationError(f"{where} contains the write clause {keyword}; analyst queries read")
    for call in _PROCEDURE_CALL.finditer(body):
        if call.group(1).lower() not in _READ_ONLY_PROCEDURES:
            raise ValidationError(
                f"{where} calls procedure {call.group(1)}, which is not known to be read-only"
            )


def parse_query(text: str, filename: str) -> AnalystQuery:
    """Parse a query file's header and check it against its body."""
    meta: dict[str, list[str]] = {}
    params: list[str] = []
    last: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("//"):
            break
        match = _HEADER_KEY.match(stripped)
        if match is not None:
            last = match[1]
            if last == "param":
                params.append(match[2])
            else:
                meta.setdefault(last, []).append(match[2])
        elif last is not None and stripped.strip("/ "):
            continuation = stripped.lstrip("/").strip()
            if last == "param":
                params[-1] += " " + continuation
            else:
                meta[last].append(continuation)
    name = " ".join(meta.get("name", [])).strip()
    if name != filename:
        raise ValidationError(f"{filename}.cypher: header names {name!r}, not {filename!r}")
    question = " ".join(meta.get("question", [])).strip()
    if not question:
        raise ValidationError(f"{filename}.cypher: header has no `// question:` line")
    declared = tuple(_parse_param(p, f"{filename}.cypher") for p in params)
    used = set(_USED_PARAM.findall(body_of(text)))
    names = {p.name for p in declared}
    if used != names:
        raise ValidationError(
            f"{filename}.cypher: the body uses {sorted(used)} but the header declares "
            f"{sorted(names)}"
        )
    check_read_only(text, f"{filename}.cypher")
    returns = " ".join(meta.get("returns", []))
    return AnalystQuery(
        name=name,
        question=question,
        params=declared,
        returns=tuple(c.strip() for c in returns.split(",") if c.strip()),
        text=text,
        note=" ".join(meta.get("note", [])).strip(),
    )


# -- the pack -------------------------------------------------------------------------------


def _folder() -> Any:
    return importlib.resources.files("amem_graph") / "cypher"


def query_names() -> list[str]:
    """Names of the packaged analyst queries (every .cypher file but the schema)."""
    return sorted(
        entry.name.removesuffix(".cypher")
        for entry in _folder().iterdir()
        if entry.name.endswith(".cypher") and entry.name != f"{_SCHEMA_FILE}.cypher"
    )


def load_query(name: str) -> AnalystQuery:
    """One packaged query by name; NotFoundError lists the known ones."""
    if name == _SCHEMA_FILE or name not in query_names():
        raise NotFoundError(f"no analyst query {name!r}", hint=f"known: {', '.join(query_names())}")
    text = (_folder() / f"{name}.cypher").read_text(encoding="utf-8")
    return parse_query(text, name)


def list_queries() -> list[AnalystQuery]:
    """Every packaged query, parsed (a malformed file raises here, naming it)."""
    return [load_query(name) for name in query_names()]


def bind(query: AnalystQuery, given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters to send: given values converted to their types, defaults filled in."""
    unknown = set(given) - {p.name for p in query.params}
    if unknown:
        known = ", ".join(p.describe() for p in query.params) or "none"
        raise ValidationError(
            f"{query.name} has no parameter(s) {sorted(unknown)}; it takes: {known}"
        )
    out: dict[str, Any] = {}
    for p in query.params:
        value = convert(given.get(p.name), p.type, f"{query.name}: ${p.name}")
        if value is None and p.required:
            raise ValidationError(
                f"{query.name} needs ${p.name} ({p.type}): {p.doc}",
                hint=f"pass --param {p.name}=VALUE",
            )
        out[p.name] = p.default if value is None else value
    return out


def parse_assignments(pairs: Sequence[str]) -> dict[str, str]:
    """``k=v`` strings from the command line into a dict; a repeated key is an error."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().lstrip("$")
        if not sep or not key:
            raise ValidationError(f"--param {pair!r}: write NAME=VALUE")
        if key in out:
            raise ValidationError(f"--param {key} is given twice")
        out[key] = value
    return out


# -- running --------------------------------------------------------------------------------


def run_read(
    store: GraphStore,
    cypher: str,
    params: Mapping[str, Any] | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    what: str = "query",
) -> tuple[list[str], list[list[Any]]]:
    """Run read-only Cypher on a store that can (``CypherReader``); (columns, JSON-ready rows)."""
    if timeout <= 0:
        raise ValidationError(f"timeout must be positive, got {timeout}")
    if not isinstance(store, CypherReader):
        raise ValidationError(
            f"analyst queries run on Neo4j, not on the {store.backend} store",
            hint="pass --store bolt://HOST:PORT (or export the graph and import it into Neo4j)",
        )
    return store.run_read_query(cypher, params or {}, timeout=timeout, what=what)


def run_query(
    store: GraphStore,
    query: str | AnalystQuery,
    params: Mapping[str, Any] | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> QueryResult:
    """Run one analyst query (by name or parsed) with validated parameters."""
    parsed = load_query(query) if isinstance(query, str) else query
    check_read_only(parsed.text, parsed.name)
    bound = bind(parsed, params or {})
    columns, rows = run_read(store, parsed.text, bound, timeout=timeout, what=parsed.name)
    return QueryResult(query=parsed.name, params=bound, columns=columns, rows=rows)


def show_indexes(store: GraphStore) -> list[dict[str, Any]]:
    """The database's indexes (``SHOW INDEXES``), as the ``amem neo4j init`` report."""
    columns, rows = run_read(
        store,
        "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state "
        "RETURN name, type, entityType, labelsOrTypes, properties, state ORDER BY name",
        what="SHOW INDEXES",
    )
    return [dict(zip(columns, row, strict=True)) for row in rows]
