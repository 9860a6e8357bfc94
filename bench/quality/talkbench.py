"""Build ``talkbench``: a hand-written conversational memory benchmark, from plain text.

``convbench`` comes from templates, so a retriever can overfit its phrasing. talkbench
holds chats written by hand, one ``data/talkbench/<id>.txt`` file per conversation,
and this script turns them into ``data/talkbench.json`` in the convbench layout, so
``dataset.load`` and every evaluation script read it unchanged.

Source format (one file per conversation)::

    # conversation h1: Priya, Dom
    ## session 2024-02-03T19:40:00-05:00
    Priya: I land on the 14th {lisbon_plan}
    Dom: nice
    ## questions
    single-hop | Where is Priya flying to? | Lisbon | lisbon_plan

A trailing ``{tag}`` marks a turn as evidence; questions name tags (in chat order)
and the tags become turn ids, so the annotation never depends on string search.
Ids follow convbench: ``h1``, ``h1_s1``, ``h1_s1_t1``, ``h1_q1`` (1-based).

Run ``python bench/quality/talkbench.py`` to rebuild the JSON, or add ``--check`` to
exit non-zero when the committed JSON is out of date with the sources. The same format and
script serve ``realchat`` (real chats annotated by hand, ``realchat.py``): ``--src
bench/quality/data/realchat`` writes ``data/realchat.json``; a set is named after its folder.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_SRC = HERE / "data" / "talkbench"
VERSION = 1
SEED = 0  # nothing is random; kept so the header matches convbench's

# Kept in sync with dataset.CATEGORIES; duplicated so this script stays importable alone.
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain")

_HEADER = re.compile(r"#\s+conversation\s+(?P<id>[A-Za-z0-9_]+)\s*:\s*(?P<speakers>.*)")
_SESSION = re.compile(r"##\s+session\s+(?P<when>.*?)\s*")
_QUESTIONS = re.compile(r"##\s+questions\s*")
_TURN = re.compile(r"(?P<speaker>[^:]+?)\s*:\s*(?P<text>.*)")
_TAG_NAME = re.compile(r"[A-Za-z0-9_]+")
_TRAILING_TAG = re.compile(r"\s*\{(?P<tag>[^{}]*)\}\s*$")
_FILE_STEM = re.compile(r"(?P<prefix>[A-Za-z_]*?)(?P<number>\d+)")


class SourceError(ValueError):
    """A problem in a source file, reported as ``file:line: message`` so it is easy to fix."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{path.name}:{line}: {message}")


@dataclass
class _Tag:
    turn_id: str
    line: int
    order: int  # position of the turn in the conversation, to check chat order
    used: bool = False


@dataclass
class _State:
    """Everything parsed from one file so far."""

    conv_id: str = ""
    speakers: tuple[str, ...] = ()
    sessions: list[dict[str, Any]] = field(default_factory=list)
    session_lines: list[int] = field(default_factory=list)
    previous: datetime | None = None
    tags: dict[str, _Tag] = field(default_factory=dict)
    n_turns: int = 0
    questions: list[dict[str, Any]] = field(default_factory=list)
    in_questions: bool = False


def _parse_header(path: Path, lineno: int, line: str, state: _State) -> None:
    match = _HEADER.fullmatch(line)
    if match is None:
        raise SourceError(
            path, lineno, "first line must be '# conversation <id>: <speaker>, <speaker>'"
        )
    state.conv_id = match["id"]
    if state.conv_id != path.stem:
        raise SourceError(
            path, lineno, f"conversation id {state.conv_id!r} does not match file name"
        )
    speakers = tuple(s.strip() for s in match["speakers"].split(","))
    if len(speakers) != 2 or not all(speakers) or speakers[0] == speakers[1]:
        raise SourceError(path, lineno, "a conversation needs exactly two distinct speakers")
    for s in speakers:
        if ":" in s or "|" in s:
            raise SourceError(path, lineno, f"speaker name {s!r} may not contain ':' or '|'")
    state.speakers = speakers


def _parse_session(path: Path, lineno: int, when_text: str, state: _State) -> None:
    try:
        when = datetime.fromisoformat(when_text)
    except ValueError:
        raise SourceError(path, lineno, f"invalid ISO 8601 datetime {when_text!r}") from None
    if when.tzinfo is None:
        raise SourceError(path, lineno, f"datetime {when_text!r} has no timezone")
    if state.previous is not None and when <= state.previous:
        raise SourceError(
            path, lineno, f"session datetime {when_text!r} is not after the previous session"
        )
    state.previous = when
    sid = f"{state.conv_id}_s{len(state.sessions) + 1}"
    state.sessions.append({"id": sid, "datetime": when_text, "turns": []})
    state.session_lines.append(lineno)


def _parse_turn(path: Path, lineno: int, line: str, state: _State) -> None:
    if not state.sessions:
        raise SourceError(path, lineno, "turn before the first '## session' line")
    match = _TURN.fullmatch(line)
    if match is None:
        raise SourceError(path, lineno, "expected a turn 'Speaker: text'")
    speaker, text = match["speaker"], match["text"]
    if speaker not in state.speakers:
        expected = " or ".join(repr(s) for s in state.speakers)
        raise SourceError(path, lineno, f"unknown speaker {speaker!r} (expected {expected})")
    session = state.sessions[-1]
    tid = f"{session['id']}_t{len(session['turns']) + 1}"
    tag_match = _TRAILING_TAG.search(text)
    if tag_match is not None:
        tag = tag_match["tag"]
        if not _TAG_NAME.fullmatch(tag):
            raise SourceError(path, lineno, f"malformed tag {{{tag}}} (letters, digits, _ only)")
        if tag in state.tags:
            first = state.tags[tag].line
            raise SourceError(path, lineno, f"duplicate tag {tag!r} (first used on line {first})")
        state.tags[tag] = _Tag(tid, lineno, state.n_turns)
        text = text[: tag_match.start()]
    text = text.strip()
    if not text:
        raise SourceError(path, lineno, "empty turn text")
    if "{" in text or "}" in text:
        raise SourceError(path, lineno, "braces are only allowed in a tag at the end of a turn")
    session["turns"].append({"id": tid, "speaker": speaker, "text": text})
    state.n_turns += 1


