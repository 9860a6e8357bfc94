"""Which store a target names: a path or ``":memory:"`` (embedded) or a bolt/neo4j URI.

The one place that knows both backends, so that neither store imports the other and the
facade imports neither.
"""

from __future__ import annotations

import os
from typing import Any

from amem_graph.core.config import default_store_path
from amem_graph.core.errors import ValidationError
from amem_graph.stores.base import GraphStore

NEO4J_SCHEMES = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")


#: the options an embedded store takes (``LocalStore``'s keywords)
LOCAL_OPTIONS = ("busy_timeout", "ann_threshold", "scope_blocks_bytes", "blas_threads")


def open_store(target: str | os.PathLike[str] | None, **options: Any) -> GraphStore:
    """A store for a path, ``":memory:"`` or a bolt/neo4j URI; ``options`` go to
    ``Neo4jStore.connect`` or ``LocalStore``."""
    where = default_store_path() if target is None else os.fspath(target)
    if where.startswith(NEO4J_SCHEMES):
        from amem_graph.stores.neo4j import Neo4jStore

        return Neo4jStore.connect(where, **options)
    foreign = sorted(set(options) - set(LOCAL_OPTIONS))
    if foreign:
        raise ValidationError(
            f"options {foreign} do not apply to an embedded store (it takes {list(LOCAL_OPTIONS)};"
            " the others are Neo4j's)"
        )
    from amem_graph.stores.local import LocalStore

    return LocalStore(where, **options)


def is_neo4j_uri(target: str) -> bool:
    """Whether ``target`` names a Neo4j server rather than an embedded store."""
    return target.startswith(NEO4J_SCHEMES)
