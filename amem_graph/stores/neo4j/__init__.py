"""The Neo4j store: vector and full-text indexes, parameterised Cypher, one module per concern."""

from amem_graph.stores.neo4j.store import Neo4jStore

__all__ = ["Neo4jStore"]
