"""Deterministic generator for the ``convbench`` conversational-memory retrieval benchmark.

The data imitates LoCoMo-style benchmarks (multi-session chats between two people,
questions annotated with the turns that carry the answer) so that retrieval quality
can be measured before facing the held-out public benchmark of the same shape.

Everything is composed from hand-written templates and slot fillers with a seeded
``random.Random``: no network, no LLM, stdlib only, byte-identical output on every run.
Evidence ids are tracked *while* composing (each informative line gets a key that is
resolved to its turn id after the session is laid out), never recovered by string search.

Design choices that keep the benchmark honest rather than tuned to one retriever:

* questions paraphrase the evidence; some share an entity name with it, many share none;
* the same entities are echoed in non-evidence turns (follow-up questions, greetings,
  reactions), and both speakers live through similar events, so lexical matches are
  ambiguous;
* facts change over time (jobs, homes, plans, habits), so the newest turn matters;
* filler small talk surrounds the informative turns.

Run ``python bench/quality/generate.py`` to rewrite ``data/convbench.json``.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

SEED = 20240611
N_CONVERSATIONS = 10
DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "convbench.json"
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain")
MIN_TURNS, MAX_TURNS = 12, 25
MAX_QUESTIONS_PER_CONVERSATION = 50

T = TypeVar("T")

# --------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def fmt_date(d: date) -> str:
    """Render a date the way LoCoMo answers do ("7 May 2023"), locale independent."""
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def fmt_month(d: date) -> str:
    return f"{MONTHS[d.month - 1]} {d.year}"


def gap_phrase(a: date, b: date) -> str:
    """Approximate human duration between two dates ("about 3 weeks")."""
    days = abs((b - a).days)
    if days < 10:
        return f"about {days} days"
    if days < 60:
        weeks = round(days / 7)
        return f"about {weeks} weeks"
    months = round(days / 30.4)
    return f"about {months} months"


@dataclass(frozen=True)
class When:
    """A relative time expression as spoken, with the absolute answer it implies."""

    phrase: str
    answer: str
    day: date


def past_when(rng: random.Random, today: date, allow_today: bool = True) -> When:
    """Pick a spoken past-time phrase relative to the session date and resolve it."""
    options = ["yesterday", "two days ago", "weekday", "last weekend", "last week"]
    if allow_today:
        options.append("today")
    kind = rng.choice(options)
    if kind == "today":
        return When(rng.choice(["this morning", "today", "earlier today"]), fmt_date(today), today)
    if kind == "yesterday":
        d = today - timedelta(days=1)
        return When("yesterday", fmt_date(d), d)
    if kind == "two days ago":
        d = today - timedelta(days=2)
        return When(rng.choice(["two days ago", "the day before yesterday"]), fmt_date(d), d)
    if kind == "weekday":
        back = rng.randint(2, 6)
        d = today - timedelta(days=back)
        return When(f"on {WEEKDAYS[d.weekday()]}", fmt_date(d), d)
    if kind == "last weekend":
        sat = today - timedelta(days=today.weekday() + 2)
        return When("last weekend", f"the weekend before {fmt_date(today)}", sat)
    d = today - timedelta(days=7)
    return When("last week", f"the week before {fmt_date(today)}", d)


def future_when(rng: random.Random, today: date) -> When:
    """Pick a spoken future-time phrase (for plans) and resolve it."""
    kind = rng.choice(["next month", "next week", "in two weeks", "next saturday"])
    if kind == "next month":
        first = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        return When("next month", fmt_month(first), first + timedelta(days=12))
    if kind == "next week":
        d = today + timedelta(days=7)
        return When("next week", f"the week after {fmt_date(today)}", d)
    if kind == "in two weeks":
        d = today + timedelta(days=14)
        return When(rng.choice(["in two weeks", "in a fortnight"]), f"around {fmt_date(d)}", d)
    d = today + timedelta(days=(5 - today.weekday()) % 7 or 7)
    return When("next Saturday", fmt_date(d), d)


# --------------------------------------------------------------------------------------
# People
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    name: str
    gender: str  # "f" or "m"; only used for pronouns

    @property
    def he(self) -> str:
        return "she" if self.gender == "f" else "he"

    @property
    def him(self) -> str:
        return "her" if self.gender == "f" else "him"

    @property
    def his(self) -> str:
        return "her" if self.gender == "f" else "his"

    def slots(self) -> dict[str, str]:
        return {
            "name": self.name,
            "he": self.he,
            "him": self.him,
            "his": self.his,
            "He": self.he.capitalize(),
            "His": self.his.capitalize(),
        }


PEOPLE = [
    ("Maya", "f"), ("Tomas", "m"), ("Priya", "f"), ("Daniel", "m"), ("Aisha", "f"),
    ("Jonas", "m"), ("Elena", "f"), ("Marcus", "m"), ("Sofia", "f"), ("Kenji", "m"),
    ("Grace", "f"), ("Luca", "m"), ("Nadia", "f"), ("Oliver", "m"), ("Hana", "f"),
    ("Rafael", "m"), ("Chloe", "f"), ("Samir", "m"), ("Ingrid", "f"), ("Theo", "m"),
]  # fmt: skip

TIMEZONES = [0, 1, 2, -5, -8, 5.5, 9, 10, -3]


# --------------------------------------------------------------------------------------
# Composition engine
# --------------------------------------------------------------------------------------


@dataclass
class Line:
    speaker: str
    text: str
    key: str | None = None


@dataclass
class Block:
    lines: list[Line]
    kind: str  # "greeting", "closing", "stage", "filler"


@dataclass
class QDraft:
    question: str
    answer: str
    evidence: list[str]  # composition keys, resolved to turn ids later
    category: str
    # Questions sharing a group are near-duplicates; at most one of them is kept.
    group: str = ""


@dataclass
class Sess:
    index: int
    when: datetime

    @property
    def day(self) -> date:
        return self.when.date()


class Deck:
    """Draw items without replacement across the whole dataset, reshuffling when empty.

    Sharing decks between conversations spreads fillers so that no two personas get
    the same dog breed or destination unless a pool is exhausted.
    """

    def __init__(self, rng: random.Random, items: Sequence[Any]) -> None:
        self.rng = rng
        self.items = list(items)
        self.pool: list[Any] = []

    def draw(self, avoid: Callable[[Any], bool] | None = None) -> Any:
        for _ in range(2):
            if not self.pool:
                self.pool = list(self.items)
                self.rng.shuffle(self.pool)
            for i in range(len(self.pool) - 1, -1, -1):
                if avoid is None or not avoid(self.pool[i]):
                    return self.pool.pop(i)
            self.pool = []
        raise ValueError("deck cannot satisfy constraint")


@dataclass
class Mention:
    """A way to echo an entity in a later, non-informative turn (a distractor)."""

    owner: Person
    from_session: int
    partner_lines: list[str]
    owner_replies: list[str]


class Conv:
    """State of one conversation while it is being composed."""

    def __init__(self, cid: str, rng: random.Random, a: Person, b: Person) -> None:
        self.cid = cid
        self.rng = rng
        self.a, self.b = a, b
        self._counter = 0
        self.mentions: list[Mention] = []
        self.decks: dict[str, Deck] = {}

    def new_key(self) -> str:
        self._counter += 1
        return f"k{self._counter}"

    def other(self, p: Person) -> Person:
        return self.b if p == self.a else self.a


def pick(rng: random.Random, options: Sequence[T]) -> T:
    return options[rng.randrange(len(options))]


class Arc:
    """A storyline of one person that unfolds over several sessions.

    Subclasses implement ``stage_<i>`` renderers (called in session order, so later
    stages can rely on state set by earlier ones) and ``questions``. Informative
    lines are tagged with a label; the label's key becomes the evidence reference.
    """

    kind = "arc"
    n_stages = 3
    excludes: tuple[str, ...] = ()

    def __init__(self, conv: Conv, owner: Person, decks: dict[str, Deck]) -> None:
        self.conv = conv
        self.rng = conv.rng
        self.me = owner
        self.you = conv.other(owner)
        self.decks = decks
        self.keys: dict[str, str] = {}
        self.v: dict[str, str] = {}
        self.milestones: list[tuple[date, str, str]] = []  # (day, phrase, label)
        self.tags: set[str] = set()
        self.setup()

    # -- hooks -----------------------------------------------------------------------
    def setup(self) -> None:
        """Choose slot fillers."""

    def questions(self) -> list[QDraft]:
        return []

    # -- helpers ---------------------------------------------------------------------
    def draw(self, deck: str, avoid: Callable[[Any], bool] | None = None) -> Any:
        return self.decks[deck].draw(avoid)

    def slots(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        s = dict(self.me.slots())
        s["other"] = self.you.name
        s.update(self.v)
        if extra:
            s.update(extra)
        return s

    def f(self, template: str | Sequence[str], **extra: str) -> str:
        t = template if isinstance(template, str) else pick(self.rng, template)
        return t.format(**self.slots(extra))

    def me_says(self, template: str | Sequence[str], label: str | None = None, **extra: str) -> Line:
        line = Line(self.me.name, self.f(template, **extra))
        if label is not None:
            line.key = self.conv.new_key()
            self.keys[label] = line.key
        return line

    def you_say(self, template: str | Sequence[str], **extra: str) -> Line:
        return Line(self.you.name, self.f(template, **extra))

    def maybe(self, p: float) -> bool:
        return self.rng.random() < p

    def q(
        self,
        category: str,
        question: str | Sequence[str],
        answer: str,
        labels: Sequence[str],
        group: str = "",
        **extra: str,
    ) -> QDraft:
        missing = [lab for lab in labels if lab not in self.keys]
        if missing:
            raise KeyError(f"{type(self).__name__}: unknown evidence labels {missing}")
        return QDraft(
            self.f(question, **extra),
            self.f(answer, **extra),
            [self.keys[lab] for lab in labels],
            category,
            group,
        )

    def mention(self, sess: Sess, partner_lines: list[str], owner_replies: list[str]) -> None:
        self.conv.mentions.append(
            Mention(
                self.me,
                sess.index + 1,
                [self.f(t) for t in partner_lines],
                [self.f(t) for t in owner_replies],
            )
        )

    def render(self, stage: int, sess: Sess) -> list[Line]:
        fn: Callable[[Sess], list[Line]] = getattr(self, f"stage_{stage}")
        return fn(sess)


