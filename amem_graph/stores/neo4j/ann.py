"""How a query asks the vector index for its nearest memories.

Neo4j 5's index is asked through ``db.index.vector.queryNodes``, which cannot filter: a scope
holding 1% of the store finds about 1% of what it asks for (``plan.py`` copes with that). From
Neo4j 2026.01 the index can also hold ``m.scope`` (``schema.cypher``) and the Cypher 25
``SEARCH`` clause filters by it inside the index, so a small scope of a big store gets its own
nearest neighbours at the cost of an unfiltered search. Queries are written once with an
``%ANN%`` slot and ``ann_query`` fills it either way.
"""

from __future__ import annotations

from typing import Final, LiteralString

from amem_graph.stores.neo4j.connection import server_release
from amem_graph.stores.neo4j.cypher import _cypher

#: the first Neo4j release whose vector index holds filter properties for ``SEARCH``
SCOPED_INDEX_SINCE: Final = (2026, 1)
#: the properties of a vector index that filters by scope, as ``SHOW INDEXES`` lists them
SCOPED_INDEX_PROPERTIES: Final = ["embedding", "scope"]

_PROCEDURE: Final = "CALL db.index.vector.queryNodes(%INDEX%, %N%, %Q%) YIELD node AS m"
#: ``$f_scopes`` is ``cypher._filter_clause``'s scope parameter; only ``IN`` is allowed here
_SEARCH: Final = (
    "MATCH (m:Memory) SEARCH m IN "
    "(VECTOR INDEX %NAME% FOR %Q% WHERE m.scope IN $f_scopes LIMIT %N%)"
)


def server_has_scoped_index(version: str) -> bool:
    """Whether a server of ``version`` (``dbms.components``) can build the scoped index."""
    release = server_release(version)
    return release is not None and release >= SCOPED_INDEX_SINCE


def ann_query(
    template: LiteralString,
    *,
    in_index: bool,
    name: str,
    index: LiteralString,
    n: LiteralString,
    q: LiteralString,
) -> LiteralString:
    """``template`` with its ``%ANN%`` slot binding ``m`` to the ``n`` nearest memories to
    ``q`` (Cypher expressions): through ``SEARCH`` with the filter's scopes applied inside the
    index ``name`` when ``in_index``, else through the procedure on index ``index`` (a
    parameter). A template without the slot is returned as it is."""
    if "%ANN%" not in template:
        return template
    if not in_index:
        call = _PROCEDURE.replace("%INDEX%", index).replace("%N%", n).replace("%Q%", q)
        return template.replace("%ANN%", call)
    search = _cypher(_SEARCH, NAME=name).replace("%Q%", q).replace("%N%", n)
    return "CYPHER 25 " + template.replace("%ANN%", search)
