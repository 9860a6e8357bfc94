"""The round trips a Neo4j recall makes beside its one statement, on the dev sets.

    python bench/quality/neo4j_reads.py --neo4j bolt://127.0.0.1:7784              # every set
    python bench/quality/neo4j_reads.py --neo4j URI --data bench/quality/data/talkbench.json

A recall on Neo4j is one statement (``search_expand``) when its guesses hold: the agents its
query names (checked in the statement; a wrong guess searches again) and the likely hits it
reads whole (the read-ahead; one it missed is read after the hop). This loads each dev set into
the server (WIPING the database it reaches) as ``run.py`` does, recalls every question there
and counts both, and how often the hits equal the embedded store's for the same question
(float noise between the stores can reorder near-ties). Performance, not quality: the hits do
not depend on either guess.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import Dataset
from embcache import CachedEmbedder
from metrics import DEFAULT_KS, evaluate
from run import dev_sets, ingest, safe

from amem_graph import MemoryGraph
from amem_graph.embeddings import resolve_embedder
from amem_graph.stores.neo4j.store import Neo4jStore


class Counted:
    """Counts a store's ``search_expand`` calls and the ``get_memories`` calls made outside
    them (reads after the hop)."""

    def __init__(self, store: Neo4jStore) -> None:
        self.searches = 0
        self.reads = 0
        self._inside = False
        search_expand, get_memories = store.search_expand, store.get_memories

        def searched(*args: Any, **kwargs: Any) -> Any:
            self.searches += 1
            self._inside = True
            try:
                return search_expand(*args, **kwargs)
            finally:
                self._inside = False

        def read(*args: Any, **kwargs: Any) -> Any:
            self.reads += not self._inside
            return get_memories(*args, **kwargs)

        store.search_expand = searched  # type: ignore[method-assign]
        store.get_memories = read  # type: ignore[method-assign]


def measure(data: Dataset, uri: str, embedder: CachedEmbedder) -> str:
    """One line: second searches, reads after the hop, hits equal to the embedded store's, and
    R@10 / MRR@10 on each store."""
    store = Neo4jStore.connect(uri)
    store.wipe()
    counted = Counted(store)
    with (
        MemoryGraph(store, embedder) as server,
        MemoryGraph.open(":memory:", embedder=embedder) as local,
    ):
        ingest(server, data)
        ingest(local, data)
        read_after = equal = 0
        ranked: dict[str, dict[str, list[str]]] = {"neo4j": {}, "embedded": {}}
        for q in data.questions:
            scope, reads = safe(q.conversation_id), counted.reads
            got = [h.memory.id for h in server.recall(q.question, k=10, scope=scope)]
            read_after += counted.reads > reads
            mine = [h.memory.id for h in local.recall(q.question, k=10, scope=scope)]
            equal += got == mine
            ranked["neo4j"][q.id], ranked["embedded"][q.id] = got, mine
        n = len(data.questions)
        quality = "; ".join(
            f"{side} R@10 / MRR {s.recall[10]:.3f} / {s.mrr:.3f}"
            for side, s in (
                (side, evaluate(data.questions, ids, DEFAULT_KS)["overall"])
                for side, ids in ranked.items()
            )
        )
        return (
            f"{data.name}: {n} recalls; second searches {counted.searches - n}; "
            f"reads after the hop in {read_after}; hits equal to the embedded store's in {equal}; "
            + quality
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--neo4j", required=True, help="a server whose database may be wiped")
    parser.add_argument("--data", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    embedder = CachedEmbedder(resolve_embedder("minilm"))
    for data in dev_sets(args.data, []):
        print(measure(data, args.neo4j, embedder), flush=True)


if __name__ == "__main__":
    main()
