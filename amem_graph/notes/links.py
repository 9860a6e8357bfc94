"""Links between notes: the nearest notes in scope are candidates, some become LINKED edges.

Candidates are the active memories nearest by vector in the new memory's scope, from the store
and from earlier items of the same batch (so a batch links as the same writes one by one
would). The model picks links by id with a reason and a weight; offline, a candidate is linked
when it is similar enough *and* shares a keyword. Every id a model returns is checked against
the candidates' real ids; the rest is dropped and counted (``dropped_ids``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from amem_graph.core.config import NotesConfig
from amem_graph.core.models import Memory
from amem_graph.core.text import stem
from amem_graph.notes.llm import Usage
from amem_graph.notes.prompts import LinkAnswer, LinkChoice


@dataclass(frozen=True)
class Candidate:
    """A note near a new one, and how near (cosine)."""

    memory: Memory
    score: float


@dataclass(frozen=True)
class Link:
    """A LINKED edge to write: new note -> ``target``."""

    target: str
    weight: float
    reason: str
    chosen_by: str  #: "llm" or "offline"


def terms(memory: Memory) -> dict[str, str]:
    """Stem -> surface of every keyword of a memory (the caller's and the note's)."""
    out: dict[str, str] = {}
    for word in [*memory.keywords, *memory.note_keywords]:
        out.setdefault(" ".join(stem(w) for w in word.lower().split()), word)
    return out


def shared_keywords(a: Memory, b: Memory) -> list[str]:
    """Keywords of ``a`` that ``b`` has too (compared as stems), in ``a``'s order."""
    theirs = terms(b)
    return [surface for key, surface in terms(a).items() if key in theirs]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity, 0 when either vector is zero."""
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return 0.0 if norm == 0 else float(va @ vb) / norm


def offline_links(new: Memory, candidates: Sequence[Candidate], config: NotesConfig) -> list[Link]:
    """Candidates at least ``link_threshold`` similar that share a keyword, best first."""
    out = []
    for c in candidates:
        if c.score < config.link_threshold:
            continue
        shared = shared_keywords(new, c.memory)
        if shared:
            reason = f"similar ({c.score:.2f}); shares {', '.join(shared[:5])}"
            weight = max(0.0, min(1.0, c.score)) * config.offline_link_weight
            out.append(Link(c.memory.id, round(weight, 4), reason, "offline"))
    return out[: config.max_links]


def checked_links(
    answer: LinkAnswer, candidates: Sequence[Candidate], config: NotesConfig, usage: Usage
) -> list[Link]:
    """The model's links to real candidates (each once, at most ``max_links``); every other
    id is dropped and counted."""
    real = {c.memory.id for c in candidates}
    chosen: dict[str, LinkChoice] = {}
    for choice in answer.links:
        if choice.id not in real:
            usage.add("link", "dropped_ids")
        else:
            chosen.setdefault(choice.id, choice)
    links = [
        Link(c.id, c.weight, c.reason or "chosen by the model", "llm") for c in chosen.values()
    ]
    return links[: config.max_links]
