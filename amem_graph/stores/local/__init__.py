"""The embedded store: SQLite (the truth) with numpy, BM25 and sibling-hub mirrors for reads."""

from amem_graph.stores.local.store import LocalStore

__all__ = ["LocalStore"]
