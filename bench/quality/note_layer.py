"""Recall with the note layer off, on, and on with notes indexed: how ``index_notes`` was chosen.

    python bench/quality/note_layer.py [--embedder minilm|hashing] [--seeds 1,2] [--k 10]

Each configuration ingests convbench (and, with ``--seeds``, variants written by
``generate.py --seed N``) into a fresh store the way ``run.py`` does, then scores the hybrid
recall (defaults) and, as a reference, dense retrieval alone. Printed per dataset: recall@10
and MRR for

* ``off``: no note layer (``NotesConfig(enabled=False)``), the baseline;
* ``notes``: offline notes and links, notes stored but not indexed (``index_notes=False``);
* ``indexed``: the same, with the notes fed to the embedding and the BM25 terms.

The offline notes are what runs without a model; a model's notes may behave differently.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import DEFAULT_PATH, Dataset, load
from metrics import DEFAULT_KS, evaluate
from run import MODES, ingest, rankings

from amem_graph import Embedder, MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.embeddings import resolve_embedder

CONFIGS = {
    "off": NotesConfig(enabled=False),
    "notes": NotesConfig(index_notes=False),
    "indexed": NotesConfig(index_notes=True),
}


def variant(seed: int, folder: Path) -> Path:
    """convbench regenerated with another seed."""
    out = folder / f"convbench-{seed}.json"
    script = Path(__file__).resolve().parent / "generate.py"
    subprocess.run(
        [sys.executable, str(script), "--seed", str(seed), "--out", str(out)], check=True
    )
    return out


class CachedEmbedder:
    """The chosen embedder, remembering every text it embedded: the configurations share most
    texts (all queries, and every memory but the indexed notes), so each is embedded once."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dims = inner.name, inner.dims
        self._docs: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._docs]
        if todo:
            self._docs.update(zip(todo, self.inner.embed_documents(todo), strict=True))
        return [self._docs[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]


def measure(
    data: Dataset, embedder: CachedEmbedder, k: int
) -> dict[str, tuple[float, float, float, float]]:
    """Config -> (hybrid recall@k, hybrid MRR, dense recall@k, ingest seconds)."""
    out = {}
    for name, notes in CONFIGS.items():
        config = MemoryGraphConfig(notes=notes)
        with MemoryGraph.open(":memory:", embedder=embedder, config=config) as mg:
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
    parser.add_argument("--seeds", default="", help="comma-separated generate.py seeds")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = [("convbench", DEFAULT_PATH)]
        paths += [(f"seed {s}", variant(int(s), Path(folder))) for s in args.seeds.split(",") if s]
        results = {}
        cached = CachedEmbedder(resolve_embedder(args.embedder))
        for name, path in paths:
            print(f"== {name} ({args.embedder})", flush=True)
            results[name] = measure(load(path), cached, args.k)
    print(f"\nrecall@{args.k} (hybrid), per dataset: off / notes / indexed")
    for name, row in results.items():
        print(f"  {name:<10} " + " / ".join(f"{row[c][0]:.3f}" for c in CONFIGS))


if __name__ == "__main__":
    main()
