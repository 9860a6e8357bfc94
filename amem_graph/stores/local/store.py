"""The embedded default store: SQLite is the truth, numpy columns and BM25 its read caches.

- SQLite (WAL) holds nodes, edges, float32 vectors and each memory's searchable text. Every
  ``apply`` is one ``BEGIN IMMEDIATE`` transaction, so a batch is all-or-nothing and writers
  from several processes are serialised by SQLite (a writer waits up to ``busy_timeout``
  seconds, then gets ``ConflictError``): no write is lost.
- Vector search runs on a numpy matrix, BM25 on a numpy inverted index (``bm25.py``; FTS5's
  ``bm25()`` was ~10x slower at 100k memories) and sibling hops on hub member sets, all
  mirrored from SQLite; edges are read from SQLite itself, through its indexes. Every
  ``apply`` also appends one row to a change log (table ``changes``: the memories and edges
  the batch touched) in the same transaction. Before every read the store
  checks ``PRAGMA data_version``; when another connection (or process) has committed, the
  mirrors re-read only what the log names since they last looked, in one read transaction,
  so reads are never stale and never see half a commit. The store's own commits update the
  mirrors in place. The log keeps its last 2,000 rows; a reader further behind rebuilds whole.
- The BM25 index of a store of 20k memories or more is saved beside the file as
  ``<db>.bm25`` (``bm25_file``) after a build from text and at ``close`` after a big ingest,
  as of a change-log row: the next open reads it and re-indexes only what the log names
  since, instead of analysing every memory's text (100k memories: first recall 7-8.5 -> 2-2.3 s).

- Past ``ann_threshold`` memories (100k by default, bench/RESULTS.md) vector search asks an
  HNSW index (``ann``, usearch, the ``[ann]`` extra) for candidates, saved as ``<db>.ann``
  beside the file and reconciled with the mirror row by row; every hit is re-scored exactly
  and filtered by the mirror, and selective filters stay exact. Without usearch it is exact.
- A selective filter whose rows lie scattered (tenants writing at once) has its vectors
  gathered once and kept between recalls, within ``scope_blocks_bytes`` (``blocks.py``).

One module per concern, each a part of ``LocalStore``: ``sqlite`` (the file, its schema, the
error mapping, the embedder, keeping the mirror fresh), ``mirror`` (the numpy, BM25 and networkx
read mirror), ``writes`` (``apply``), ``reads`` (lookups in SQLite) and ``search`` (searches and
walks on the mirror, through ``ann`` when the store is large).
"""

from __future__ import annotations

from amem_graph.stores.local.integrity import LocalIntegrity
from amem_graph.stores.local.reads import LocalReads
from amem_graph.stores.local.search import LocalSearch
from amem_graph.stores.local.writes import LocalWrites


class LocalStore(LocalWrites, LocalReads, LocalSearch, LocalIntegrity):
    """SQLite + numpy + networkx store; ``path=":memory:"`` keeps everything in RAM."""

    backend = "local"
    #: recall reads memories whole only once ranked (``retriever.reads_ahead``)
    READS_AHEAD = False
