"""Recall quality of amem_graph on every dev set: BM25 alone, dense alone, and the hybrid.

    python bench/quality/run.py                    # convbench, -hard, -long, talkbench, realchat
    python bench/quality/run.py --seeds 1,2,3      # and both generators' variants per seed
    python bench/quality/run.py --data PATH ...    # only the given sets
    python bench/quality/run.py --ablate           # and the hybrid minus each of its signals
    python bench/quality/run.py --embedder hashing # no model (fast, not a quality figure)
    python bench/quality/run.py --embedder st:DIR  # another model (sentence-transformers, torch)
    python bench/quality/run.py --notes off        # ingest without the note layer (default on)
    python bench/quality/run.py --episode-context 0 --lead-in 0  # each turn on its own

Each turn is stored as one memory through the public API, the way an agent developer would
ingest past conversations: speaker as ``agent``, session time as ``timestamp`` (plus the turn's
position in seconds, to keep order), session as ``episode``, conversation as ``scope``. Each
question is a recall in its conversation's scope; the ranked memory ids are scored against the
annotated evidence turn ids (``metrics.py``). Modes are the hybrid's own paths with the rest
switched off (``bm25``, ``dense``), the fusion as it was before calibration and re-scoring
(``hybrid-old``), the defaults before convbench-long (``hybrid-prev``), and the defaults
(``hybrid``). Embeddings are cached on disk
(``embcache.py``), so a second run costs only the ranking.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import re

from dataset import DEFAULT_PATH, Dataset, load, parse
from embcache import CachedEmbedder
from generate import HARD_OUT, LONG_OUT, generate
from harden import LONG, harden
from metrics import DEFAULT_KS, Scores, evaluate, format_report

from amem_graph import MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.core.models import utcnow
from amem_graph.embeddings import Embedder, resolve_embedder
from amem_graph.recall.retriever import RESCORE_SIGNALS

TALKBENCH = DEFAULT_PATH.with_name("talkbench.json")
#: real chats (the Chit-Chat dataset), questions written for them (``realchat.py``)
REALCHAT = DEFAULT_PATH.with_name("realchat.json")
OFF = {f"{s}_weight": 0.0 for s in ("vector", "text", "graph", "recency", "importance")}
#: no priors, no re-scoring: a single path as plain as it gets
PLAIN = {f"{s}_weight": 0.0 for s in ("confidence", *RESCORE_SIGNALS)}
#: the re-scoring off
NO_RESCORE = {"text_boost": 0.0} | {f"{s}_weight": 0.0 for s in RESCORE_SIGNALS}
#: the fusion weights before the BM25-led dev set (convbench-long) was added
PREV = {"rrf_k": 30, "text_weight": 0.2, "unnamed_search": False}
MODES: dict[str, dict[str, Any]] = {
    "bm25": OFF | PLAIN | {"text_weight": 1.0, "text_boost": 0.0},
    "dense": OFF | PLAIN | {"vector_weight": 1.0},
    "hybrid-old": PREV | NO_RESCORE,
    "hybrid-prev": PREV
    | {"speaker_weight": 0.4, "time_weight": 0.0, "dated_weight": 0.0, "name_weight": 0.0},
    "hybrid": {},
}
#: ``--ablate``: the hybrid with one of its signals off, to show what each earns; ``-graph``
#: drops the expansion (same-episode context and note links)
ABLATIONS: dict[str, dict[str, Any]] = {
    "-boost": {"text_boost": 0.0},
    "-speaker": {"speaker_weight": 0.0},
    "-terse": {"terse_weight": 0.0},
    "-graph": {"graph_weight": 0.0},
    "-time": {"time_weight": 0.0},
    "-dated": {"dated_weight": 0.0},
    "-name": {"name_weight": 0.0},
    "-unnamed": {"unnamed_search": False},
}
#: the verdict's margin: the hybrid should beat the better single signal by this much
MARGIN = 0.05


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
    """Question id -> recalled memory ids, best first (query vectors embedded in one batch,
    from the text recall searches for: ``HybridRetriever.search_text``)."""
    cfg = mg._retrieval_config(None, options)
    now = utcnow()
    filters = [mg.memory_filter(safe(q.conversation_id), as_of=now) for q in data.questions]
    searched = [
        mg.retriever.search_text(q.question, flt, cfg)
        for q, flt in zip(data.questions, filters, strict=True)
    ]
    embed = getattr(mg.embedder, "embed_queries", None)
    vectors = embed(searched) if embed else [mg.embedder.embed_query(q) for q in searched]
    out = {}
    for q, flt, vector in zip(data.questions, filters, vectors, strict=True):
        hits = mg.retriever.search(q.question, k, flt, now, cfg, query_vector=vector)
        out[q.id] = [h.memory.id for h in hits]
    return out


def run(
    data: Dataset,
    embedder: Embedder,
    k: int,
    modes: Mapping[str, Mapping[str, Any]],
    quiet: bool = False,
    notes: bool = True,
    episode_context: float | None = None,
    lead_in: int | None = None,
) -> dict[str, dict[str, Scores]]:
    """Scores per mode, all from one store built once (with the note layer's offline notes
    and links written at ingest, as by default, unless ``notes`` is false; ``episode_context``
    and ``lead_in`` override the default's share of a turn's predecessor in its vector and the
    number of its last words searched with it)."""
    extra: dict[str, Any] = {} if episode_context is None else {"episode_context": episode_context}
    if lead_in is not None:
        extra["episode_lead_in"] = lead_in
    config = MemoryGraphConfig(notes=NotesConfig(enabled=notes), **extra)
    with MemoryGraph.open(":memory:", embedder=embedder, config=config) as mg:
        ingest(mg, data)
        results = {}
        for name, options in modes.items():
            t = time.perf_counter()
            results[name] = evaluate(data.questions, rankings(mg, data, k, options), DEFAULT_KS)
            ms = (time.perf_counter() - t) / len(data.questions) * 1000
            if not quiet:
                print(f"\n== {data.name}: {name} ({ms:.1f} ms/question)")
                print(format_report(results[name]))
    return results


def summary(name: str, results: Mapping[str, Mapping[str, Scores]]) -> str:
    """One line per mode and question kind (R@1 R@5 R@10 MRR), then the verdict."""
    lines = [f"\n## {name}", "kind          mode          R@1    R@5   R@10    MRR"]
    for kind in results["hybrid"]:
        for mode, scores in results.items():
            s = scores[kind]
            lines.append(
                f"{kind:13} {mode:11} {s.recall[1]:6.3f} {s.recall[5]:6.3f} "
                f"{s.recall[10]:6.3f} {s.mrr:6.3f}"
            )
    overall = {mode: scores["overall"] for mode, scores in results.items()}
    best = max(("bm25", "dense"), key=lambda m: overall[m].recall[10])
    best_mrr = max(overall["bm25"].mrr, overall["dense"].mrr)
    hybrid = overall["hybrid"]
    gain = hybrid.recall[10] - overall[best].recall[10]
    ok = gain >= MARGIN and hybrid.mrr >= best_mrr
    lines.append(
        f"verdict: hybrid R@10 {hybrid.recall[10]:.3f} = best single ({best}) "
        f"{gain:+.3f}; MRR {hybrid.mrr:.3f} vs best single {best_mrr:.3f}  "
        f"[{'ok' if ok else 'SHORT'}: needs +{MARGIN:.2f} and MRR >=]"
    )
    return "\n".join(lines)


def dev_sets(paths: Sequence[Path], seeds: Sequence[int]) -> list[Dataset]:
    """The named files (default: the committed sets), then the
    generated variants of convbench, convbench-hard and convbench-long for each seed."""
    if not paths:
        paths = [p for p in (DEFAULT_PATH, HARD_OUT, LONG_OUT, TALKBENCH, REALCHAT) if p.exists()]
    out = [load(p) for p in paths]
    for seed in seeds:
        plain = generate(seed)
        out.append(parse({**plain, "name": f"convbench-s{seed}"}))
        hard = harden(plain, seed)
        out.append(parse({**hard, "name": f"convbench-hard-s{seed}"}))
        long = harden(plain, seed, **LONG)
        out.append(parse({**long, "name": f"convbench-long-s{seed}"}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="*", default=[])
    parser.add_argument("--seeds", default="", help="comma-separated generator seeds")
    parser.add_argument(
        "--embedder",
        default="minilm",
        help='"minilm", "hashing", or "st:<model dir>" (a sentence-transformers model; torch)',
    )
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--quiet", action="store_true", help="only the summaries")
    parser.add_argument("--ablate", action="store_true", help="also the hybrid minus each signal")
    parser.add_argument(
        "--notes", default="on", choices=["on", "off"], help="the note layer at ingest"
    )
    parser.add_argument(
        "--episode-context",
        type=float,
        default=None,
        help="share of a turn's predecessor in its vector (default: the library's)",
    )
    parser.add_argument(
        "--lead-in",
        type=int,
        default=None,
        help="last words of a turn's predecessor searched with it (default: the library's)",
    )
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    embedder = CachedEmbedder(resolve_embedder(args.embedder))
    summaries = []
    for data in dev_sets(args.data, seeds):
        print(f"\n# {data.name}: " + ", ".join(f"{k}={v}" for k, v in data.stats().items()))
        modes = MODES | (ABLATIONS if args.ablate else {})
        results = run(
            data, embedder, args.k, modes, args.quiet, args.notes == "on",
            args.episode_context, args.lead_in,
        )  # fmt: skip
        summaries.append(summary(data.name, results))
        print(summaries[-1])
    print(f"\n# all sets (note layer {args.notes} at ingest)" + "".join(summaries))


if __name__ == "__main__":
    main()
