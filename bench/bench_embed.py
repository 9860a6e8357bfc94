"""MiniLM embedding cost: the torch-free runtime against sentence-transformers, same run.

    python bench/bench_embed.py [--runs 5] [--no-st]
    python bench/bench_embed.py --also DIR/all-mpnet-base-v2   # and another model (torch)

For each backend (``MiniLMEmbedder``, numpy, with its default one BLAS thread and with numpy's
own thread count; ``SentenceTransformerEmbedder`` on the same model directory, torch, when the
``[st]`` extra is installed):

* cold start: wall time of a fresh ``python -c "...embed_query('hi')"`` (import + load + embed);
* load: the first embed in-process (the model loads on first embed);
* single query latency (median of 50);
* a batch of 256 memory-like texts (8 to 120 words): texts per wall second (median of
  ``--runs``) and per CPU second of the process (all its threads; steadier on a busy machine);
* agreement: minimum cosine between numpy and sentence-transformers over that batch.

Ratios are sentence-transformers over numpy at one thread (above 1 means numpy is faster).
``--also DIR`` adds another sentence-transformers BERT or MPNet directory (no cold start), in
numpy and, with the extra, sentence-transformers, and its cost over the default's (MiniLM,
numpy, one thread): what a stronger model costs (bench/quality/README.md).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's amem_graph
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from amem_graph.embeddings import (
    Embedder,
    MiniLMEmbedder,
    NumpyEmbedder,
    SentenceTransformerEmbedder,
)
from bench.common import WORDS

COLD = {
    "numpy": "from amem_graph import MiniLMEmbedder; MiniLMEmbedder().embed_query('hi')",
    "st": (
        "from amem_graph import MiniLMEmbedder; "
        "from amem_graph.embeddings import SentenceTransformerEmbedder; "
        "SentenceTransformerEmbedder(MiniLMEmbedder.model_path()).embed_query('hi')"
    ),
}


def corpus(n: int = 256, seed: int = 7) -> list[str]:
    """Memory-like texts of varied length; the longest pass 256 word pieces."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 120))) for _ in range(n)]


def cold_start(kind: str) -> float:
    """Wall seconds of a fresh interpreter that imports, loads and embeds one query."""
    root = Path(__file__).resolve().parent.parent
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", COLD[kind]], cwd=root, check=True, capture_output=True)
    return time.perf_counter() - start


def median_s(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``fn``."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def measure(kind: str | None, emb: Embedder, texts: list[str], runs: int) -> dict[str, float]:
    start = time.perf_counter()
    emb.embed_query("hi")
    load = time.perf_counter() - start
    query, _ = median_s(lambda: emb.embed_query("how should I look after my car"), 50)
    batch, batch_cpu = median_s(lambda: emb.embed_documents(texts), runs)
    return {
        "cold": cold_start(kind) if kind else float("nan"),
        "load": load,
        "query_ms": query * 1e3,
        "texts_per_s": len(texts) / batch,
        "texts_per_cpu_s": len(texts) / batch_cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-st", action="store_true", help="skip sentence-transformers")
    parser.add_argument("--also", default=None, help="another sentence-transformers model dir")
    args = parser.parse_args()
    texts = corpus()
    results = {
        "numpy": measure("numpy", MiniLMEmbedder(), texts, args.runs),
        "numpy-mt": measure(None, MiniLMEmbedder(threads=None), texts, args.runs),
    }
    vectors = {"numpy": np.asarray(MiniLMEmbedder().embed_documents(texts))}
    if not args.no_st:
        try:
            import sentence_transformers  # noqa: F401
        except ImportError:
            print("sentence-transformers not installed: numpy figures only")
        else:
            st = SentenceTransformerEmbedder(MiniLMEmbedder.model_path())
            results["st"] = measure("st", st, texts, args.runs)
            vectors["st"] = np.asarray(st.embed_documents(texts))
    print(
        f"{'backend':<9} {'cold s':>7} {'load s':>7} {'query ms':>9} {'256: texts/s':>13} "
        f"{'texts/cpu-s':>12}"
    )
    for kind, r in results.items():
        print(
            f"{kind:<9} {r['cold']:>7.2f} {r['load']:>7.3f} {r['query_ms']:>9.2f} "
            f"{r['texts_per_s']:>13.1f} {r['texts_per_cpu_s']:>12.1f}"
        )
    if "st" in results:
        n, s = results["numpy"], results["st"]
        print(
            f"ratio st/numpy: cold {s['cold'] / n['cold']:.1f}x, "
            f"load {s['load'] / n['load']:.1f}x, "
            f"query {s['query_ms'] / n['query_ms']:.2f}x, "
            f"batch throughput {n['texts_per_s'] / s['texts_per_s']:.2f}x "
            f"(per CPU second {n['texts_per_cpu_s'] / s['texts_per_cpu_s']:.2f}x)"
        )
        cosine = (vectors["numpy"] * vectors["st"]).sum(axis=1)
        print(f"min cosine numpy vs st over the batch: {cosine.min():.7f}")
    if args.also:
        also(args.also, texts, args.runs, results["numpy"])


def also(model_dir: str, texts: list[str], runs: int, base: dict[str, float]) -> None:
    """Another model's cost over the default's: the numpy runtime (``NumpyEmbedder``, one
    thread) and, with the ``[st]`` extra, sentence-transformers, and how far apart they are."""
    name = Path(model_dir).name
    backends: dict[str, Embedder] = {"numpy": NumpyEmbedder(model_dir)}
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        backends["st"] = SentenceTransformerEmbedder(model_dir)
    vectors = {}
    for kind, emb in backends.items():
        r = measure(None, emb, texts, runs)
        print(
            f"{name} ({kind}): load {r['load']:.2f} s, query {r['query_ms']:.2f} ms "
            f"({r['query_ms'] / base['query_ms']:.2f}x MiniLM), {r['texts_per_s']:.1f} texts/s "
            f"({base['texts_per_s'] / r['texts_per_s']:.2f}x slower; per CPU second "
            f"{base['texts_per_cpu_s'] / r['texts_per_cpu_s']:.2f}x)"
        )
        vectors[kind] = np.asarray(emb.embed_documents(texts))
    if len(vectors) == 2:
        cosine = (vectors["numpy"] * vectors["st"]).sum(axis=1)
        print(f"{name}: min cosine numpy vs st over the batch: {cosine.min():.7f}")


if __name__ == "__main__":
    main()
