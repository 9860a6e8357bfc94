"""Whole-store reads for export and statistics: counts, every node, every edge."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from amem_graph.core.schema import EDGE_TYPES, MEMORY, NODE_LABELS
from amem_graph.stores.base import Edge, Node
from amem_graph.stores.neo4j.connection import Neo4jConnection, _Reader
from amem_graph.stores.neo4j.cypher import _cypher
from amem_graph.stores.neo4j.props import _edge_props, _node_props

_Q_COUNT_LABEL: Final = "MATCH (n:%L%) RETURN '%L%' AS name, count(n) AS n"
_Q_COUNT_TYPE: Final = "MATCH ()-[r:%T%]->() RETURN '%T%' AS name, count(r) AS n"
_Q_ALL_NODES: Final = "MATCH (n:%L%) RETURN '%L%' AS label, n.id AS id, properties(n) AS props"
_Q_ALL_EDGES: Final = """
MATCH (a)-[r]->(b)
RETURN type(r) AS type, a.id AS src, b.id AS dst, properties(r) AS props
"""


class Neo4jTransfer(Neo4jConnection):
    """Counts and the sorted node and edge iterators ``export`` reads."""

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
