"""``index_problems`` for the embedded store: SQLite rows against the columns copied out of
each document and against the numpy/BM25 mirror the searches read."""

from __future__ import annotations

import numpy as np

from amem_graph.stores.local.sqlite import LocalConnection

#: (what is wrong, SQL counting the rows where it is)
_ROW_CHECKS = (
    ("memory documents that are not valid JSON", "SELECT count(*) FROM memories "
     "WHERE NOT json_valid(doc)"),
    ("memory rows whose scope, status, agent or task column disagrees with the document",
     "SELECT count(*) FROM memories WHERE json_valid(doc) AND (scope IS NOT "
     "json_extract(doc, '$.scope') OR status IS NOT json_extract(doc, '$.status') OR agent IS "
     "NOT json_extract(doc, '$.agent') OR task IS NOT json_extract(doc, '$.task'))"),
    ("node property maps that are not valid JSON", "SELECT count(*) FROM nodes "
     "WHERE NOT json_valid(props)"),
    ("edge property maps that are not valid JSON", "SELECT count(*) FROM edges "
     "WHERE NOT json_valid(props)"),
)  # fmt: skip


class LocalIntegrity(LocalConnection):
    """Counts that must agree between SQLite and the read mirror."""

    def index_problems(self) -> list[str]:
        def run() -> list[str]:
            out = [
                f"{n} {what}"
                for what, sql in _ROW_CHECKS
                if (n := int(self._db.execute(sql).fetchone()[0]))
            ]
            dims = self._dims()
            rows, vectors, bad = self._db.execute(
                "SELECT count(*), count(embedding), "
                "coalesce(sum(embedding IS NOT NULL AND length(embedding) != ?), 0) FROM memories",
                (4 * dims,),
            ).fetchone()
            if bad:
                out.append(f"{bad} stored vectors do not have the store's {dims} dimensions")
            if out:  # the mirror cannot be built from unreadable rows
                return out
            mirror = self._fresh_mirror()
            n = len(mirror.ids)
            found = {
                "memory rows": (rows, int(np.count_nonzero(mirror.alive[:n]))),
                "vectors": (vectors - bad, int(np.count_nonzero(mirror.has_vec[:n]))),
                "text-indexed memories": (rows, len(mirror.bm25)),
            }
            for what, (stored, mirrored) in found.items():
                if stored != mirrored:
                    out.append(f"{what}: {stored} stored, {mirrored} in the search mirror")
            return out

        return self._guard("checking indexes", run)
