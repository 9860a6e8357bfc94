"""Helpers shared by the benchmarks: synthetic corpora, precomputed vectors, timing."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from amem_graph.stores.base import GraphStore

WORDS = [
    "deploy",
    "service",
    "cache",
    "database",
    "index",
    "query",
    "latency",
    "retry",
    "timeout",
    "queue",
    "worker",
    "cluster",
    "node",
    "shard",
    "replica",
    "backup",
    "restore",
    "config",
    "secret",
    "token",
    "user",
    "session",
    "login",
    "payment",
    "order",
    "invoice",
    "refund",
    "customer",
    "ticket",
    "alert",
    "metric",
    "trace",
    "log",
    "error",
    "warning",
    "build",
    "test",
    "release",
    "branch",
    "merge",
    "review",
    "pipeline",
    "runner",
    "image",
    "container",
    "volume",
    "network",
    "proxy",
    "gateway",
    "route",
    "schema",
    "migration",
    "table",
    "column",
    "vector",
    "embedding",
    "model",
    "prompt",
    "agent",
    "memory",
    "task",
    "episode",
]


class LookupEmbedder:
    """Serves precomputed vectors so a benchmark times the store, not the model."""

    name = "bench-lookup"

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.dims = int(vectors.shape[1])
        self._by_text = {t: i for i, t in enumerate(texts)}
        self._vectors = vectors
        self._rng = np.random.default_rng(7)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        idx = [self._by_text[t] for t in texts]
        return self._vectors[idx].tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        if text in self._by_text:
            return self._vectors[self._by_text[text]].tolist()  # type: ignore[no-any-return]
        vec = self._rng.standard_normal(self.dims).astype(np.float32)
        return (vec / np.linalg.norm(vec)).tolist()  # type: ignore[no-any-return]


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """Domain words first, then pronounceable made-up words: a long-tailed vocabulary."""
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "dre", "stu"]
    made = {"".join(rng.choice(syllables, size=int(rng.integers(2, 5)))) for _ in range(size * 2)}
    return WORDS + sorted(made)[: size - len(WORDS)]


def corpus(n: int, dims: int = 384, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """n short texts whose words follow Zipf's law over 20k words, and n random unit vectors."""
    rng = np.random.default_rng(seed)
    words = vocabulary(20_000, rng)
    probs = 1.0 / np.arange(1, len(words) + 1) ** 1.05
    probs /= probs.sum()
    texts = [f"note {i}: " + " ".join(rng.choice(words, size=14, p=probs)) for i in range(n)]
    vectors = rng.standard_normal((n, dims)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, vectors


#: memories per episode in ``items``
EPISODE = 25


def items(texts: Sequence[str], start: datetime | None = None) -> list[dict[str, object]]:
    """remember_many items for a corpus, spread over agents, tasks (big hubs), episodes of
    ``EPISODE`` consecutive memories (small hubs) and a year of time."""
    t0 = start or datetime(2026, 1, 1, tzinfo=UTC)
    return [
        {
            "content": t,
            "id": f"m{i}",
            "agent": f"agent-{i % 8}",
            "task": f"task-{i % 50}",
            "episode": f"episode-{i // EPISODE}",
            "timestamp": t0 + timedelta(minutes=5 * i),
        }
        for i, t in enumerate(texts)
    ]


def holds(store: GraphStore, rows: Sequence[dict[str, object]]) -> bool:
    """Whether the store already holds exactly these ``items`` (a ``--keep`` run's data, to
    be measured again with ``--reuse``): their number, and the first, middle and last as
    written (content, episode, time, and scope where the item names one: tenants laid out in
    runs and dealt round-robin hold the same memories written at other times)."""
    if not rows or store.counts().get("Memory") != len(rows):
        return False
    ends = (rows[0], rows[len(rows) // 2], rows[-1])
    found = store.get_memories([str(r["id"]) for r in ends], embeddings=False)
    for row in ends:
        memory = found.get(str(row["id"]))
        if memory is None or (memory.content, memory.episode) != (row["content"], row["episode"]):
            return False
        if "scope" in row and memory.scope != row["scope"]:
            return False
        if "timestamp" in row and memory.created_at != row["timestamp"]:
            return False
    return True


def clock(fn: Callable[..., object], *args: Any, **kwargs: Any) -> float:
    """Wall-clock milliseconds of one call."""
    t = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - t) * 1000.0


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock milliseconds of ``repeat`` calls."""
    return [clock(fn) for _ in range(repeat)]


def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (0-100) of values."""
    return float(np.percentile(np.asarray(values), q))


def median(values: Sequence[float]) -> float:
    """Median of values."""
    return float(statistics.median(values))
