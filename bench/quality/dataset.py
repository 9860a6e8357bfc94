"""Typed loader and validator for ``convbench``-shaped retrieval benchmarks.

The same shape serves our generated data and LoCoMo-like public sets converted to it,
so evaluation code depends only on these dataclasses, never on raw JSON. Validation
is strict because a silently dangling evidence id would quietly deflate recall.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain")


@dataclass(frozen=True)
class Turn:
    """One chat message; the unit that a memory system stores and retrieves."""

    id: str
    speaker: str
    text: str
    conversation_id: str
    session_id: str
    timestamp: datetime  # the session's datetime: all turns of a session share it


@dataclass(frozen=True)
class Session:
    id: str
    datetime: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conversation:
    id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]

    def turns(self) -> Iterator[Turn]:
        """All turns in chronological order."""
        for session in self.sessions:
            yield from session.turns


@dataclass(frozen=True)
class Question:
    id: str
    conversation_id: str
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: str


@dataclass(frozen=True)
class Dataset:
    name: str
    version: int
    conversations: tuple[Conversation, ...]
    questions: tuple[Question, ...]

    def conversation(self, conversation_id: str) -> Conversation:
        for conv in self.conversations:
            if conv.id == conversation_id:
                return conv
        raise KeyError(conversation_id)

    def turns(self, conversation_id: str | None = None) -> Iterator[Turn]:
        """Turns of one conversation, or of all conversations in order."""
        convs = (
            self.conversations if conversation_id is None else (self.conversation(conversation_id),)
        )
        for conv in convs:
            yield from conv.turns()

    def turn_index(self) -> dict[str, Turn]:
        return {t.id: t for t in self.turns()}

    def questions_for(self, conversation_id: str) -> list[Question]:
        return [q for q in self.questions if q.conversation_id == conversation_id]

    def by_category(self) -> dict[str, list[Question]]:
        out: dict[str, list[Question]] = {c: [] for c in CATEGORIES}
        for q in self.questions:
            out[q.category].append(q)
        return out

    def stats(self) -> dict[str, int]:
        counts = {
            "conversations": len(self.conversations),
            "sessions": sum(len(c.sessions) for c in self.conversations),
            "turns": sum(1 for _ in self.turns()),
            "questions": len(self.questions),
        }
        for cat, qs in self.by_category().items():
            counts[cat] = len(qs)
        return counts


def _field(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise ValueError(f"{where}: missing field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(
            f"{where}: field {key!r} should be {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _datetime(value: str, where: str) -> datetime:
    try:
        dt = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"{where}: invalid ISO 8601 datetime {value!r}") from exc
    if dt.tzinfo is None:
        raise ValueError(f"{where}: datetime {value!r} has no timezone")
    return dt


def parse(data: Mapping[str, Any]) -> Dataset:
    """Build a validated Dataset from decoded JSON; raises ValueError naming the problem."""
    name = _field(data, "name", str, "dataset")
    version = _field(data, "version", int, "dataset")
    seen: set[str] = set()

    def claim(id_: str, where: str) -> str:
        if not id_:
            raise ValueError(f"{where}: empty id")
        if id_ in seen:
            raise ValueError(f"{where}: duplicate id {id_!r}")
        seen.add(id_)
        return id_

    conversations: list[Conversation] = []
    turn_conv: dict[str, str] = {}
    for c_i, c in enumerate(_field(data, "conversations", list, "dataset")):
        cwhere = f"conversations[{c_i}]"
        cid = claim(_field(c, "id", str, cwhere), cwhere)
        speakers = tuple(_field(c, "speakers", list, cwhere))
        if not speakers or not all(isinstance(s, str) for s in speakers):
            raise ValueError(f"conversation {cid}: speakers must be a non-empty list of strings")
        sessions: list[Session] = []
        previous: datetime | None = None
        for s_i, s in enumerate(_field(c, "sessions", list, cwhere)):
            swhere = f"conversation {cid} sessions[{s_i}]"
            sid = claim(_field(s, "id", str, swhere), swhere)
            when = _datetime(_field(s, "datetime", str, swhere), f"session {sid}")
            if previous is not None and when < previous:
                raise ValueError(f"session {sid}: datetime goes back in time")
            previous = when
            turns: list[Turn] = []
            for t_i, t in enumerate(_field(s, "turns", list, swhere)):
                twhere = f"session {sid} turns[{t_i}]"
                tid = claim(_field(t, "id", str, twhere), twhere)
                speaker = _field(t, "speaker", str, twhere)
                if speaker not in speakers:
                    raise ValueError(
                        f"turn {tid}: speaker {speaker!r} is not one of {list(speakers)}"
                    )
                turns.append(Turn(tid, speaker, _field(t, "text", str, twhere), cid, sid, when))
                turn_conv[tid] = cid
            if not turns:
                raise ValueError(f"session {sid}: no turns")
            sessions.append(Session(sid, when, tuple(turns)))
        conversations.append(Conversation(cid, speakers, tuple(sessions)))

    conv_ids = {c.id for c in conversations}
    questions: list[Question] = []
    for q_i, q in enumerate(_field(data, "questions", list, "dataset")):
        qwhere = f"questions[{q_i}]"
        qid = claim(_field(q, "id", str, qwhere), qwhere)
        cid = _field(q, "conversation_id", str, qwhere)
        if cid not in conv_ids:
            raise ValueError(f"question {qid}: unknown conversation_id {cid!r}")
        category = _field(q, "category", str, qwhere)
        if category not in CATEGORIES:
            expected = ", ".join(CATEGORIES)
            raise ValueError(f"question {qid}: invalid category {category!r} (expected {expected})")
        evidence = _field(q, "evidence", list, qwhere)
        if not evidence:
            raise ValueError(f"question {qid}: empty evidence")
        if len(set(evidence)) != len(evidence):
            raise ValueError(f"question {qid}: duplicate evidence ids")
        for ev in evidence:
            if ev not in turn_conv:
                raise ValueError(f"question {qid}: evidence id {ev!r} does not exist")
            if turn_conv[ev] != cid:
                raise ValueError(
                    f"question {qid}: evidence id {ev!r} belongs to conversation {turn_conv[ev]!r}"
                )
        text = _field(q, "question", str, qwhere)
        answer = _field(q, "answer", str, qwhere)
        if not text.strip() or not answer.strip():
            raise ValueError(f"question {qid}: empty question or answer")
        questions.append(Question(qid, cid, text, answer, tuple(evidence), category))
    return Dataset(name, version, tuple(conversations), tuple(questions))


def load(path: str | Path) -> Dataset:
    """Read and validate a dataset file."""
    with open(path, encoding="utf-8") as fh:
        return parse(json.load(fh))


def iter_questions(dataset: Dataset, categories: Sequence[str] | None = None) -> Iterator[Question]:
    """Questions, optionally restricted to some categories."""
    for q in dataset.questions:
        if categories is None or q.category in categories:
            yield q


DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "convbench.json"
