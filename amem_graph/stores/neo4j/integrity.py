"""``index_problems`` for Neo4j: indexes that are not ONLINE, and memories the vector or
full-text index cannot serve (a vector of the wrong size, no analysed search text)."""

from __future__ import annotations

from typing import Final

from amem_graph.stores.neo4j.connection import _Reader
from amem_graph.stores.neo4j.schema import Neo4jSchema

_Q_OFFLINE: Final = "SHOW INDEXES YIELD name, state WHERE state <> 'ONLINE' RETURN name, state"
_Q_MEMORIES: Final = """
MATCH (m:Memory)
RETURN sum(CASE WHEN m.embedding IS NOT NULL AND size(m.embedding) <> $dims THEN 1 ELSE 0 END)
    AS bad_vectors,
  sum(CASE WHEN m.search_terms IS NULL THEN 1 ELSE 0 END) AS no_text
"""


class Neo4jIntegrity(Neo4jSchema):
    """What the server's indexes need of every memory."""

    def index_problems(self) -> list[str]:
        dims = self._dims()

        def read(tx: _Reader) -> list[str]:
            out = [f"index {r['name']} is {r['state']}" for r in tx.run(_Q_OFFLINE)]
            row = tx.run(_Q_MEMORIES, dims=dims).single()
            if row is not None and row["bad_vectors"]:
                out.append(f"{row['bad_vectors']} stored vectors do not have {dims} dimensions")
            if row is not None and row["no_text"]:
                out.append(f"{row['no_text']} memories have no search text (full-text index)")
            return out

        return self._guard("checking indexes", lambda: self._read(read))
