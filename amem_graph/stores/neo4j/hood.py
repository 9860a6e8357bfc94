"""The expansion hop: lineage edges and siblings through task and episode hubs, in one query."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, LiteralString

from neo4j import Record

from amem_graph.core.errors import ValidationError
from amem_graph.core.schema import EDGE_TYPES
from amem_graph.stores.base import (
    LINEAGE_EDGES,
    SIBLING_EDGES,
    Edge,
    MemoryFilter,
    Neighbourhood,
    RankFields,
)
from amem_graph.stores.neo4j.connection import _Reader
from amem_graph.stores.neo4j.cypher import (
    _MEMORY_PROJECTION,
    _MICROS,
    _RANK_FIELDS,
    _cypher,
    _filter_clause,
)
from amem_graph.stores.neo4j.props import _edge_props, _memory_from_props
from amem_graph.stores.neo4j.reads import Neo4jReads, _rank_fields

#: ``neighbourhood`` lists lineage edges in this type order, as ``edges`` does
_LINEAGE_ORDER: Final = {t: i for i, t in enumerate(LINEAGE_EDGES)}
#: the memory property naming the same hub as each sibling edge
_SIBLING_PROPS: Final = {"GENERATED_IN": "episode", "FOR_TASK": "task"}
#: hubs with more members than this are walked through the time index, not read whole. A walk
#: costs about what reading a hub of ~20-25 members whole does (A/B on the bench stores,
#: 2026-12-06: episode hubs of 25 walked or read, the same time), and reading grows with the
#: hub; a 200-member hub walked rather than read made recall p50 ~10% faster unscoped at 10k
#: and 12-20% in a scope of 1k among ten (bench/RESULTS.md), with the same hits
_SMALL_HUB: Final = 64


def _one_scope(flt: MemoryFilter) -> bool:
    """Whether ``flt`` names exactly one scope: the hop's walks then seek within it."""
    return flt.scopes is not None and len(flt.scopes) == 1


def _hop_args(limit: int) -> dict[str, int]:
    """The hop's parameters beside the seeds: the fan-out limit and the big-hub threshold."""
    return {"limit": max(int(limit), 0), "small": _SMALL_HUB}


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


def _sibling_query(
    template: LiteralString, via: str, where: LiteralString, one_scope: bool = False
) -> LiteralString:
    """A siblings template with its walks (``_walk``), the hub type's names, the filter and
    the time expressions."""
    names = {"T": via, "H": EDGE_TYPES[via][1], "P": _SIBLING_PROPS[via]}
    template = template.replace("%LATER%", _walk("later", one_scope))
    template = template.replace("%EARLIER%", _walk("earlier", one_scope))
    text = _cypher(template, **names).replace("%FILTER%", where)
    text = text.replace("%FIELDS%", _RANK_FIELDS)
    return text.replace("%MICROS_M%", _MICROS.replace("%V%", "m")).replace(
        "%MICROS_S%", _MICROS.replace("%V%", "s")
    )


def _hood_columns(vias: Sequence[str], lineage: bool) -> list[str]:
    """The parts of each seed's entry in ``_Q_HOOD``'s result, after its id and time."""
    return (["lineage"] if lineage else []) + [f"{via}_hubs" for via in vias]


def _neighbourhood_query(
    where: LiteralString, vias: Sequence[str], lineage: bool, one_scope: bool = False
) -> LiteralString:
    """``neighbourhood``'s query: ``_hood_query`` from ``$ids``, fetching ``$fetch``."""
    head: LiteralString = "WITH $ids AS seed_ids, $fetch AS fetch_ids\n"
    return head + _hood_query(where, vias, lineage, one_scope) + "RETURN seeds, fetched"