def _parse_question(path: Path, lineno: int, line: str, state: _State) -> None:
    parts = [p.strip() for p in line.split("|")]
    if len(parts) != 4:
        raise SourceError(
            path,
            lineno,
            f"expected 'category | question | answer | tags' (4 fields), got {len(parts)}",
        )
    category, question, answer, tag_list = parts
    if category not in CATEGORIES:
        expected = ", ".join(CATEGORIES)
        raise SourceError(path, lineno, f"bad category {category!r} (expected {expected})")
    if not question or not answer:
        raise SourceError(path, lineno, "empty question or answer")
    tags = [t.strip() for t in tag_list.split(",")]
    if not tag_list or not all(tags):
        raise SourceError(path, lineno, "a question needs a comma-separated list of tags")
    evidence: list[str] = []
    last = -1
    for tag in tags:
        if tag not in state.tags:
            raise SourceError(path, lineno, f"unknown tag {tag!r}")
        info = state.tags[tag]
        if info.turn_id in evidence:
            raise SourceError(path, lineno, f"tag {tag!r} listed twice")
        if info.order < last:
            raise SourceError(path, lineno, f"tags are not in chat order at {tag!r}")
        last = info.order
        info.used = True
        evidence.append(info.turn_id)
    state.questions.append(
        {
            "id": f"{state.conv_id}_q{len(state.questions) + 1}",
            "conversation_id": state.conv_id,
            "question": question,
            "answer": answer,
            "evidence": evidence,
            "category": category,
        }
    )


def parse_file(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One source file -> (conversation, questions) as JSON-ready dicts; strict on errors."""
    state = _State()
    lineno = 0
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.rstrip("\n").rstrip("\r").strip()
            if not line:
                continue
            if not state.conv_id:
                _parse_header(path, lineno, line, state)
            elif _QUESTIONS.fullmatch(line):
                if state.in_questions:
                    raise SourceError(path, lineno, "second '## questions' section")
                if not state.sessions:
                    raise SourceError(path, lineno, "'## questions' before any session")
                state.in_questions = True
            elif heading := _SESSION.fullmatch(line):
                if state.in_questions:
                    raise SourceError(path, lineno, "session after the '## questions' section")
                _parse_session(path, lineno, heading["when"], state)
            elif line.startswith("#"):
                raise SourceError(path, lineno, f"unknown heading {line!r}")
            elif state.in_questions:
                _parse_question(path, lineno, line, state)
            else:
                _parse_turn(path, lineno, line, state)
    if not state.conv_id:
        raise SourceError(path, max(lineno, 1), "empty file")
    for sline, session in zip(state.session_lines, state.sessions, strict=True):
        if not session["turns"]:
            raise SourceError(path, sline, f"session {session['id']} has no turns")
    if not state.sessions:
        raise SourceError(path, lineno, "no sessions")
    if not state.questions:
        raise SourceError(path, lineno, "no questions (missing '## questions' section?)")
    for tag, info in state.tags.items():
        if not info.used:
            raise SourceError(path, info.line, f"unused tag {tag!r}")
    conversation: dict[str, Any] = {
        "id": state.conv_id,
        "speakers": list(state.speakers),
        "sessions": state.sessions,
    }
    return conversation, state.questions


def _sort_key(path: Path) -> tuple[str, int, str]:
    """h2 before h10: order by the number in the file name, not by string."""
    match = _FILE_STEM.fullmatch(path.stem)
    if match is None:
        return (path.stem, -1, path.stem)
    return (match["prefix"], int(match["number"]), path.stem)


def source_files(src: Path) -> list[Path]:
    """The conversation files of a source directory, in conversation-number order."""
    return sorted(src.glob("*.txt"), key=_sort_key)


def build(src: Path = DEFAULT_SRC) -> dict[str, Any]:
    """Parse every source file into one dataset dict (convbench layout), named after ``src``."""
    files = source_files(src)
    if not files:
        raise ValueError(f"no *.txt conversation files in {src}")
    conversations: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for path in files:
        conversation, qs = parse_file(path)
        conversations.append(conversation)
        questions.extend(qs)
    return {
        "name": src.name,
        "version": VERSION,
        "seed": SEED,
        "conversations": conversations,
        "questions": questions,
    }


def render(data: dict[str, Any]) -> str:
    """The exact JSON text we commit: same layout as convbench.json, newline at the end."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build a dev set's JSON from its chat sources")
    parser.add_argument("--src", type=Path, default=DEFAULT_SRC, help="directory of *.txt files")
    parser.add_argument("--out", type=Path, help="JSON file to write (default: <src>.json)")
    parser.add_argument(
        "--check", action="store_true", help="do not write; fail if --out differs from sources"
    )
    args = parser.parse_args(argv)
    args.out = args.out or args.src.with_name(args.src.name + ".json")
    try:
        data = build(args.src)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = render(data)
    n_turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
    summary = (
        f"{len(data['conversations'])} conversations, {n_turns} turns, "
        f"{len(data['questions'])} questions"
    )
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
        if current != text:
            print(
                f"{args.out} is out of date; run: python {Path(__file__).name} --src {args.src}",
                file=sys.stderr,
            )
            return 1
        print(f"{args.out} is up to date: {summary}")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
