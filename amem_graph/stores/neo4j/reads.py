"""Reads of stored records: memories, nodes, edges, statuses, filters and ranking fields."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, LiteralString

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import Memory
from amem_graph.core.schema import EDGE_TYPES, MEMORY, check_identifier, check_label
from amem_graph.stores.base import Direction, Edge, Gist, MemoryFilter, Node, RankFields
from amem_graph.stores.neo4j.connection import Neo4jConnection, _Reader
from amem_graph.stores.neo4j.cypher import _MEMORY_PROJECTION, _RANK_FIELDS, _cypher, _filter_clause
from amem_graph.stores.neo4j.props import _aware, _edge_props, _memory_from_props, _node_props

_Q_GET_MEMORIES: Final = (
    "UNWIND $ids AS id MATCH (m:Memory {id: id}) RETURN collect(m {%P%, .embedding}) AS rows"
).replace("%P%", _MEMORY_PROJECTION)
_Q_GET_MEMORIES_NO_VECTORS: Final = (
    "UNWIND $ids AS id MATCH (m:Memory {id: id}) RETURN collect(m {%P%}) AS rows"
).replace("%P%", _MEMORY_PROJECTION)
_Q_RANK_FIELDS: Final = """
MATCH (m:Memory)
USING INDEX m:Memory(id)
WHERE m.id IN $ids AND %FILTER%
RETURN collect([m.id, %FIELDS%]) AS rows
""".replace("%FIELDS%", _RANK_FIELDS)
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
#: an existential subquery per agent: it stops at the first admitted memory. A seek of the
#: agent index is named (a bare index hint may be met by scanning the whole index): most
#: candidates are words of the query that no memory has as its agent, so a seek finds nothing,
#: but a planner that knows a handful of agents and ten scopes seeks the scope's memories
#: instead and filters every one by agent, for every candidate (46 of them for a five-word
#: query: 46k rows and 250 ms a recall on a 10k store of 10 scopes; 460k and 3 s on 100k)
#: ``authors``: those of ``$agents`` with a memory the filter admits, each sought through the
#: agent index (``search_expand`` runs it as a subquery too)
_Q_AUTHORS: Final = """
UNWIND $agents AS aid
WITH aid WHERE EXISTS {
  MATCH (m:Memory) USING INDEX SEEK m:Memory(agent) WHERE m.agent = aid AND %FILTER%
}
RETURN collect(aid) AS ids
"""
#: ``episode_tails``: per (scope, episode, time), the newest memory at or before the time. The
#: order names the index's leading properties too, so the planner reads the index backwards
#: and stops at the first memory (an episode of 5,000 memories: 32 db hits, against 12,028
#: ordered by time alone, which sorts every member before the time); the index holds the
#: scope, so an episode other scopes share is not read through their memories
_Q_EPISODE_TAILS: Final = """
UNWIND $rows AS r
CALL {
  WITH r
  MATCH (m:Memory) USING INDEX SEEK m:Memory(episode, scope, created_at)
  WHERE m.episode = r.episode AND m.scope = r.scope AND m.created_at <= r.at
  RETURN m ORDER BY m.episode DESC, m.scope DESC, m.created_at DESC, m.id DESC LIMIT 1
}
RETURN collect([r.scope, r.episode, m {%P%, .embedding}]) AS rows
""".replace("%P%", _MEMORY_PROJECTION)
#: ``one_per_scope``: a seek of the scope index per scope, stopped at its first admitted memory
_Q_ONE_PER_SCOPE: Final = """
UNWIND $scopes AS sid
CALL {
  WITH sid
  MATCH (m:Memory) WHERE m.scope = sid AND %FILTER%
  RETURN m.id AS mid LIMIT 1
}
RETURN collect([sid, mid]) AS pairs
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


