"""Conflicts between a new memory and what is stored: duplicates, contradictions, supersession.

* A duplicate — the same content hash, or at least ``near_duplicate`` similar, in the same
  scope, both of a kind that merges (``merge_kinds``: not episodic; a repeated event is a new
  event) — is merged into the stored memory instead of stored twice: its ``support`` grows
  and its provenance gains the second author, episode, task and source.
* The adjudicator (a chat model; no offline version, since guessing contradictions from word
  overlap would do harm) labels neighbours at least ``adjudicate_threshold`` similar as
  ``contradicts`` (a CONTRADICTS edge), ``supersedes`` (the older one leaves active recall) or
  ``unrelated``. Ids it returns are checked like every model answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from amem_graph.core.config import NotesConfig
from amem_graph.core.models import Memory
from amem_graph.notes.links import Candidate
from amem_graph.notes.llm import Usage
from amem_graph.notes.prompts import AdjudicationAnswer, Verdict


def duplicate_of(
    new: Memory, candidates: Sequence[Candidate], config: NotesConfig
) -> Candidate | None:
    """The stored memory ``new`` merges into, if any: an exact duplicate first, else the most
    similar one past the near-duplicate threshold."""
    if not config.merge_duplicates or new.kind not in config.merge_kinds:
        return None
    mergeable = [c for c in candidates if c.memory.kind == new.kind and c.memory.scope == new.scope]
    for c in mergeable:
        if c.memory.content_hash == new.content_hash:
            return c
    if config.near_duplicate is None or not mergeable:
        return None
    best = max(mergeable, key=lambda c: (c.score, c.memory.id))
    return best if best.score >= config.near_duplicate else None


def close_neighbours(candidates: Sequence[Candidate], config: NotesConfig) -> list[Candidate]:
    """The candidates the adjudicator looks at."""
    return [c for c in candidates if c.score >= config.adjudicate_threshold]


def checked_verdicts(
    answer: AdjudicationAnswer, neighbours: Sequence[Candidate], usage: Usage
) -> list[Verdict]:
    """Verdicts on real neighbours (the first per id); any other id is dropped and counted."""
    real = {c.memory.id for c in neighbours}
    out: dict[str, Verdict] = {}
    for verdict in answer.verdicts:
        if verdict.id not in real:
            usage.add("adjudicate", "dropped_ids")
        else:
            out.setdefault(verdict.id, verdict)
    return [v for v in out.values() if v.relation != "unrelated"]