def _hood_query(
    where: LiteralString, vias: Sequence[str], lineage: bool, one_scope: bool = False
) -> LiteralString:
    """``_Q_HOOD`` with a siblings part per hub type in ``vias`` and, if asked, the lineage;
    ``one_scope``: the filter names one scope (``$f_scopes[0]``), which the walks seek by."""
    parts: list[LiteralString] = []
    if lineage:
        text = _cypher(_Q_HOOD_LINEAGE, T="|".join(LINEAGE_EDGES)).replace("%FILTER%", where)
        parts.append(text.replace("%FIELDS%", _RANK_FIELDS))
    parts += [_sibling_query(_Q_HOOD_SIBLINGS, via, where, one_scope) for via in vias]
    columns = ", ".join(_hood_columns(vias, lineage))
    query = _Q_HOOD.replace("%BODY%", "\n".join(parts)).replace("%COLUMNS%", columns)
    return query.replace("%AT%", _MICROS.replace("%V%", "s"))


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
#: per hub of the seed: a small hub read whole, nearest first, then filtered in that order until
#: ``$limit`` are admitted (the CASE stops reading filter properties there: filtering first cost
#: five reads per member, and a 200-member task hub at 10k memories was ~9,000 of recall's 12,500 db
#: hits); a big one walked each way through the (hub property, created_at) index, or (hub property,
#: scope, created_at) for a filter of one scope (``_walk``), its nearest ``$limit`` by time then id
#: (ordered by the index keys then id, the planner keeps the index order and a PartialTop that stops
#: once the limit's tie group is complete: no sort of the hub, and no second query for a tie group
#: the limit cuts; the SEEK hint, because it otherwise chose, in some plans, to scan the whole index
#: in order, or the task-only index and a sort). A big-hub walk starts from an UNWIND of the hub or
#: of nothing: behind ``WITH ... WHERE degree > $small`` the planner ran the index seek for every
#: hub, small ones included, and filtered afterwards (PROFILE of a 10k recall: about 1,100 index
#: rows and 5,600 db hits per recall for walks it threw away). The walk checks a member's edge to
#: the hub only once the filter admits it, in a projection (as an ``EXISTS`` in the ``WHERE`` the
#: planner checked it first, for every member the index gave: in a scope of 1k among ten, 2,000 of a
#: recall's 9,000 db hits; counted after the filter, 24% fewer)
_Q_HOOD_SIBLINGS: Final = """
CALL {
  WITH s
  MATCH (s)-[:%T%]->(h:%H%)
  WITH s, h, COUNT { (h)<-[:%T%]-() } AS degree
  CALL {
    WITH s, h, degree
    WITH s, h WHERE degree <= $small
    MATCH (h)<-[:%T%]-(m:Memory)
    WHERE m <> s
    WITH m, abs(%MICROS_M% - %MICROS_S%) AS gap
    ORDER BY gap, m.id
    WITH collect([m, gap]) AS by_gap
    RETURN reduce(near = [], x IN by_gap | CASE WHEN size(near) >= $limit THEN near
             ELSE near + [m IN [x[0]] WHERE %FILTER% | [m.id, x[1], %FIELDS%]] END) AS near
  }
%LATER%
%EARLIER%
  RETURN collect([h.id, near, later, earlier]) AS %T%_hubs
}
"""
#: one way of a big hub's walk (``%SIDE%``: later, from the seed's time on, or earlier, before
#: it), through the index ``%KEYS%`` (``_walk``): the members whose hub property names the hub,
#: nearest in time first, then by id
_Q_WALK: Final = """
  CALL {
    WITH s, h, degree
    UNWIND CASE WHEN degree > $small THEN [h] ELSE [] END AS big
    CALL {
      WITH s, big
      MATCH (m:Memory)
      USING INDEX SEEK m:Memory(%KEYS%)
      WHERE m.%P% = big.id AND %SCOPE%m.created_at %CMP% s.created_at AND m <> s AND %FILTER%
      WITH m, big, COUNT { (m)-[:%T%]->(big) } AS links
      WITH m, links WHERE links > 0
      WITH m ORDER BY %ORDER%, m.id ASC LIMIT $limit
      RETURN collect([m.id, %MICROS_M%, %FIELDS%]) AS walked
    }
    RETURN coalesce(head(collect(walked)), []) AS %SIDE%
  }"""


