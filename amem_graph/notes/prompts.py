"""What the note layer asks a chat model, and the pydantic answers it accepts.

Candidates are always shown with their real memory ids, never by position, and every id in an
answer is checked against them: a peer system mapped "the 2nd neighbour" to the wrong note.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from amem_graph.core.models import Memory


def _one_line(value: str) -> str:
    return " ".join(value.split())


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class NoteAnswer(_Answer):
    """A note for one memory."""

    keywords: list[str] = Field(min_length=1, max_length=12)
    tags: list[str] = Field(default_factory=list, max_length=8)
    context: str = Field(min_length=1, max_length=400)

    @field_validator("keywords", "tags")
    @classmethod
    def _terms(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(t for t in (_one_line(v) for v in value) if t))

    @field_validator("context")
    @classmethod
    def _line(cls, value: str) -> str:
        line = _one_line(value)
        if not line:
            raise ValueError("context is empty")
        return line


class LinkChoice(_Answer):
    id: str
    reason: str = Field(default="", max_length=300)
    weight: float = Field(ge=0.0, le=1.0)


class NeighbourUpdate(_Answer):
    id: str
    context: str | None = Field(default=None, max_length=400)
    tags: list[str] | None = Field(default=None, max_length=8)


class LinkAnswer(_Answer):
    """Which candidates the new note links to, and how linked neighbours' notes evolve."""

    links: list[LinkChoice] = Field(default_factory=list)
    evolve: list[NeighbourUpdate] = Field(default_factory=list)


class Verdict(_Answer):
    id: str
    relation: Literal["contradicts", "supersedes", "unrelated"]
    reason: str = Field(default="", max_length=300)


class AdjudicationAnswer(_Answer):
    """How the new memory relates to each close neighbour."""

    verdicts: list[Verdict] = Field(default_factory=list)


class InsightItem(_Answer):
    content: str = Field(min_length=1, max_length=2000)
    sources: list[str] = Field(min_length=1)


class ConsolidationAnswer(_Answer):
    """Insights distilled from a set of episodic memories."""

    insights: list[InsightItem] = Field(min_length=1, max_length=10)


ENRICH_SYSTEM = (
    "You write Zettelkasten notes for an agent's long-term memory. For the memory given, name "
    "its most salient keywords (entities, nouns, key verbs; 3 to 8), a few broad tags "
    "(prefer the vocabulary offered when it fits) and one sentence of context: the topic, "
    "the main point and why it would matter later."
)
LINK_SYSTEM = (
    "You maintain links between notes in an agent's memory. Given a new note and candidate "
    "notes (each with its id), choose the candidates that are meaningfully related: for each, "
    "its id exactly as given, a short reason and a weight from 0 to 1. For linked notes whose "
    "context or tags should change in the light of the new note, give their id and the new "
    "context and/or tags. Use only ids from the candidates."
)
ADJUDICATE_SYSTEM = (
    "You check a new memory against close existing memories. For each existing memory (by its "
    "id exactly as given) say whether the new one contradicts it, supersedes it (states a newer "
    "truth that replaces it) or is unrelated to it, with a short reason."
)
CONSOLIDATE_SYSTEM = (
    "You distil an agent's episodic memories into a few durable insights: facts, lessons or "
    "procedures worth keeping after the details are forgotten. Each insight names the ids of "
    "the memories it rests on, exactly as given."
)


def describe(memory: Memory) -> str:
    """One candidate as the model sees it: id first, then the note."""
    keywords = ", ".join([*memory.keywords, *memory.note_keywords])
    tags = ", ".join([*memory.tags, *memory.note_tags])
    context = memory.context or memory.note_context
    return (
        f"- id: {memory.id}\n  content: {memory.content}\n  keywords: {keywords}\n"
        f"  tags: {tags}\n  context: {context}"
    )


def enrich_prompt(content: str, vocabulary: list[str]) -> str:
    """The construction request for one memory."""
    return f"Tag vocabulary: {', '.join(vocabulary)}\n\nMemory:\n{content}"


def link_prompt(new: Memory, candidates: list[Memory]) -> str:
    """The link-and-evolve request for one new note."""
    listed = "\n".join(describe(c) for c in candidates)
    return f"New note:\n{describe(new)}\n\nCandidates:\n{listed}"


def adjudicate_prompt(new: Memory, neighbours: list[Memory]) -> str:
    """The conflict check for one new memory."""
    listed = "\n".join(describe(c) for c in neighbours)
    return f"New memory:\n{describe(new)}\n\nExisting memories:\n{listed}"


def consolidate_prompt(memories: list[Memory]) -> str:
    """The consolidation request over a set of memories."""
    return "Memories:\n" + "\n".join(f"- id: {m.id}\n  content: {m.content}" for m in memories)
