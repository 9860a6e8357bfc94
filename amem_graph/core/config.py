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
#: ``MemoryGraphConfig.episode_context`` and ``episode_lead_in``: chosen on the dev sets,
#: bench/quality/README.md
DEFAULT_EPISODE_CONTEXT = 0.15
DEFAULT_EPISODE_LEAD_IN = 10


def default_store_path() -> str:
    """``$AMEM_STORE`` if set, else ``./.amem/memory.db``."""
    return os.environ.get("AMEM_STORE") or DEFAULT_STORE_PATH


class RetrievalConfig(BaseModel):
    """How recall gathers and fuses candidates; every field can be overridden per call.

    Chosen by the worst of the dev sets in ``bench/quality`` (convbench, convbench-hard,
    convbench-long, talkbench; realchat, real chats, came later and agreed), not their
    average. Dense retrieval leads on three of them and BM25 on convbench-long, so BM25's
    weight rises per query when its best hit stands out (``text_boost``) on top of a base
    weight half the vectors'. Then the likely hits are re-scored on what the graph knows of
    each: a memory by an agent the query names gains (``speaker_weight``), a few-word memory
    ("Ha, brilliant.") loses (``terse_weight``), one written in a month the query names gains
    (``time_weight``), one that tells a time gains when the query asks when (``dated_weight``),
    one that names something new gains when the query asks where or who (``name_weight``);
    the name itself is left out of the searched text (``unnamed_search``).
    Importance and recency priors only reorder memories that differ in them; confidence
    scales the relevance of memories with outcomes and leaves the others exactly as they are.

    Tuned on convbench-long, checked on the others (``bench/quality/sweep.py``; R@10 / MRR@10
    of convbench, -hard, -long, talkbench): the earlier rrf_k 30, text_weight 0.2,
    speaker_weight 0.4 gave 0.819/0.624, 0.769/0.607, 0.636/0.468, 0.795/0.545 (worst margin
    over the better single signal +0.058 on -long); these give 0.819/0.607, 0.766/0.610,
    0.663/0.489, 0.798/0.552 (worst +0.085). text_weight 0.8 gained -long 0.003 and cost the
    others 0.01-0.03; rrf_k 60 fell short on -long.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["rrf", "weighted"] = "rrf"
    #: depth of the BM25 path (at least k)
    candidates: int = Field(default=100, ge=1, le=10_000)
    #: depth of the vector path, raised to 3k for large k: a memory deeper than that adds at
    #: most 1/(rrf_k + depth) and on convbench depths 30 to 100 gave the same results
    vector_candidates: int = Field(default=30, ge=1, le=10_000)
    rrf_k: int = Field(default=10, ge=1)
    vector_weight: float = Field(default=1.0, ge=0)
    text_weight: float = Field(default=0.5, ge=0)
    #: BM25's extra weight for a query whose best BM25 hit stands out from the next few (a
    #: rare name or term matched): up to text_weight + text_boost, none when it does not
    text_boost: float = Field(default=0.8, ge=0)
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
    #: the likely hits' re-scoring, as shares of the best fused score: a memory whose agent
    #: the query names gains speaker_weight; one under terse_words words loses terse_weight
    speaker_weight: float = Field(default=0.7, ge=0)
    terse_weight: float = Field(default=0.3, ge=0)
    terse_words: int = Field(default=8, ge=0)
    #: with speaker_weight on, a query naming an agent that wrote in the recalled scope is
    #: searched without the name, which the re-scoring then uses (``recall/names.py``): on
    #: every dev set recall@10 +0.04 to +0.07, MRR +0.03 to +0.06
    unnamed_search: bool = True
    #: a likely hit written in a month the query names (or the month after) gains this share
    #: (``recall/when.py``). Only talkbench's questions name months: there 0.2 took R@10 / MRR
    #: from 0.798 / 0.552 to 0.801 / 0.555 (its 32 dated questions: MRR 0.43 to 0.45), and
    #: left the other sets exactly as they were
    time_weight: float = Field(default=0.2, ge=0)
    #: for a query that asks when ("When did ...", "What year ...", "Which came first ..."), a
    #: likely hit that tells a time ("yesterday", "two weeks ago", "last May", "in 2022") gains
    #: this share (``recall/when.py``): temporal MRR@10 +0.08 to +0.13 on all five dev sets,
    #: realchat 0.746 to 0.829, and no other kind of question moves (bench/quality/README.md)
    dated_weight: float = Field(default=0.5, ge=0)
    #: for a query answered by a name ("Where did ...", "Who ...", "Which city ..."), a likely
    #: hit that names something the query does not ("we moved to Provo") gains this share
    #: (``recall/answers.py``): MRR@10 +0.006 to +0.012 on all five dev sets, single- and
    #: multi-hop questions; R@10 the same or better on each
    name_weight: float = Field(default=0.5, ge=0)


#: offline tags: tag -> words whose (stemmed) presence gives the tag
DEFAULT_TAG_VOCABULARY: dict[str, tuple[str, ...]] = {
    "deploy": ("deploy", "release", "rollout", "build", "ship", "staging", "production"),
    "incident": ("error", "fail", "failure", "outage", "crash", "bug", "broken", "incident"),
    "security": ("password", "vpn", "token", "credential", "secret", "key", "auth", "login"),
    "data": ("database", "db", "table", "query", "schema", "backup", "index"),
    "schedule": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                 "weekly", "daily", "tomorrow", "yesterday", "week", "month", "year"),
    "preference": ("like", "love", "prefer", "favorite", "favourite", "enjoy", "hate"),
    "plan": ("plan", "going", "want", "hope", "goal", "next"),
    "family": ("family", "kid", "kids", "son", "daughter", "mom", "dad", "mother", "father",
               "sister", "brother", "wife", "husband", "partner"),
    "work": ("work", "job", "career", "office", "boss", "colleague", "project", "team"),
    "health": ("health", "doctor", "sick", "hospital", "gym", "exercise", "sleep", "diet"),
    "travel": ("trip", "travel", "flight", "vacation", "visit", "city", "country"),
    "food": ("food", "cook", "recipe", "dinner", "lunch", "restaurant", "eat", "coffee"),
    "hobby": ("paint", "music", "guitar", "book", "read", "game", "photo", "garden", "hike"),
}  # fmt: skip


class NotesConfig(BaseModel):
    """The A-Mem note layer (``amem_graph.notes``): enrichment, links, evolution, conflicts.

    Thresholds are cosine similarities of the store's embedder. Without an LLM every step runs
    its deterministic offline version; the adjudicator runs only with one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    #: whether the note's keywords, tags and context feed the embedding and the BM25 terms.
    #: Off: indexing the offline notes cut hybrid recall@10 (MiniLM) on every dev set, from
    #: 0.819 / 0.769 / 0.795 to 0.654 / 0.655 / 0.703 on convbench / -hard / talkbench
    #: (``bench/quality/note_layer.py``); the notes beside the text leave it within 0.003
    index_notes: bool = False
    max_keywords: int = Field(default=6, ge=0, le=50)
    tag_vocabulary: dict[str, tuple[str, ...]] = Field(
        default_factory=lambda: dict(DEFAULT_TAG_VOCABULARY)
    )
    #: nearest existing notes in the same scope a new note may link to
    link_candidates: int = Field(default=8, ge=0, le=100)
    #: offline links: at least this similarity and one shared keyword, at most ``max_links``.
    #: On convbench similarity links mostly repeat the vector search and cost ranking: 0.45/4
    #: links gave recall@10 0.694 (MRR 0.334), 0.6/2 0.693 (0.315), 0.7/2 0.703 (0.352), against
    #: 0.703 (0.418) without links; with the defaults (0.7/2, weight 0.5) 0.703 (0.380)
    link_threshold: float = Field(default=0.7, ge=-1.0, le=1.0)
    max_links: int = Field(default=2, ge=0)
    #: offline links weigh their similarity times this, below same-episode neighbours (0.5) in
    #: recall's expansion: they mostly repeat what the vector search finds (at 0.45/4 links,
    #: 0.5 lifted MRR from 0.334 to 0.375; 0.25 gave the same)
    offline_link_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    evolve: bool = True
    #: merge a write into an active memory with the same content (or this similar) in scope
    merge_duplicates: bool = True
    near_duplicate: float | None = Field(default=0.97, ge=0.0, le=1.0)
    #: kinds that merge: an episodic memory is an event, and a repeated event is a new one
    merge_kinds: tuple[str, ...] = ("semantic", "procedural", "insight")
    #: LLM only: neighbours at least this similar are labelled contradicts/supersedes/unrelated
    adjudicate: bool = True
    adjudicate_threshold: float = Field(default=0.75, ge=-1.0, le=1.0)
    #: LLM: malformed answers retried this many times before the offline step takes over
    llm_retries: int = Field(default=2, ge=0, le=10)
    llm_concurrency: int = Field(default=4, ge=1, le=64)
    #: forgetting: importance halves every this many days a memory goes unread
    decay_half_life_days: float = Field(default=30.0, gt=0)


class MemoryGraphConfig(BaseModel):
    """Per-MemoryGraph settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_content_length: int = Field(default=DEFAULT_MAX_CONTENT_LENGTH, ge=1)
    default_scope: str = DEFAULT_SCOPE
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    notes: NotesConfig = Field(default_factory=NotesConfig)
    #: how much of the vector of the memory before it in its episode a memory's vector carries
    #: when the library embeds it (``amem_graph.notes.episode_context``): a chat turn means what it
    #: means beside the turn it answers. 0 embeds each memory alone
    episode_context: float = Field(default=DEFAULT_EPISODE_CONTEXT, ge=0.0, le=1.0)
    #: how many of the last words of the memory before it in its episode a memory keeps as its
    #: ``lead_in``, which BM25 searches with its own words (a turn is found by the question it
    #: answers). 0 keeps none
    episode_lead_in: int = Field(default=DEFAULT_EPISODE_LEAD_IN, ge=0, le=200)