def _walk(side: str, one_scope: bool) -> LiteralString:
    """``_Q_WALK`` one way. A filter of one scope walks the (hub property, scope, created_at)
    index, from the seed's time within that scope: the (hub property, created_at) index walks
    every member of a hub that many tenants share (tasks named alike in each) until ``$limit``
    are in the scope, and a tenant holding 20 of a 2,000-member hub read ~6,500 index rows a
    recall (100 tenants of 1k on Neo4j: recall p50 38 against 24 ms on a store of the
    tenant alone, bench/RESULTS.md). The index keys lead the order, so the planner keeps the
    index order and stops at the limit (see ``_Q_HOOD_SIBLINGS``)."""
    later = side == "later"
    way = "ASC" if later else "DESC"
    keys = ["%P%", "scope", "created_at"] if one_scope else ["%P%", "created_at"]
    text = _Q_WALK.replace("%KEYS%", ", ".join(keys)).replace("%SIDE%", side)
    text = text.replace("%SCOPE%", "m.scope = $f_scopes[0] AND " if one_scope else "")
    text = text.replace("%CMP%", ">=" if later else "<")
    return text.replace("%ORDER%", ", ".join(f"m.{key} {way}" for key in keys))


@dataclass(frozen=True, slots=True)
class _HoodAsk:
    """What a ``_hood_query`` record is read against besides its seeds: the filter, fan-out
    limit and parts of the query, and its parameters."""

    flt: MemoryFilter
    limit: int
    vias: tuple[str, ...]
    lineage: bool
    params: dict[str, Any]


class Neo4jHood(Neo4jReads):
    """``neighbourhood`` and ``siblings``: a small hub read whole, a big one walked by time."""

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
                **_hop_args(limit),
                "fetch": list(dict.fromkeys(fetch)),
            }
        )
        query = _neighbourhood_query(where, vias, lineage, _one_scope(flt))
        ask = _HoodAsk(flt, params["limit"], tuple(vias), lineage, params)

        def read(tx: _Reader) -> Neighbourhood:
            return self._hood_from(tx.run(query, params).single(strict=True), unique, ask)

        return self._guard(what, lambda: self._read(read))

    def _hood_from(self, rec: Record, ids: list[str], ask: _HoodAsk) -> Neighbourhood:
        """The ``Neighbourhood`` of the seeds ``ids`` (keyed in that order) in a record of
        ``_hood_query``'s ``seeds`` and ``fetched``."""
        vias = ask.vias
        siblings: dict[str, dict[str, list[tuple[str, str]]]] = {
            via: {mid: [] for mid in ids} for via in vias
        }
        columns = _hood_columns(vias, ask.lineage)
        edges: dict[tuple[str, str, str, str], Edge] = {}
        fields: dict[str, RankFields] = {}
        found: dict[str, dict[str, list[tuple[int, str, str]]]] = {v: {} for v in vias}
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
                    for other, micros, *values in (*later, *earlier):
                        fields[str(other)] = _rank_fields(values)
                        bucket.append((abs(int(micros) - at), str(other), str(hub)))
        for via in vias:
            _pick_nearest(found[via], ask.limit, siblings[via])
        picked = {o for by_seed in siblings.values() for b in by_seed.values() for o, _ in b}
        seeds = set(ids)
        wanted = picked | {b for _, x, y, _ in edges for a, b in ((x, y), (y, x)) if a in seeds}
        order = sorted(edges, key=lambda i: (_LINEAGE_ORDER[i[0]], i[1:]))
        return Neighbourhood(
            [edges[i] for i in order],
            siblings,
            {mid: f for mid, f in fields.items() if mid in wanted},
            {m.id: m for m in map(_memory_from_props, rec["fetched"])},
        )

    def siblings(
        self, ids: Sequence[str], via: str, flt: MemoryFilter, limit: int
    ) -> dict[str, list[tuple[str, str]]]:
        """Memories sharing a ``via`` hub with each id, nearest in time first, then by id.

        A hub with at most ``_SMALL_HUB`` members is read whole. A bigger one is walked outwards
        from the seed's time through the (task|episode, created_at) index, or the (task|episode,
        scope, created_at) one when ``flt`` names one scope, so its cost does not grow with its
        size, nor with other scopes' members of it; that path finds the members whose ``task`` (or
        ``episode``) property names the hub, which the write path always sets with the edge.
        """
        if via not in SIBLING_EDGES:
            raise ValidationError(f"siblings via {via!r}: use one of {SIBLING_EDGES}")
        hood = self._hood(ids, flt, limit, (via,), lineage=False, what="finding siblings")
        return hood.siblings[via]
