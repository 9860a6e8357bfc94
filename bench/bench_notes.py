"""The note layer's cost: ingest throughput with notes on and off, and model usage of an ingest.

    python bench/bench_notes.py [--n 1000] [--embedder hashing|minilm] [--neo4j bolt://...]

(``minilm`` reads convbench's vectors from ``bench/quality/embcache.py``'s disk cache.)

Memories are convbench's chat turns (real sentences, speakers, sessions) in batches of 250,
as ``remember_many`` calls. Printed per store:

* ingest throughput with the note layer off (the baseline), offline, and with a scripted fake
  chat model, each measured in the same run on a fresh store;
* for the fake-model ingest, the calls, retries, malformed answers, errors, fallbacks, dropped
  ids and tokens per operation. The fake answers every prompt from the prompt itself: its
  links name real candidate ids plus one rank-like id that must be dropped, every 7th answer
  is malformed JSON and every 40th call raises, so retries and fallbacks are exercised.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import zlib
from contextlib import closing
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

sys.path.insert(0, str(Path(__file__).resolve().parent / "quality"))

from dataset import DEFAULT_PATH, load
from embcache import CachedEmbedder
from run import safe

from amem_graph import MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.embeddings import Embedder, resolve_embedder
from amem_graph.notes.llm import METRICS
from amem_graph.stores.factory import open_store

BATCH = 250
#: one prompt in this many is answered malformed however often it is asked (a fallback)
STUBBORN = 20
_IDS = re.compile(r"- id: (\S+)")
_WORD = re.compile(r"[A-Za-z][a-z]{4,}")


class PromptEchoModel(GenericFakeChatModel):
    """A fake chat model that answers each note-layer prompt from the prompt's own text."""

    calls: int = 0

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls += 1
        if self.calls % 40 == 0:
            raise TimeoutError("scripted provider timeout")
        # the prompt is the first human message; a retry appends what was wrong after it
        system, prompt = str(messages[0].content), str(messages[1].content)
        if self.calls % 7 == 0 or zlib.crc32(prompt.encode()) % STUBBORN == 0:
            text = '{"keywords": ["truncated'
        elif "Zettelkasten" in system:
            words = list(dict.fromkeys(_WORD.findall(prompt.split("Memory:", 1)[-1])))[:5]
            text = json.dumps(
                {
                    "keywords": words or ["chat"],
                    "tags": ["chat"],
                    "context": "A chat turn about " + ", ".join(words[:3]) + ".",
                }
            )
        elif "maintain links" in system:
            ids = _IDS.findall(prompt.split("Candidates:", 1)[-1])[:2]
            links = [{"id": i, "reason": "related", "weight": 0.6} for i in ids]
            links.append({"id": "2", "reason": "a rank, not an id", "weight": 0.5})
            evolve = [{"id": ids[0], "context": "Updated after a related turn."}] if ids else []
            text = json.dumps({"links": links, "evolve": evolve})
        elif "close existing memories" in system:
            ids = _IDS.findall(prompt.split("Existing memories:", 1)[-1])
            text = json.dumps({"verdicts": [{"id": i, "relation": "unrelated"} for i in ids]})
        else:
            text = "{}"
        tokens = {"input_tokens": len(system + prompt) // 4, "output_tokens": len(text) // 4}
        message = AIMessage(
            content=text, usage_metadata={**tokens, "total_tokens": sum(tokens.values())}
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def turns(n: int) -> list[dict[str, Any]]:
    data = load(DEFAULT_PATH)
    out: list[dict[str, Any]] = []
    for conv in data.conversations:
        for session in conv.sessions:
            for i, turn in enumerate(session.turns):
                out.append(
                    {
                        "content": turn.text,
                        "agent": safe(turn.speaker),
                        "episode": safe(session.id),
                        "scope": safe(conv.id),
                        "timestamp": session.datetime.replace(second=i % 60),
                        "kind": "episodic",
                    }
                )
    return out[:n]


def ingest(
    target: str,
    embedder: Embedder,
    items: list[dict[str, Any]],
    notes: NotesConfig,
    llm: Any = None,
) -> tuple[float, dict[str, Any]]:
    if target != ":memory:":  # a server store: start empty, whatever the last run left
        with closing(open_store(target)) as store:
            getattr(store, "wipe")()  # noqa: B009 - only server stores have it
    config = MemoryGraphConfig(notes=notes)
    with MemoryGraph.open(target, embedder=embedder, config=config, llm=llm) as mg:
        mg.embedder.embed_documents(["warm up"])
        start = time.perf_counter()
        for i in range(0, len(items), BATCH):
            mg.remember_many(items[i : i + BATCH])
        seconds = time.perf_counter() - start
        return seconds, mg.stats()


def report(name: str, target: str, embedder: Embedder, n: int) -> None:
    items = turns(n)
    print(f"\n== {name}: {len(items)} convbench turns, batches of {BATCH}, {embedder.name}")
    base, _ = ingest(target, embedder, items, NotesConfig(enabled=False))
    print(f"notes off      {len(items) / base:8.0f} memories/s  (baseline)")
    offline, stats = ingest(target, embedder, items, NotesConfig())
    counts = stats["counts"]
    print(
        f"notes offline  {len(items) / offline:8.0f} memories/s  ({base / offline:.2f}x the "
        f"baseline's throughput); LINKED {counts.get('LINKED', 0)}, "
        f"versions {counts.get('MemoryVersion', 0)}"
    )
    fake = PromptEchoModel(messages=iter(()))
    seconds, stats = ingest(target, embedder, items, NotesConfig(), llm=fake)
    counts = stats["counts"]
    print(
        f"fake LLM       {len(items) / seconds:8.0f} memories/s; LINKED "
        f"{counts.get('LINKED', 0)}, versions {counts.get('MemoryVersion', 0)}"
    )
    metrics = METRICS
    print("operation   " + " ".join(f"{m:>13}" for m in metrics))
    for op, row in stats["llm"].items():
        print(f"{op:<11} " + " ".join(f"{row[m]:>13}" for m in metrics))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "minilm"])
    parser.add_argument("--neo4j", help="also measure this Neo4j (it is wiped)")
    parser.add_argument("--no-local", action="store_true", help="skip the embedded store")
    args = parser.parse_args()
    # MiniLM's vectors come from the quality runs' disk cache, so the figures are the note
    # layer's and the store's, not the model's (and its similarities are the defaults' basis)
    embedder: Embedder = resolve_embedder(args.embedder)
    if args.embedder == "minilm":
        embedder = CachedEmbedder(embedder)
    if not args.no_local:
        report("embedded store", ":memory:", embedder, args.n)
    if args.neo4j:
        report("Neo4j", args.neo4j, embedder, args.n)


if __name__ == "__main__":
    main()