def _rank_fields(values: Sequence[Any]) -> RankFields:
    """``RankFields`` of the values ``_RANK_FIELDS`` projects."""
    micros, importance, successes, failures = values
    return RankFields(micros / 1e6, float(importance), float(successes), float(failures))


def _read_rank_fields(tx: _Reader, flt: MemoryFilter, ids: list[str]) -> dict[str, RankFields]:
    where, params = _filter_clause(flt)
    params["ids"] = ids
    query = _cypher(_Q_RANK_FIELDS).replace("%FILTER%", where)
    rows = tx.run(query, params).single(strict=True)["rows"]
    return {str(mid): _rank_fields(values) for mid, *values in rows}


class Neo4jReads(Neo4jConnection):
    """Lookups by id or property, and the filter and ranking reads recall runs on ids."""

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

    def gists(self, ids: Sequence[str]) -> dict[str, Gist]:
        """From whole memories: one round trip either way, and recall reads a server store's
        likely hits whole (``reads_ahead``), so this is not on its path."""
        return {mid: Gist.of(m) for mid, m in self.get_memories(ids, embeddings=False).items()}

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

    def filter_ids(self, ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        return self._ids_under(_Q_FILTER_IDS, "ids", ids, flt, "filtering memories")

    def authors(self, agent_ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        return self._ids_under(_Q_AUTHORS, "agents", agent_ids, flt, "finding authors")

    def episode_tails(
        self, wanted: Mapping[tuple[str, str], datetime]
    ) -> dict[tuple[str, str], Memory]:
        """A seek of the (episode, scope, created_at) index per key, newest first, stopped at
        the first memory."""
        rows = [{"scope": s, "episode": e, "at": _aware(at)} for (s, e), at in wanted.items()]
        if not rows:
            return {}

        def read(tx: _Reader) -> dict[tuple[str, str], Memory]:
            found = tx.run(_Q_EPISODE_TAILS, {"rows": rows}).single(strict=True)["rows"]
            return {(str(s), str(e)): _memory_from_props(props) for s, e, props in found}

        return self._guard("reading episodes", lambda: self._read(read))

    def one_per_scope(self, flt: MemoryFilter) -> dict[str, str]:
        if flt.scopes is None:
            raise ValidationError("one_per_scope needs a filter with scopes")
        where, params = _filter_clause(flt)
        params["scopes"] = list(dict.fromkeys(flt.scopes))
        query = _cypher(_Q_ONE_PER_SCOPE).replace("%FILTER%", where)

        def read(tx: _Reader) -> dict[str, str]:
            pairs = tx.run(query, params).single(strict=True)["pairs"]
            return {str(scope): str(mid) for scope, mid in pairs}

        return self._guard("finding scopes", lambda: self._read(read))

    def _ids_under(
        self,
        statement: LiteralString,
        key: str,
        values: Iterable[str],
        flt: MemoryFilter,
        what: str,
    ) -> set[str]:
        """The ids a statement returns for ``values`` (as ``$key``) under the filter."""
        wanted = list(dict.fromkeys(values))
        if not wanted:
            return set()
        where, params = _filter_clause(flt)
        params[key] = wanted
        query = _cypher(statement).replace("%FILTER%", where)

        def read(tx: _Reader) -> set[str]:
            return {str(i) for i in tx.run(query, params).single(strict=True)["ids"]}

        return self._guard(what, lambda: self._read(read))

    def rank_fields(self, ids: Iterable[str], flt: MemoryFilter) -> dict[str, RankFields]:
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        return self._guard(
            "reading ranking fields",
            lambda: self._read(lambda tx: _read_rank_fields(tx, flt, id_list)),
        )

    def statuses(self, ids: Iterable[str]) -> dict[str, str]:
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}

        def read(tx: _Reader) -> dict[str, str]:
            pairs = tx.run(_Q_STATUSES, {"ids": id_list}).single(strict=True)["pairs"]
            return {str(i): str(status) for i, status in pairs}

        return self._guard("reading statuses", lambda: self._read(read))
