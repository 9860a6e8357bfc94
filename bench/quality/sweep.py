"""Recall settings against every dev set at once: how the fusion defaults were chosen.

    python bench/quality/sweep.py                          # the built-in candidates
    python bench/quality/sweep.py --set text_weight=0.3,0.5 --set rrf_k=30,60

Each committed dev set is ingested once (note layer on, as by default) and its query vectors
embedded once; every setting then costs only the ranking. Per setting and set it prints the
hybrid's recall@10 and MRR@10 and their margins over the better single signal (the issue's
verdict wants R@10 +0.05 and MRR >= 0), then the worst margins over all sets: defaults are
chosen by the worst set, never the average.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import Dataset
from embcache import CachedEmbedder
from metrics import DEFAULT_KS, evaluate
from run import MARGIN, MODES, dev_sets, ingest, rankings

from amem_graph import MemoryGraph
from amem_graph.embeddings import resolve_embedder

#: the settings compared by default: the defaults, then one change at a time
CANDIDATES: list[dict[str, Any]] = [
    {},
    {"text_weight": 0.3},
    {"text_weight": 0.5},
    {"text_boost": 1.2},
    {"text_boost": 1.6},
    {"mode": "weighted"},
]


def parse_grid(specs: Sequence[str]) -> list[dict[str, Any]]:
    """``name=v1,v2`` pairs -> every combination (numbers parsed, else strings)."""

    def value(text: str) -> Any:
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text

    axes = []
    for spec in specs:
        name, _, values = spec.partition("=")
        axes.append([(name, value(v)) for v in values.split(",")])
    return [dict(combo) for combo in itertools.product(*axes)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], help="name=v1,v2 (a grid axis)")
    parser.add_argument("--data", type=Path, nargs="*", default=[])
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    settings = parse_grid(args.set) if args.set else CANDIDATES
    embedder = CachedEmbedder(resolve_embedder("minilm"))
    sets: list[tuple[Dataset, MemoryGraph, float, float]] = []
    for data in dev_sets(args.data, []):
        mg = MemoryGraph.open(":memory:", embedder=embedder)
        ingest(mg, data)
        single = {
            m: evaluate(data.questions, rankings(mg, data, args.k, MODES[m]), DEFAULT_KS)
            for m in ("bm25", "dense")
        }
        best_r = max(s["overall"].recall[args.k] for s in single.values())
        best_m = max(s["overall"].mrr for s in single.values())
        print(f"{data.name}: best single R@{args.k} {best_r:.3f}, MRR {best_m:.3f}", flush=True)
        sets.append((data, mg, best_r, best_m))
    for options in settings:
        row, worst_r, worst_m = [], 1.0, 1.0
        for data, mg, best_r, best_m in sets:
            s = evaluate(data.questions, rankings(mg, data, args.k, options), DEFAULT_KS)
            r, m = s["overall"].recall[args.k], s["overall"].mrr
            worst_r, worst_m = min(worst_r, r - best_r), min(worst_m, m - best_m)
            row.append(f"{data.name} {r:.3f}/{m:.3f}")
        ok = "ok" if worst_r >= MARGIN and worst_m >= 0 else "SHORT"
        print(f"{_label(options):40} worst {worst_r:+.3f}/{worst_m:+.3f} [{ok}]  " + "  ".join(row))
        sys.stdout.flush()
    for _, mg, _, _ in sets:
        mg.close()


def _label(options: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in options.items()) or "defaults"


if __name__ == "__main__":
    main()
