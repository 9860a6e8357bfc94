"""Lay out ``realchat``'s sources: real chats between real people, from the Chit-Chat dataset.

Every other dev set was written by a template or by us, and on every one of them but the one
built for the purpose the sentence model leads BM25; on real chats it is usually the other way
round (names, dates, slang, typos and rare words that a small sentence model blurs). realchat
takes its text from the BYU PCC lab's Chit-Chat Challenge (PyPI ``chitchat-dataset`` 0.9.0,
MIT licence: real students chatting in a messaging app in 2018): the pairs of people who
talked to each other on several days, each chat one session, each message one turn, the
message's sender as the speaker. The questions and their evidence tags were written afterwards
by the project's annotators (its developers' language-model agents, one per chat, under one
written guideline), reading the whole chat, as LoCoMo's and REALTALK's annotators did.

This script writes the sources *without* questions (``--out DIR``, one ``rN.txt`` per pair in
``talkbench.py``'s format); the committed files in ``data/realchat/`` are those plus the tags
and questions, and ``python bench/quality/talkbench.py --set realchat`` builds
``data/realchat.json`` from them. Senders get stand-in first names (the data has only ids);
a brace in a message, which the source format reserves for tags, becomes a parenthesis.

    pip install chitchat-dataset==0.9.0
    python bench/quality/realchat.py --out /tmp/realchat     # fresh sources to annotate
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: the first chat of each pair, in the order the files are numbered: eight pairs of 380-1,150
#: messages over 4-8 days (about LoCoMo's size in all), chosen among the 29 pairs with 250-1,300
#: messages in 5+ chats on 4+ days, spread over that range of sizes
PAIRS = (
    "04bce03d-2b59-4d84-9cc6-eac011c2972d",
    "ce83eea5-27d4-4091-b334-e37b2e4f17d8",
    "fa58d7f9-02e7-4bac-b5d2-4cfaab864790",
    "21a9e979-7066-4352-be6d-d2373929fdce",
    "d5a7458c-57cc-4801-8881-99c8a5c625b8",
    "9f0bea13-4877-49d7-8fd5-45ff80b7205e",
    "ab703e7b-6470-4b8c-be3d-9495fdad38d2",
    "bea3dd07-af1b-47f4-b84e-8cae02210754",
)
#: stand-in names, two per pair in file order (the data names nobody)
NAMES = (
    "Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Greer", "Harper",
    "Indy", "Jordan", "Kendall", "Logan", "Marlow", "Noel", "Oakley", "Parker",
)  # fmt: skip


def _chitchat() -> dict[str, Any]:
    try:
        import chitchat_dataset
    except ImportError:
        sys.exit("realchat.py needs the source data: pip install chitchat-dataset==0.9.0")
    with open(chitchat_dataset._PATH, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _senders(chat: dict[str, Any]) -> frozenset[str]:
    return frozenset(m["sender"] for group in chat["messages"] for m in group)


def candidates(data: dict[str, Any]) -> list[tuple[int, int, int, str]]:
    """Pairs that talked often: (messages, chats, days, first chat id), smallest first."""
    by_pair: dict[frozenset[str], list[tuple[str, str, int]]] = defaultdict(list)
    for cid, chat in data.items():
        people = _senders(chat)
        if len(people) == 2:
            n = sum(len(g) for g in chat["messages"])
            by_pair[people].append((chat["start"], cid, n))
    out = []
    for chats in by_pair.values():
        chats.sort()
        total, days = sum(n for *_, n in chats), len({start[:10] for start, *_ in chats})
        if 250 <= total <= 1300 and len(chats) >= 5 and days >= 4:
            out.append((total, len(chats), days, chats[0][1]))
    return sorted(out)


def _clean(text: str) -> str:
    return " ".join(text.replace("{", "(").replace("}", ")").split())


def source(data: dict[str, Any], number: int, first: str) -> str:
    """The talkbench-format source of one pair (no tags, no questions yet)."""
    people = _senders(data[first])
    chats = sorted((chat["start"], chat) for chat in data.values() if _senders(chat) == people)
    order = []  # who speaks first in the first chat is the first speaker
    for group in chats[0][1]["messages"]:
        for m in group:
            if m["sender"] not in order:
                order.append(m["sender"])
    names = dict(zip(order, NAMES[2 * (number - 1) : 2 * number], strict=True))
    lines = [f"# conversation r{number}: {names[order[0]]}, {names[order[1]]}"]
    for start, chat in chats:
        lines.append(f"## session {start.replace('Z', '+00:00')}")
        for group in chat["messages"]:
            for m in group:
                text = _clean(m["text"])
                if text:
                    lines.append(f"{names[m['sender']]}: {text}")
    return "\n".join(lines) + "\n"


def unannotated(text: str) -> str:
    """A committed source without its tags and questions: what ``source`` wrote."""
    text = text.split("\n## questions\n", 1)[0]
    return re.sub(r" \{[A-Za-z0-9_]+\}$", "", text, flags=re.M).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write r1.txt ... here")
    parser.add_argument("--list", action="store_true", help="list the candidate pairs")
    args = parser.parse_args(argv)
    data = _chitchat()
    if args.list or not args.out:
        for row in candidates(data):
            print(*row)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for number, first in enumerate(PAIRS, start=1):
        path = args.out / f"r{number}.txt"
        path.write_text(source(data, number, first), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
