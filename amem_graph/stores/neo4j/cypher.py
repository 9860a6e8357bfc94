"""Cypher text shared by the store's queries: checked names in templates, the filter as a clause,
the Lucene query, and the projections of a memory and its ranking fields."""

from __future__ import annotations

import re
from typing import Any, Final, LiteralString

from amem_graph.core.models import Memory
from amem_graph.core.schema import check_identifier
from amem_graph.core.text import analyze
from amem_graph.stores.base import MemoryFilter
from amem_graph.stores.neo4j.props import _MEMORY_TIMES, _aware

#: Lucene's default limit on clauses in one query is 1024
_MAX_TERMS: Final = 1000
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


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


def lucene_query(text: str) -> str:
    """A Lucene query that ORs the analysed terms of ``text``, each quoted and escaped.

    Terms come from ``text.analyze`` (the embedded store's BM25 analyzer) and the index holds
    each memory's terms under the 'whitespace' analyzer, so both stores score the same terms
    with the same BM25. Operators in the input (AND, OR, NOT, +, -, *, ~, :, ...) are plain
    text: no injection, no parse errors. Empty when ``text`` has no terms.
    """
    terms = list(dict.fromkeys(analyze(text)))[:_MAX_TERMS]
    return " OR ".join('"' + _LUCENE_SPECIAL.sub(r"\\\1", t) + '"' for t in terms)


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

#: microseconds since the epoch of a memory's created_at (exact integer arithmetic)
_MICROS: Final = "(%V%.created_at.epochSeconds * 1000000 + %V%.created_at.nanosecond / 1000)"
#: a memory's ``RankFields`` in order (defaults as in ``Memory`` for a missing property)
_RANK_FIELDS: Final = (
    "%MICROS_M%, coalesce(m.importance, 0.5), coalesce(m.successes, 0.0), coalesce(m.failures, 0.0)"
).replace("%MICROS_M%", _MICROS.replace("%V%", "m"))
