"""Storage backends behind the ``GraphStore`` protocol."""

from amem_graph.stores.base import (
    Edge,
    EdgeWrite,
    GraphStore,
    MemoryFilter,
    MemoryUpdate,
    Node,
    NodeWrite,
    WriteBatch,
)

__all__ = [
    "Edge",
    "EdgeWrite",
    "GraphStore",
    "MemoryFilter",
    "MemoryUpdate",
    "Node",
    "NodeWrite",
    "WriteBatch",
]
