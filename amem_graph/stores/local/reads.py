"""Reads of stored records straight from SQLite: memories, nodes, counts and the export."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np

from amem_graph.core import codec
from amem_graph.core.models import Memory
from amem_graph.core.schema import MEMORY, check_identifier, check_label
from amem_graph.stores.base import Edge, Gist, MemoryFilter, Node
from amem_graph.stores.local.sqlite import LocalConnection, _chunks

#: a memory's row, with the episode its document names
_Q_MEMORY_ROW = (
    "SELECT json_extract(doc, '$.episode') AS named, doc, embedding FROM memories WHERE id = ?"
)
#: an episode's members in a scope written at or before a time, newest first, ties by the
#: greater id (the mirror's ``newest_members`` order), through the edges' (dst, type) index
_Q_EPISODE_MEMBERS = (
    "SELECT json_extract(m.doc, '$.episode') AS named, m.doc, m.embedding "
    "FROM edges e JOIN memories m ON m.id = e.src "
    "WHERE e.dst = ? AND e.type = 'GENERATED_IN' AND m.scope = ? AND m.created_at <= ? "
    "ORDER BY m.created_at DESC, m.id DESC"
)


@lru_cache(maxsize=2048)
def _parsed(doc: str) -> Memory:
    """A stored document as a Memory. Parsing is most of what hydrating recall's hits costs,
    and the same documents come back query after query; the cache is keyed by the document
    text itself, so a changed row is a new key and is never served stale (Memory is
    frozen, so sharing one is safe)."""
    return Memory.model_validate_json(doc)


class LocalReads(LocalConnection):
    """Lookups by id, filter or property, and whole-store reads, from the SQLite truth."""

    @staticmethod
    def _memory_from_row(row: sqlite3.Row, with_embedding: bool = True) -> Memory:
        memory = _parsed(row["doc"])
        blob = row["embedding"] if with_embedding else None
        if blob is not None:
            vector = np.frombuffer(blob, dtype=np.float32).tolist()
            memory = memory.model_copy(update={"embedding": vector})
        return memory

    def get_memories(self, ids: Sequence[str], *, embeddings: bool = True) -> dict[str, Memory]:
        column = "embedding" if embeddings else "NULL AS embedding"

        def run() -> dict[str, Memory]:
            out: dict[str, Memory] = {}
            unique = list(dict.fromkeys(ids))
            for part in _chunks(unique):
                marks = ",".join("?" * len(part))
                for row in self._db.execute(
                    f"SELECT doc, {column} FROM memories WHERE id IN ({marks})", list(part)
                ):
                    m = self._memory_from_row(row)
                    out[m.id] = m
            return out

        return self._guard("reading memories", run)

    def gists(self, ids: Sequence[str]) -> dict[str, Gist]:
        """The words and time picked out of each stored document by SQLite (no parse of the
        whole memory in Python); the agent from its column (it never changes)."""

        def run() -> dict[str, Gist]:
            out: dict[str, Gist] = {}
            for part in _chunks(list(dict.fromkeys(ids))):
                marks = ",".join("?" * len(part))
                for mid, agent, content, created in self._db.execute(
                    "SELECT id, agent, json_extract(doc, '$.content'), "
                    f"json_extract(doc, '$.created_at') FROM memories WHERE id IN ({marks})",
                    list(part),
                ):
                    out[mid] = Gist(agent, content, datetime.fromisoformat(created))
            return out

        return self._guard("reading memories", run)

    @staticmethod
    def _filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for column, values in (
            ("scope", flt.scopes),
            ("status", flt.statuses),
            ("agent", flt.agents),
            ("task", flt.tasks),
        ):
            if values is not None:
                clauses.append(f"{alias}.{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        if flt.as_of is not None:
            t = flt.as_of.timestamp()
            clauses.append(
                f"{alias}.valid_from <= ? AND ({alias}.valid_to IS NULL OR {alias}.valid_to > ?)"
            )
            params.extend([t, t])
        return (" AND ".join(clauses) or "1"), params

    def find_memories(self, flt: MemoryFilter, limit: int | None = None) -> list[Memory]:
        def run() -> list[Memory]:
            where, params = self._filter_sql(flt)
            sql = f"SELECT doc, embedding FROM memories m WHERE {where} ORDER BY created_at, id"
            if limit is not None:
                sql += " LIMIT ?"
                params.append(int(limit))
            return [self._memory_from_row(r) for r in self._db.execute(sql, params)]

        return self._guard("listing memories", run)

    def episode_tails(
        self, wanted: Mapping[tuple[str, str], datetime]
    ) -> dict[tuple[str, str], Memory]:
        """Each episode's members, newest first; the first whose document names the episode
        (a merged duplicate's edge leads to a memory written elsewhere) is the one.

        From the mirror's hub when the mirror is built (an episode of 5,000 memories: ~0.1
        ms, where SQLite sorts every member through the edges' index: 13 ms), else from
        SQLite: a write does not build the mirror to ask (an ``import_memories`` batch into a
        store nothing has read yet then patched the mirror row by row, 16-18k -> 6.4k
        memories/s)."""

        def run() -> dict[tuple[str, str], Memory]:
            if self._mirror is None:
                return self._episode_tails_sqlite(wanted)
            mirror = self._fresh_mirror()
            out: dict[tuple[str, str], Memory] = {}
            for (scope, episode), at in wanted.items():
                for mid in mirror.newest_members("GENERATED_IN", episode, scope, at.timestamp()):
                    row = self._db.execute(_Q_MEMORY_ROW, (mid,)).fetchone()
                    if row is not None and row["named"] == episode:
                        out[(scope, episode)] = self._memory_from_row(row)
                        break
            return out

        return self._guard("reading episodes", run)

    def _episode_tails_sqlite(
        self, wanted: Mapping[tuple[str, str], datetime]
    ) -> dict[tuple[str, str], Memory]:
        out: dict[tuple[str, str], Memory] = {}
        for (scope, episode), at in wanted.items():
            rows = self._db.execute(_Q_EPISODE_MEMBERS, (episode, scope, at.timestamp()))
            for row in rows:
                if row["named"] == episode:
                    out[(scope, episode)] = self._memory_from_row(row)
                    break
        return out

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, Node]:
        check_label(label)

        def run() -> dict[str, Node]:
            out: dict[str, Node] = {}
            for part in _chunks(list(dict.fromkeys(ids))):
                marks = ",".join("?" * len(part))
                for row in self._db.execute(
                    f"SELECT id, props FROM nodes WHERE label = ? AND id IN ({marks})",
                    [label, *part],
                ):
                    out[row["id"]] = Node(label, row["id"], codec.loads(row["props"]))
            return out

        return self._guard(f"reading {label} nodes", run)

    def find_nodes(self, label: str, where: Mapping[str, Any] | None = None) -> list[Node]:
        check_label(label)
        conditions = dict(where or {})
        for key in conditions:
            check_identifier(key, "property name")

        def run() -> list[Node]:
            nodes = [
                Node(label, row["id"], codec.loads(row["props"]))
                for row in self._db.execute(
                    "SELECT id, props FROM nodes WHERE label = ? ORDER BY id", (label,)
                )
            ]
            return [n for n in nodes if all(n.props.get(k) == v for k, v in conditions.items())]

        return self._guard(f"listing {label} nodes", run)

    def counts(self) -> dict[str, int]:
        def run() -> dict[str, int]:
            out: dict[str, int] = {}
            n = self._db.execute("SELECT count(*) FROM memories").fetchone()[0]
            if n:
                out[MEMORY] = int(n)
            for row in self._db.execute("SELECT label, count(*) AS c FROM nodes GROUP BY label"):
                out[row["label"]] = int(row["c"])
            for row in self._db.execute("SELECT type, count(*) AS c FROM edges GROUP BY type"):
                out[row["type"]] = int(row["c"])
            return out

        return self._guard("counting", run)

    def iter_nodes(self) -> Iterator[Node]:
        rows = self._guard(
            "exporting nodes",
            lambda: self._db.execute(
                "SELECT label, id, props FROM nodes ORDER BY label, id"
            ).fetchall(),
        )
        for row in rows:
            yield Node(row["label"], row["id"], codec.loads(row["props"]))

    def iter_edges(self) -> Iterator[Edge]:
        rows = self._guard(
            "exporting edges",
            lambda: self._db.execute(
                "SELECT type, src, dst, key, props FROM edges ORDER BY type, src, dst, key"
            ).fetchall(),
        )
        for row in rows:
            yield Edge(row["type"], row["src"], row["dst"], codec.loads(row["props"]), row["key"])
