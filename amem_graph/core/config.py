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

    Defaults were chosen on convbench (``bench/quality``), tuning on conversations 1-5 and
    checking on 6-10: dense retrieval is the stronger single signal there, and BM25 helps most
    as a deep, lightly weighted second opinion (100 candidates, weight 0.2, RRF k=30), with
    same-episode and lineage expansion at 0.2 and a light recency prior. On all 423 questions
    this gives recall@10 0.703 vs 0.687 dense alone and 0.513 BM25 alone; MRR 0.418 vs 0.318.
    Importance and recency priors only reorder memories that differ in them; confidence
    scales the relevance of memories with outcomes and leaves the others exactly as they are.
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
    graph_weight: float = Field(default=0.2, ge=0)
    recency_weight: float = Field(default=0.05, ge=0)
    importance_weight: float = Field(default=0.05, ge=0)
    #: exponent of the confidence factor that scales a memory's relevance (0: outcomes do not
    #: move recall); see ``recall/confidence.py``
    confidence_weight: float = Field(default=1.0, ge=0)
    #: the factor reads the outcome posterior as its mean plus this many standard deviations
    #: (optimism for memories with few outcomes; 0: the mean)
    confidence_bound: float = Field(default=1.0, ge=0)
    half_life_days: float = Field(default=30.0, gt=0)
    expand_seeds: int = Field(default=5, ge=0)
    expand_hops: int = Field(default=1, ge=0, le=2)
    expand_fanout: int = Field(default=10, ge=0)


class MemoryGraphConfig(BaseModel):
    """Per-MemoryGraph settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_content_length: int = Field(default=DEFAULT_MAX_CONTENT_LENGTH, ge=1)
    default_scope: str = DEFAULT_SCOPE
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
