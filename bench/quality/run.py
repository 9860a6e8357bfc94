"""Recall quality of amem_graph on convbench: BM25 alone, dense (MiniLM) alone, and the hybrid.

    python bench/quality/run.py [--embedder minilm|hashing] [--data PATH] [--k 10]

Each turn is stored as one memory through the public API, the way an agent developer would
ingest past conversations: speaker as ``agent``, session time as ``timestamp`` (plus the turn's
position in seconds, to keep order), session as ``episode``, conversation as ``scope``. Each
question is a ``recall`` in its conversation's scope; the ranked memory ids are scored against
the annotated evidence turn ids (``metrics.py``).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import DEFAULT_PATH, Dataset, load
from metrics import DEFAULT_KS, Scores, evaluate, format_report

from amem_graph import MemoryGraph

#: single-signal baselines: the hybrid's own paths with everything else switched off
ONLY = {"vector": 0.0, "text": 0.0, "graph": 0.0, "recency": 0.0, "importance": 0.0}
MODES: dict[str, dict[str, Any]] = {
    "bm25": {f"{s}_weight": 0.0 for s in ONLY if s != "text"} | {"confidence_weight": 0.0},
    "dense": {f"{s}_weight": 0.0 for s in ONLY if s != "vector"} | {"confidence_weight": 0.0},
    "hybrid": {},
}


def safe(name: str) -> str:
    """Dataset names as amem_graph names (letters, digits, _ . : @ / -)."""
    return re.sub(r"[^A-Za-z0-9_.:@/\-]", "_", name)


def ingest(mg: MemoryGraph, data: Dataset) -> int:
    """Store every turn; returns how many."""
    items = []
    for conv in data.conversations:
        for session in conv.sessions:
            for i, turn in enumerate(session.turns):
                items.append(
                    {
                        "content": turn.text,
                        "id": turn.id,
                        "agent": safe(turn.speaker),
                        "episode": safe(session.id),
                        "scope": safe(conv.id),
                        "timestamp": session.datetime + timedelta(seconds=i),
                        "kind": "episodic",
                    }
                )
    for start in range(0, len(items), 500):
        mg.remember_many(items[start : start + 500])
    return len(items)


def rankings(
    mg: MemoryGraph, data: Dataset, k: int, options: Mapping[str, Any]
) -> dict[str, list[str]]:
    """Question id -> recalled memory ids, best first."""
    out = {}
    for q in data.questions:
        hits = mg.recall(q.question, k=k, scope=safe(q.conversation_id), **options)
        out[q.id] = [h.memory.id for h in hits]
    return out


def run(
    data: Dataset, embedder: str, k: int, modes: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Scores]]:
    """Scores per mode, all from one store built once."""
    with MemoryGraph.open(":memory:", embedder=embedder) as mg:
        t = time.perf_counter()
        n = ingest(mg, data)
        print(f"ingested {n} turns in {time.perf_counter() - t:.1f} s ({embedder})")
        results = {}
        for name, options in modes.items():
            t = time.perf_counter()
            results[name] = evaluate(data.questions, rankings(mg, data, k, options), DEFAULT_KS)
            ms = (time.perf_counter() - t) / len(data.questions) * 1000
            print(f"\n== {name} ({ms:.1f} ms/question)\n{format_report(results[name])}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    data = load(args.data)
    print(", ".join(f"{key}={value}" for key, value in data.stats().items()))
    results = run(data, args.embedder, args.k, MODES)
    best_single = max(results["bm25"]["overall"].recall[10], results["dense"]["overall"].recall[10])
    hybrid = results["hybrid"]["overall"].recall[10]
    verdict = "beats" if hybrid > best_single else "does NOT beat"
    print(
        f"\nrecall@10: hybrid {hybrid:.3f} {verdict} the better single signal {best_single:.3f} "
        f"(bm25 {results['bm25']['overall'].recall[10]:.3f}, "
        f"dense {results['dense']['overall'].recall[10]:.3f})"
    )


if __name__ == "__main__":
    main()
