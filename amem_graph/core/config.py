"""Settings of a MemoryGraph: limits and retrieval defaults, validated once at open time.

Nothing here reads the environment at import time; ``default_store_path`` reads ``AMEM_STORE``
when it is called, so tests and CLIs can change it.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from amem_graph.core.models import DEFAULT_MAX_CONTENT_LENGTH, DEFAULT_SCOPE

DEFAULT_STORE_PATH = os.path.join(".amem", "memory.db")


def default_store_path() -> str:
    """``$AMEM_STORE`` if set, else ``./.amem/memory.db``."""
    return os.environ.get("AMEM_STORE") or DEFAULT_STORE_PATH


class RetrievalConfig(BaseModel):
    """How recall gathers and fuses candidates; every field can be overridden per call.

    Chosen by the worst of the dev sets in ``bench/quality`` (convbench, its seeded variants,
    convbench-hard, talkbench), not their average. Dense retrieval leads on most of them and
    BM25 on the hard one's early ranks and on real chats, so BM25's weight rises per query
    when its best hit stands out (``text_boost``) rather than being fixed. Then the likely
    hits are re-scored on what the graph knows of each: a memory by an agent the query names
    gains (``speaker_weight``), a few-word memory ("Ha, brilliant.") loses (``terse_weight``).
    Importance and confidence priors only reorder memories that differ in them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["rrf", "weighted"] = "rrf"
    #: depth of the BM25 path (at least k)
    candidates: int = Field(default=100, ge=1, le=10_000)
    #: depth of the vector path, raised to 3k for large k: a memory deeper than that adds at
    #: most 1/(rrf_k + depth) and on convbench depths 30 to 100 gave the same results
    vector_candidates: int = Field(default=30, ge=1, le=10_000)
    rrf_k: int = Field(default=30, ge=1)
    vector_weight: float = Field(default=1.0, ge=0)
    text_weight: float = Field(default=0.2, ge=0)
    #: BM25's extra weight for a query whose best BM25 hit stands out from the next few (a
    #: rare name or term matched): up to text_weight + text_boost, none when it does not
    text_boost: float = Field(default=0.8, ge=0)
    graph_weight: float = Field(default=0.2, ge=0)
    recency_weight: float = Field(default=0.05, ge=0)
    importance_weight: float = Field(default=0.05, ge=0)
    confidence_weight: float = Field(default=0.1, ge=0)
    half_life_days: float = Field(default=30.0, gt=0)
    expand_seeds: int = Field(default=5, ge=0)
    expand_hops: int = Field(default=1, ge=0, le=2)
    expand_fanout: int = Field(default=10, ge=0)
    #: the likely hits' re-scoring, as shares of the best fused score: a memory whose agent
    #: the query names gains speaker_weight; one under terse_words words loses terse_weight
    speaker_weight: float = Field(default=0.4, ge=0)
    terse_weight: float = Field(default=0.3, ge=0)
    terse_words: int = Field(default=8, ge=0)


class MemoryGraphConfig(BaseModel):
    """Per-MemoryGraph settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_content_length: int = Field(default=DEFAULT_MAX_CONTENT_LENGTH, ge=1)
    default_scope: str = DEFAULT_SCOPE
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
