"""Pydantic domain types: what the library accepts and returns.

Inputs are validated here, before any store is touched, so a bad item in a batch fails the whole
batch with a message naming the field and nothing half-written.
"""

from __future__ import annotations

import hashlib
import math
import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, computed_field, field_validator

from amem_graph.core.errors import ValidationError

MemoryKind = Literal["episodic", "semantic", "procedural", "insight"]
MemoryStatus = Literal["active", "quarantined", "retracted", "superseded", "archived"]

DEFAULT_SCOPE = "default"
DEFAULT_MAX_CONTENT_LENGTH = 32_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/\-]{0,199}$")


def check_name(value: str) -> str:
    """Ids, agent, task and scope names: 1-200 safe characters, no spaces or quotes."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):  # fullmatch: no "ab\n"
        raise ValueError(
            f"{value!r} is not a valid name: use 1-200 characters from letters, digits and "
            "_ . : @ / -, starting with a letter or digit"
        )
    return value


def _unicode_text(value: str) -> str:
    """Text every store can hold: a lone surrogate (e.g. ``"\\ud800"``) is not valid UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text is not valid Unicode (a lone surrogate at position {exc.start})"
        ) from None
    return value


def valid_name(value: str, what: str) -> str:
    """``check_name`` for public call arguments: a ValidationError naming the argument."""
    try:
        return check_name(value)
    except ValueError as exc:
        raise ValidationError(f"{what}: {exc}") from None


def ensure_aware(value: datetime) -> datetime:
    """Reject naive timestamps: a memory's time must mean one instant everywhere.

    Returned in UTC; an instant that UTC cannot represent (year 1 at +05:00, 9999-12-31 at
    -05:00) is refused here rather than overflowing later in a store.
    """
    if not isinstance(value, datetime):
        raise ValueError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError(
            f"timestamp {value.isoformat()} has no timezone; give one, e.g. "
            f"{value.isoformat()}+00:00 (from Python: an aware datetime)"
        )
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(
            f"timestamp {value.isoformat()} is outside the range of times in UTC (years 1 to 9999)"
        ) from None


def valid_time(value: datetime, what: str) -> datetime:
    """``ensure_aware`` for public call arguments: a ValidationError naming the argument."""
    try:
        return ensure_aware(value)
    except ValueError as exc:
        raise ValidationError(f"{what}: {exc}") from None


def valid_count(value: int, what: str, minimum: int = 1) -> int:
    """A whole number argument (``k``, limits): not a string, float or bool."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{what} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValidationError(f"{what} must be at least {minimum}, got {value}")
    return value


Name = Annotated[str, AfterValidator(check_name)]
AwareDatetime = Annotated[datetime, AfterValidator(ensure_aware)]


def utcnow() -> datetime:
    """Now, timezone-aware; the only clock the library reads."""
    return datetime.now(UTC)


def content_hash(content: str) -> str:
    """Stable fingerprint of a memory's text, used for idempotent re-remembering."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def beta_confidence(successes: float, failures: float) -> float:
    """Posterior mean of a Beta(1 + successes, 1 + failures): 0.5 with no evidence."""
    return (1.0 + successes) / (2.0 + successes + failures)


