"""How the recall defaults were chosen: a grid over fusion settings on half of convbench.

    python bench/quality/tune.py [--embedder minilm]
    python bench/quality/tune.py --depths    # vector path depth: 30 vs 50 vs 100 vs 200

Tunes on conversations 1-5 (dev) and reports the best settings on 6-10 (test) beside dense
and BM25 alone, so a gain that only fits the dev half shows. Query vectors are embedded once
and passed to the retriever, so each setting costs only the ranking.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dataset import DEFAULT_PATH, Question, load
from metrics import DEFAULT_KS, evaluate
from run import ingest, safe

from amem_graph import MemoryGraph
from amem_graph.core.models import utcnow

NO_PRIORS = {"recency_weight": 0.0, "importance_weight": 0.0, "confidence_weight": 0.0}
GRID = {
    "candidates": [50, 100, 200],
    "text_weight": [0.2, 0.3, 0.5, 1.0],
    "graph_weight": [0.0, 0.2, 0.5],
    "rrf_k": [10, 30, 60],
    "recency_weight": [0.0, 0.05],
}


#: vector path depths compared by ``--depths`` (recall never goes below 3k = 30 at k=10)
DEPTHS = (30, 50, 100, 200)


class Scorer:
    """Ranks questions with given recall options against one ingested store."""

    def __init__(self, mg: MemoryGraph, questions: Sequence[Question]) -> None:
        self.mg = mg
        self.now = utcnow()
        searched = [  # what recall embeds (``HybridRetriever.search_text``), with the defaults
            mg.retriever.search_text(q.question, mg.memory_filter(safe(q.conversation_id)))
            for q in questions
        ]
        vectors = mg.embedder.embed_documents(searched)
        self.vectors = {q.id: v for q, v in zip(questions, vectors, strict=True)}

    def __call__(
        self, options: Mapping[str, Any], questions: Sequence[Question], pooled: bool = False
    ) -> str:
        """Scores of ``options``; ``pooled`` searches every conversation at once (harder)."""
        cfg = self.mg._retrieval_config(None, options)
        ranked = {}
        for q in questions:
            flt = self.mg.memory_filter(safe(q.conversation_id), as_of=self.now)
            if pooled:
                flt = replace(flt, scopes=None)
            hits = self.mg.retriever.search(
                q.question, 10, flt, self.now, cfg, query_vector=self.vectors[q.id]
            )
            ranked[q.id] = [h.memory.id for h in hits]
        s = evaluate(questions, ranked, DEFAULT_KS)["overall"]
        return f"R@10 {s.recall[10]:.3f}  R@5 {s.recall[5]:.3f}  MRR {s.mrr:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument(
        "--depths", action="store_true", help="only compare vector_candidates depths"
    )
    args = parser.parse_args()
    data = load(args.data)
    dev = [q for q in data.questions if int(q.conversation_id.lstrip("c")) <= 5]
    test = [q for q in data.questions if q not in dev]
    with MemoryGraph.open(":memory:", embedder=args.embedder) as mg:
        ingest(mg, data)
        score = Scorer(mg, data.questions)
        if args.depths:
            for pooled in (False, True):
                for depth in DEPTHS:
                    options = {"vector_candidates": depth}
                    result = score(options, data.questions, pooled)
                    print(
                        f"{'pooled' if pooled else 'scoped'} vector_candidates={depth:3}  {result}"
                    )
            return
        dense = {**NO_PRIORS, "text_weight": 0.0, "graph_weight": 0.0}
        bm25 = {**NO_PRIORS, "vector_weight": 0.0, "graph_weight": 0.0}
        rows = []
        for values in itertools.product(*GRID.values()):
            options = {**NO_PRIORS, **dict(zip(GRID, values, strict=True))}
            rows.append((score(options, dev), options))
        rows.sort(key=lambda r: r[0], reverse=True)
        print(f"dev  dense  {score(dense, dev)}\ndev  bm25   {score(bm25, dev)}")
        for result, options in rows[: args.top]:
            print(f"dev  {result}  test {score(options, test)}  {options}")
        print(f"test dense  {score(dense, test)}\ntest bm25   {score(bm25, test)}")
        print(f"defaults: dev {score({}, dev)}  test {score({}, test)}")


if __name__ == "__main__":
    main()
