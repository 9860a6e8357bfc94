"""Recall with the note layer off, on, and on with notes indexed: how ``index_notes`` was chosen.

    python bench/quality/note_layer.py                      # convbench, convbench-hard, talkbench
    python bench/quality/note_layer.py --seeds 1,2          # and the generators' variants
    python bench/quality/note_layer.py --neo4j bolt://...   # and the same on Neo4j (wiped)
    python bench/quality/note_layer.py --embedder hashing   # no model (fast, not a quality figure)

Each configuration ingests every dev set of ``run.py`` into a fresh store the way ``run.py``
does, then scores the hybrid recall (defaults) and, as a reference, dense retrieval alone.
Printed per dataset and store: recall@10 and MRR for

* ``off``: no note layer (``NotesConfig(enabled=False)``), the baseline;
* ``notes``: offline notes and links, notes stored but not indexed (``index_notes=False``);
* ``indexed``: the same, with the notes fed to the embedding and the BM25 terms.

The offline notes are what runs without a model; a model's notes may behave differently.
Embeddings go through ``embcache.py``'s disk cache, so a second run costs only the ranking.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import Dataset
from embcache import CachedEmbedder
from metrics import DEFAULT_KS, evaluate
from run import MODES, dev_sets, ingest, rankings

from amem_graph import Embedder, MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.embeddings import resolve_embedder
from amem_graph.stores.factory import open_store

CONFIGS = {
    "off": NotesConfig(enabled=False),
    "notes": NotesConfig(index_notes=False),
    "indexed": NotesConfig(index_notes=True),
}
Row = tuple[float, float, float, float]


def measure(data: Dataset, embedder: Embedder, k: int, target: str) -> dict[str, Row]:
    """Config -> (hybrid recall@k, hybrid MRR, dense recall@k, ingest seconds)."""
    out = {}
    for name, notes in CONFIGS.items():
        if target != ":memory:":  # a server store: start empty, whatever the last run left
            with closing(open_store(target)) as store:
                getattr(store, "wipe")()  # noqa: B009 - only server stores have it
        config = MemoryGraphConfig(notes=notes)
        with MemoryGraph.open(target, embedder=embedder, config=config) as mg:
            start = time.perf_counter()
            ingest(mg, data)
            seconds = time.perf_counter() - start
            hybrid = evaluate(data.questions, rankings(mg, data, k, {}), DEFAULT_KS)["overall"]
            dense = evaluate(data.questions, rankings(mg, data, k, MODES["dense"]), DEFAULT_KS)
        out[name] = (hybrid.recall[k], hybrid.mrr, dense["overall"].recall[k], seconds)
        print(
            f"  {name:<8} hybrid recall@{k} {out[name][0]:.3f}  MRR {out[name][1]:.3f}  "
            f"dense recall@{k} {out[name][2]:.3f}  ingest {seconds:.1f} s (cached embeddings)",
            flush=True,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--seeds", default="", help="comma-separated generator seeds")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--neo4j", help="also measure this Neo4j (it is wiped)")
    parser.add_argument("--no-local", action="store_true", help="skip the embedded store")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    targets = ([] if args.no_local else [("embedded", ":memory:")]) + (
        [("neo4j", args.neo4j)] if args.neo4j else []
    )
    cached = CachedEmbedder(resolve_embedder(args.embedder))
    results: dict[tuple[str, str], dict[str, Row]] = {}
    for data in dev_sets([], seeds):
        for store, target in targets:
            print(f"== {data.name} on {store} ({args.embedder})", flush=True)
            results[(data.name, store)] = measure(data, cached, args.k, target)
    print(f"\nrecall@{args.k} (hybrid), per dataset and store: off / notes / indexed")
    for (name, store), row in results.items():
        print(f"  {name:<16} {store:<9} " + " / ".join(f"{row[c][0]:.3f}" for c in CONFIGS))
    print("worst dev set per config (embedded first): " + "; ".join(
        f"{store} " + " / ".join(
            f"{min(r[c][0] for (_, s), r in results.items() if s == store):.3f}" for c in CONFIGS
        )
        for store, _ in targets
    ))  # fmt: skip


if __name__ == "__main__":
    main()