class MemoryInput(BaseModel):
    """One memory to write, as given by a caller (``remember`` and each ``remember_many`` item)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    content: str
    id: Name | None = None
    agent: Name | None = None
    task: Name | None = None
    episode: Name | None = None
    scope: Name = DEFAULT_SCOPE
    kind: MemoryKind = "semantic"
    tags: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    context: str = ""
    derived_from: list[Name] = Field(default_factory=list)
    source: str | None = None
    timestamp: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    importance: float = Field(default=0.5, ge=0.0, le=1.0)

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is empty or only whitespace")
        return value

    @field_validator("content", "context", "source")
    @classmethod
    def _encodable(cls, value: str | None) -> str | None:
        return None if value is None else _unicode_text(value)

    @field_validator("tags", "keywords", "derived_from", mode="before")
    @classmethod
    def _not_a_bare_string(cls, value: Any) -> Any:
        if isinstance(value, str | bytes):
            raise ValueError(f"expected a list of strings, got the string {value!r}")
        return value

    @field_validator("tags", "keywords")
    @classmethod
    def _clean_terms(cls, value: list[str]) -> list[str]:
        cleaned = [_unicode_text(v.strip()) for v in value]
        if any(not v for v in cleaned):
            raise ValueError("tags and keywords must be non-empty strings")
        return list(dict.fromkeys(cleaned))

    @field_validator("source")
    @classmethod
    def _source_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("source is empty")
        return value


class Memory(BaseModel):
    """A stored memory: an A-Mem note plus provenance, validity, confidence and status."""

    model_config = ConfigDict(frozen=True)

    id: str
    content: str
    kind: MemoryKind = "semantic"
    scope: str = DEFAULT_SCOPE
    agent: str | None = None
    task: str | None = None
    episode: str | None = None
    source: str | None = None
    tags: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    context: str = ""
    created_at: datetime
    valid_from: datetime
    valid_to: datetime | None = None
    importance: float = 0.5
    successes: float = 0.0
    failures: float = 0.0
    status: MemoryStatus = "active"
    content_hash: str
    version: int = 1
    #: how many writes asserted this content (a merged duplicate adds one)
    support: int = 1
    #: the note layer's own keywords, tags and context (``amem_graph.notes``); the caller's
    #: ``keywords``/``tags``/``context`` are never rewritten
    note_keywords: list[str] = Field(default_factory=list)
    note_tags: list[str] = Field(default_factory=list)
    note_context: str = ""
    #: the last words of the memory before it in its episode (same scope), searched with its
    #: own words: a turn is found by the question it answers (``notes.episode_context``)
    lead_in: str = ""
    #: whether the note fields feed BM25 (and fed the embedding when it was written)
    note_indexed: bool = False
    embedding: list[float] | None = Field(default=None, repr=False)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def confidence(self) -> float:
        """Beta posterior mean from the outcome credit this memory received."""
        return beta_confidence(self.successes, self.failures)

    def is_valid_at(self, when: datetime) -> bool:
        """Whether the memory's validity window contains ``when``."""
        return self.valid_from <= when and (self.valid_to is None or when < self.valid_to)


class Agent(BaseModel):
    """An agent that writes and reads memories; trust follows what it wrote."""

    id: str
    name: str
    trust: float = 0.5
    memory_count: int = 0
    trust_by_scope: dict[str, float] = Field(default_factory=dict)
    #: the outcome credit its memories received, which trust is the posterior of
    successes: float = 0.0
    failures: float = 0.0


class Task(BaseModel):
    """A unit of work that episodes belong to."""

    id: str
    scope: str = DEFAULT_SCOPE


class Episode(BaseModel):
    """One run of an agent: the unit of provenance for reads, writes and outcomes."""

    id: str
    agent: str | None = None
    task: str | None = None
    scope: str = DEFAULT_SCOPE
    started_at: datetime
    ended_at: datetime | None = None


class Outcome(BaseModel):
    """How an episode ended; drives confidence of the memories it used."""

    id: str
    episode: str
    success: bool
    score: float | None = None
    detail: str = ""
    at: datetime
    #: the memories the agent said it acted on (sorted); None when it did not say
    used: list[str] | None = None


class Signal(BaseModel):
    """One retrieval signal's raw value, its rank among that signal's candidates, and what it
    added to the fused score (negative for a penalty): a hit's contributions sum to ``fused``."""

    value: float
    rank: int | None = None
    contribution: float = 0.0


class PathStep(BaseModel):
    """One edge on the graph path that brought an expansion hit in."""

    source: str
    edge: str
    target: str


class ConfidenceShift(BaseModel):
    """How a hit's outcome record moved it: its counts, their posterior, and the factor its
    relevance was scaled by (1 with no outcomes; the hit's relevance signals show the scaled
    values and ranks, see ``recall/confidence.py``)."""

    successes: float
    failures: float
    #: posterior mean and the optimistic bound recall ranks on
    mean: float
    bound: float
    factor: float
    #: the fused score and the rank the hit would have had without its confidence
    unadjusted: float
    rank_without: int


class Explanation(BaseModel):
    """Why a hit was returned: every signal, the fused score and, for expansion, the path."""

    signals: dict[str, Signal] = Field(default_factory=dict)
    fused: float = 0.0
    path: list[PathStep] = Field(default_factory=list)
    confidence: ConfidenceShift | None = None
    #: what the vector and BM25 searches ran on, when it is not the query: recall left out the
    #: agents the query names (``RetrievalConfig.unnamed_search``)
    searched: str | None = None


class Hit(BaseModel):
    """A recalled memory with its score and, on request, its explanation."""

    memory: Memory
    score: float
    rank: int
    explanation: Explanation | None = None


def finite_vector(values: list[float] | tuple[float, ...], dims: int) -> list[float]:
    """Validate an embedding: the store's dimension, only finite numbers."""
    if len(values) != dims:
        raise ValueError(f"embedding has {len(values)} dimensions, the store uses {dims}")
    for i, v in enumerate(values):
        if not math.isfinite(v):
            raise ValueError(f"embedding value {i} is {v}, not a finite number")
    return [float(v) for v in values]


def to_plain(value: Any) -> Any:
    """JSON-friendly form of model dumps (datetimes as ISO strings)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value
