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

# Hand-written chat lines and questions read better unbroken, so long lines are allowed here.
# ruff: noqa: E501

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harden import LONG, harden

SEED = 20240611
N_CONVERSATIONS = 10
DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "convbench.json"
HARD_OUT = DEFAULT_OUT.with_name("convbench-hard.json")
LONG_OUT = DEFAULT_OUT.with_name("convbench-long.json")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain")
MIN_TURNS, MAX_TURNS = 12, 25
MAX_QUESTIONS_PER_CONVERSATION = 50

T = TypeVar("T")

# --------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
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


def past_when(
    rng: random.Random, today: date, allow_today: bool = True, max_back: int = 30
) -> When:
    """Pick a spoken past-time phrase relative to the session date and resolve it.

    ``max_back`` keeps the event after the previous session, so a later session never
    reports something "last week" that should have come up in the chat before it.
    """
    sat_back = today.weekday() + 2
    options: list[tuple[str, int]] = [("yesterday", 1)]
    if allow_today:
        options.append(("today", 0))
    if max_back >= 2:
        options.append(("two days ago", 2))
    if max_back >= 3:
        options.append(("weekday", rng.randint(2, min(6, max_back))))
    if sat_back <= max_back and today.weekday() < 5:
        options.append(("last weekend", sat_back))
    if max_back >= 8:
        options.append(("last week", 7))
    kind, back = rng.choice(options)
    d = today - timedelta(days=back)
    if kind == "today":
        return When(rng.choice(["this morning", "today", "earlier today"]), fmt_date(today), today)
    if kind == "yesterday":
        return When("yesterday", fmt_date(d), d)
    if kind == "two days ago":
        return When(rng.choice(["two days ago", "the day before yesterday"]), fmt_date(d), d)
    if kind == "weekday":
        return When(f"on {WEEKDAYS[d.weekday()]}", fmt_date(d), d)
    if kind == "last weekend":
        return When("last weekend", f"the weekend before {fmt_date(today)}", d)
    return When("last week", f"the week before {fmt_date(today)}", d)


def spoken_past(today: date, d: date) -> When:
    """How someone would refer to an exact past date ``d`` in a chat on ``today``."""
    back = (today - d).days
    if back <= 0:
        return When("today", fmt_date(today), today)
    if back == 1:
        return When("yesterday", fmt_date(d), d)
    if back == 2:
        return When("two days ago", fmt_date(d), d)
    if back <= 6:
        return When(f"on {WEEKDAYS[d.weekday()]}", fmt_date(d), d)
    if back <= 13:
        return When("last week", f"the week before {fmt_date(today)}", d)
    return When(f"on {fmt_date(d)}", fmt_date(d), d)


def spoken_future(today: date, d: date) -> When:
    """How someone would refer to a planned date ``d`` in a chat on ``today``."""
    days = (d - today).days
    if days <= 4:
        return When("in a few days", f"around {fmt_date(d)}", d)
    if days <= 10:
        return When("next week", f"the week after {fmt_date(today)}", d)
    if (d.year, d.month) == (today.year, today.month):
        return When("later this month", fmt_month(d), d)
    months = (d.year - today.year) * 12 + d.month - today.month
    if months == 1:
        return When("next month", fmt_month(d), d)
    return When(f"in {MONTHS[d.month - 1]}", fmt_month(d), d)


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
    ("Maya", "f"),
    ("Tomas", "m"),
    ("Priya", "f"),
    ("Daniel", "m"),
    ("Aisha", "f"),
    ("Jonas", "m"),
    ("Elena", "f"),
    ("Marcus", "m"),
    ("Sofia", "f"),
    ("Kenji", "m"),
    ("Grace", "f"),
    ("Luca", "m"),
    ("Nadia", "f"),
    ("Oliver", "m"),
    ("Hana", "f"),
    ("Rafael", "m"),
    ("Chloe", "f"),
    ("Samir", "m"),
    ("Ingrid", "f"),
    ("Theo", "m"),
]

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
    gap: int  # days since the previous session

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
    from_session: int  # first session index where the exchange makes sense
    until_session: int  # first session index where it no longer does
    exchanges: list[tuple[str, str]]  # (partner asks, owner replies)


class Conv:
    """State of one conversation while it is being composed."""

    def __init__(self, cid: str, rng: random.Random, a: Person, b: Person) -> None:
        self.cid = cid
        self.rng = rng
        self.a, self.b = a, b
        self._counter = 0
        self.mentions: list[Mention] = []
        self.traits: dict[str, list[dict[str, Any]]] = {}
        self.used: set[str] = set()

    def fresh(self, options: Sequence[str]) -> str:
        """Pick a template, avoiding ones already used in this conversation when possible.

        Both speakers often live through the same kind of event; without this they
        would announce it with the very same sentence.
        """
        unused = [o for o in options if o not in self.used]
        choice = pick(self.rng, unused or options)
        self.used.add(choice)
        return choice

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
        self.stage_sess: list[Sess] = []  # filled in by schedule() before any rendering
        self.setup()

    # -- hooks -----------------------------------------------------------------------
    def setup(self) -> None:
        """Choose slot fillers."""

    def questions(self) -> list[QDraft]:
        return []

    def chain_questions(self) -> list[QDraft]:
        """Multi-hop questions whose answer needs three turns from different sessions."""
        return []

    def summary(self) -> tuple[str, str] | None:
        """A one-phrase summary and the label of its evidence, for cross-speaker questions."""
        return None

    # -- helpers ---------------------------------------------------------------------
    def draw(self, deck: str, avoid: Callable[[Any], bool] | None = None) -> Any:
        return self.decks[deck].draw(avoid)

    def side_name(self, gender: str = "") -> str:
        """A name for someone in the speaker's life, matching the requested gender."""
        g = gender or self.rng.choice("fm")
        return str(self.draw("name_f" if g == "f" else "name_m"))

    def slots(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        s = dict(self.me.slots())
        s["other"] = self.you.name
        s.update(self.v)
        if extra:
            s.update(extra)
        return s

    def f(self, template: str | Sequence[str], **extra: str) -> str:
        t = template if isinstance(template, str) else self.conv.fresh(template)
        return t.format(**self.slots(extra))

    def me_says(
        self, template: str | Sequence[str], label: str | None = None, **extra: str
    ) -> Line:
        line = Line(self.me.name, self.f(template, **extra))
        if label is not None:
            line.key = self.conv.new_key()
            self.keys[label] = line.key
        return line

    def you_say(self, template: str | Sequence[str], **extra: str) -> Line:
        return Line(self.you.name, self.f(template, **extra))

    def past(self, s: Sess, allow_today: bool = True) -> When:
        return past_when(self.rng, s.day, allow_today, max_back=s.gap - 1)

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

    def mention(
        self, sess: Sess, exchanges: list[tuple[str, str]], until: int | None = None
    ) -> None:
        """Register follow-up small talk about this arc, valid until stage ``until`` happens."""
        end = self.stage_sess[until].index if until is not None else 10**6
        pairs = [(self.f(a), self.f(b)) for a, b in exchanges]
        self.conv.mentions.append(Mention(self.me, sess.index + 1, end, pairs))

    def render(self, stage: int, sess: Sess) -> list[Line]:
        fn: Callable[[Sess], list[Line]] = getattr(self, f"stage_{stage}")
        return fn(sess)


# --------------------------------------------------------------------------------------
# Shared reactions
# --------------------------------------------------------------------------------------

POS = [
    "That's amazing!",
    "Oh wow, congrats!",
    "I love that for you.",
    "Yay, that's such good news.",
    "Okay, that made my day.",
    "That's so exciting!",
    "Look at you go!",
    "Ha, brilliant.",
    "Honestly, you deserve it.",
    "This is the best update I've had all week.",
]
NEG = [
    "Oh no, that's awful.",
    "Ugh, I'm so sorry.",
    "That sounds really rough.",
    "Oof. Hang in there.",
    "Yikes, that's stressful.",
    "Oh no! Poor you.",
    "That's the worst, I'm sorry.",
    "Sending you a big hug.",
]
LAUGH = [
    "Hahaha, I'm dying.",
    "Okay that's hilarious.",
    "LOL. Of course.",
    "Stop, I can picture it.",
    "Ha! That's so specific.",
    "I laughed out loud on the bus reading that.",
]


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


# --------------------------------------------------------------------------------------
# Pets
# --------------------------------------------------------------------------------------

DOG_BREEDS = [
    "beagle",
    "corgi",
    "greyhound",
    "border collie",
    "dachshund",
    "golden retriever",
    "whippet",
    "shiba inu",
    "boxer",
    "pug",
    "cocker spaniel",
    "lurcher",
    "schnauzer",
    "basset hound",
]
CAT_BREEDS = [
    "ginger tabby",
    "Siamese",
    "Maine Coon",
    "Russian Blue",
    "black-and-white tuxedo",
    "tortoiseshell",
    "Bengal",
    "calico",
    "grey Persian",
]
PET_NAMES = [
    "Biscuit",
    "Pepper",
    "Miso",
    "Juniper",
    "Otis",
    "Luna",
    "Waffles",
    "Noodle",
    "Clementine",
    "Hazel",
    "Ziggy",
    "Mochi",
    "Pickle",
    "Rufus",
    "Olive",
    "Bramble",
    "Tofu",
    "Pretzel",
    "Gus",
    "Marmalade",
    "Dobby",
    "Fig",
]
PET_SOURCES = [
    "the Riverside animal shelter",
    "a rescue charity called Second Chance Paws",
    "a neighbour who was moving abroad",
    "the city shelter on Fifth Street",
    "a farm just outside town",
    "a couple who were moving into a flat that didn't allow pets",
    "the Hope & Whiskers rescue",
    "my cousin's friend who fosters for a rescue",
]
DOG_QUIRKS = [
    ("stealing socks and hiding them in {pet_his} bed", "I found nine of them yesterday."),
    ("howling every time the kettle boils", "My neighbour genuinely thinks I own a wolf."),
    ("refusing to walk if it's even slightly raining", "I literally had to carry {pet_him} home."),
    ("carrying the TV remote around like a trophy", "I have to bribe {pet_him} to watch anything."),
    ("barking at {pet_his} own reflection in the oven door", "Every. Single. Evening."),
    ("sleeping upside down with all four legs in the air", "It looks like a crime scene."),
]
CAT_QUIRKS = [
    ("sleeping in the bathroom sink", "I've been brushing my teeth in the kitchen."),
    ("knocking pens off the desk at five in the morning", "It's a deliberate alarm clock."),
    (
        "only drinking from a dripping tap",
        "I bought a fancy water fountain and {pet_he} ignores it.",
    ),
    (
        "chasing light reflections on the ceiling for hours",
        "I've started wearing a watch just for it.",
    ),
    (
        "sitting on the keyboard during video calls",
        "My manager has met {pet_him} more than my parents.",
    ),
    (
        "collecting hair ties and leaving them on the pillow",
        "I don't know where {pet_he} finds them all.",
    ),
]
DOG_VET = [
    (
        "kept shaking {pet_his} head and scratching one ear",
        "an ear infection",
        "drops twice a day for ten days, which {pet_he} hates",
    ),
    (
        "started limping after the park",
        "a sprained paw",
        "strict rest for two weeks, no fetch, which is torture for both of us",
    ),
    (
        "swallowed half a tea towel",
        "a partial blockage",
        "a night under observation, and luckily it passed without surgery",
    ),
    (
        "stopped eating for two days",
        "a cracked tooth",
        "pulling the tooth, then soft food for a week",
    ),
    (
        "got stung on the nose by a wasp and swelled up",
        "an allergic reaction",
        "an antihistamine shot and a very sorry-for-{pet_him}self evening",
    ),
]
CAT_VET = [
    (
        "was sneezing nonstop",
        "a respiratory infection",
        "antibiotics hidden in {pet_his} food for a week",
    ),
    (
        "hid under the bed and wouldn't eat",
        "a urinary infection",
        "a special prescription diet from now on",
    ),
    (
        "was scratching {pet_his} neck raw",
        "a flea allergy",
        "a monthly flea treatment and a cone for a few days",
    ),
    ("kept throwing up", "a hairball blockage", "a gross-smelling paste and a lot more brushing"),
]
DOG_TRICKS = [
    "learned to roll over on command",
    "passed {pet_his} puppy obedience class, top of the class obviously",
    "can now high-five for treats",
    "went to the beach for the first time and charged straight into the waves",
    "finally walks on the lead without pulling",
]
CAT_TRICKS = [
    "learned to high-five for treats",
    "walks on a harness now, sort of",
    "finally let my flatmate stroke {pet_him}",
    "comes running when I whistle, like a dog",
]


class PetArc(Arc):
    kind = "pet"

    def setup(self) -> None:
        self.n_stages = self.rng.choice([3, 3, 4])
        allergic = any(t["id"] == "catallergy" for t in self.conv.traits.get(self.me.name, []))
        self.dog = allergic or self.rng.random() < 0.6
        species = "dog" if self.dog else "cat"
        breed = self.draw("dog_breed" if self.dog else "cat_breed")
        pet_f = self.rng.random() < 0.5
        pet_f = pet_f or breed in ("calico", "tortoiseshell")  # almost always female
        if self.dog:
            pre, post = pick(
                self.rng,
                [
                    ("", " puppy"),
                    ("two-year-old ", ""),
                    ("five-year-old ", ""),
                    ("scruffy little ", ""),
                ],
            )
        else:
            pre, post = pick(
                self.rng, [("", " kitten"), ("three-year-old ", " cat"), ("shy ", " cat")]
            )
        self.v.update(
            species=species,
            young="puppy" if self.dog else "kitten",
            breed=breed,
            desc=f"{pre}{breed}{post}",
            pet=self.draw("pet_name"),
            source=self.draw("pet_source"),
            pet_he="she" if pet_f else "he",
            pet_him="her" if pet_f else "him",
            pet_his="her" if pet_f else "his",
            Pet_he="She" if pet_f else "He",
        )
        quirk, story = pick(self.rng, DOG_QUIRKS if self.dog else CAT_QUIRKS)
        symptom, diagnosis, treatment = pick(self.rng, DOG_VET if self.dog else CAT_VET)
        self.v.update(quirk=self.f(quirk), quirk_story=self.f(story))
        self.v.update(symptom=self.f(symptom), diagnosis=diagnosis, treatment=self.f(treatment))
        self.v["trick"] = self.f(pick(self.rng, DOG_TRICKS if self.dog else CAT_TRICKS))

    def stage_0(self, s: Sess) -> list[Line]:
        self.when = self.past(s)
        w = self.when.phrase
        out = [
            self.me_says(
                [
                    "Guess what, we adopted a {desc} {w}! {Pet_he}'s called {pet} and {pet_he} already owns the sofa.",
                    "So I did a thing {w}... I brought home a {desc}. Meet {pet}!",
                    "Big life update: I'm officially a {species} person. Picked up a {desc} {w}, we named {pet_him} {pet}.",
                    "Okay I can't keep this in: {w} I finally adopted! {pet} is a {desc} and {pet_he} is perfect.",
                ],
                "adopt",
                w=w,
            ),
            self.you_say(
                [
                    "Stop, that's adorable! {pet} is such a good name. Where did you find {pet_him}?",
                    "Nooo way, congrats!! Send pictures of {pet} immediately. Where's {pet_he} from?",
                    "A {species}! Finally! Did you go through a breeder or a rescue?",
                ]
            ),
            self.me_says(
                [
                    "From {source}. {Pet_he} had been waiting ages and the volunteers teared up when we left.",
                    "I got {pet_him} from {source}. I went in 'just to look'... you can guess how that went.",
                    "Through {source}. The paperwork took forever but it was so worth it.",
                ],
                "source",
            ),
        ]
        if self.maybe(0.6):
            out.append(self.you_say(["I can't wait to meet {pet_him}!", *POS]))
        self.milestones.append((self.when.day, "adopting {pet}", "adopt"))
        self.mention(
            s,
            [
                ("How's {pet} doing, by the way?", "Ha, {pet_he}'s thriving. Spoiled rotten."),
                (
                    "Give {pet} a scratch behind the ears from me!",
                    "Will do, {pet_he}'ll be thrilled.",
                ),
                ("Is {pet} still keeping you up at night?", "Less than before, thankfully."),
                ("Did you take {pet} out this weekend?", "Not this time, it was pouring."),
            ],
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(
                self.you_say(
                    [
                        "How is {pet} settling in?",
                        "Wait, how's the new {species}?",
                        "Any {pet} news?",
                    ]
                )
            )
        out.append(
            self.me_says(
                [
                    "{Pet_he}'s great, but {pet_he} has developed this habit of {quirk}. {quirk_story}",
                    "Honestly {pet} is a character. {Pet_he} keeps {quirk}. {quirk_story}",
                    "{Pet_he}'s picked up a new hobby: {quirk}. {quirk_story} I don't know who raised {pet_him}. Oh wait, me.",
                ],
                "quirk",
            )
        )
        out.append(self.you_say(LAUGH))
        if self.maybe(0.5):
            out.append(
                self.me_says(
                    [
                        "The vet says it's normal, apparently.",
                        "I'm choosing to find it charming.",
                        "I've given up fighting it.",
                    ]
                )
            )
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        self.vet_day = s.day
        out = [
            self.me_says(
                [
                    "Rough week here. {pet} {symptom}, so we rushed to the vet. Turned out to be {diagnosis}.",
                    "Sorry I went quiet, {pet} {symptom} and the vet found {diagnosis}. I panicked a bit.",
                    "Had a scare: {pet} {symptom}. The vet said it was {diagnosis}, poor thing.",
                ],
                "vet",
            ),
            self.you_say(
                [
                    "Oh no, poor baby. Is {pet_he} okay now?",
                    "Oh no! What did they do for {pet_him}?",
                    *NEG,
                ]
            ),
            self.me_says(
                [
                    "{treatment_cap}. {Pet_he}'s already bouncing back.",
                    "The plan is {treatment}. Fingers crossed.",
                    "{treatment_cap}, and a lot of cuddles.",
                ],
                "treat",
                treatment_cap=cap(self.v["treatment"]),
            ),
        ]
        self.milestones.append((s.day, "taking {pet} to the vet", "vet"))
        return out

    def stage_3(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "Proud {species} parent moment: {pet} {trick}!",
                    "Small win to report: {pet} {trick}.",
                    "You'll never believe it, {pet} {trick}.",
                ],
                "trick",
            ),
            self.you_say(["No way, what a clever {species}!", "Genius. Absolute genius.", *POS]),
        ]

    def chain_questions(self) -> list[QDraft]:
        return [
            self.q(
                "multi-hop",
                "What did the vet find wrong with {name}'s {breed}, and how was it treated?",
                "{diagnosis_cap}; treatment: {treatment}",
                ["adopt", "vet", "treat"],
                diagnosis_cap=cap(self.v["diagnosis"]),
            )
        ]

    def questions(self) -> list[QDraft]:
        qs = [
            self.q(
                "single-hop",
                ["What breed is {name}'s {species}?", "What kind of {species} did {name} adopt?"],
                "A {breed}",
                ["adopt"],
            ),
            self.q(
                "single-hop",
                ["Where did {name} get {pet} from?", "Where did {name} find {his} new pet?"],
                "From {source}",
                ["source"],
            ),
            self.q(
                "temporal",
                ["When did {name} adopt {pet}?", "When did {name} bring {his} {species} home?"],
                self.when.answer,
                ["adopt"],
            ),
            self.q(
                "single-hop",
                [
                    "What funny habit does {name}'s {species} have?",
                    "What odd thing does {pet} keep doing?",
                ],
                "{Pet_he} keeps {quirk}",
                ["quirk"],
            ),
            self.q(
                "multi-hop",
                [
                    "What did the vet find wrong with {name}'s {breed}?",
                    "What health problem did {name}'s {breed} have?",
                ],
                "{diagnosis_cap}",
                ["adopt", "vet"],
                diagnosis_cap=cap(self.v["diagnosis"]),
            ),
            self.q(
                "single-hop",
                [
                    "How was {pet} treated after the vet visit?",
                    "What was the treatment plan for {name}'s pet?",
                ],
                "{treatment_cap}",
                ["treat"],
                treatment_cap=cap(self.v["treatment"]),
            ),
            self.q(
                "temporal",
                "How long after adopting {pet} did {name} have to take {pet_him} to the vet?",
                cap(gap_phrase(self.when.day, self.vet_day)),
                ["adopt", "vet"],
            ),
            self.q(
                "open-domain",
                [
                    "Would {name} need a pet sitter if {he} went away for a week?",
                    "Is {name} likely to own pet supplies like a lead or a litter box?",
                ],
                "Yes; {he} has a {species}, {pet}",
                ["adopt"],
            ),
        ]
        if "trick" in self.keys:
            qs.append(
                self.q(
                    "single-hop",
                    [
                        "What new skill did {name}'s {species} show off?",
                        "What did {pet} manage to do recently?",
                    ],
                    "{Pet_he} {trick}",
                    ["trick"],
                )
            )
        return qs

    def summary(self) -> tuple[str, str]:
        return self.f("a {breed} named {pet}"), "adopt"


# --------------------------------------------------------------------------------------
# Jobs (a fact that changes over time)
# --------------------------------------------------------------------------------------

OLD_JOBS = [
    {
        "old_role": "line cook",
        "old_emp": "Rosetti's Trattoria",
        "complaint": "the head chef threw a pan at the wall again and we didn't close until one in the morning",
        "short": "brutal hours and an aggressive head chef",
        "reason": "I'm done with finishing at midnight.",
        "reason_a": "{He} was done with finishing work at midnight",
    },
    {
        "old_role": "paralegal",
        "old_emp": "Hartley & Stone",
        "complaint": "I spent my whole weekend formatting exhibits that a partner didn't even read",
        "short": "weekend work nobody appreciated",
        "reason": "I want to be someone who goes home at six.",
        "reason_a": "{He} wants to go home at six",
    },
    {
        "old_role": "bank teller",
        "old_emp": "First Coastal Bank",
        "complaint": "a customer shouted at me for twenty minutes about a fee I don't even set",
        "short": "abusive customers and no support",
        "reason": "I can't do another year behind that glass.",
        "reason_a": "{He} couldn't face another year behind the counter glass",
    },
    {
        "old_role": "warehouse shift supervisor",
        "old_emp": "Brightway Logistics",
        "complaint": "it's night shifts again all month and I haven't seen the sun since Tuesday",
        "short": "endless night shifts",
        "reason": "My sleep is completely wrecked.",
        "reason_a": "The night shifts wrecked {his} sleep",
    },
    {
        "old_role": "junior accountant",
        "old_emp": "Delmar & Co",
        "complaint": "quarter-end close means living in spreadsheets until eleven every night",
        "short": "crushing overtime",
        "reason": "Numbers are fine, but not eighty hours a week of them.",
        "reason_a": "The eighty-hour weeks",
    },
    {
        "old_role": "cafe shift manager",
        "old_emp": "the Copper Kettle",
        "complaint": "two people called in sick and I ran the espresso machine alone for six hours",
        "short": "chronic understaffing",
        "reason": "The owner keeps promising more staff and never hires anyone.",
        "reason_a": "The owner never hired the staff {he} kept promising",
    },
    {
        "old_role": "call-centre agent",
        "old_emp": "Telvio",
        "complaint": "eighty calls in one shift and the script won't let me actually fix anything",
        "short": "a soul-destroying call quota",
        "reason": "I want a job where I build something.",
        "reason_a": "{He} wants a job where {he} builds something",
    },
    {
        "old_role": "sales assistant",
        "old_emp": "Halden Outdoor",
        "complaint": "they changed my rota three times this week without asking",
        "short": "chaotic scheduling",
        "reason": "I need a life I can actually plan.",
        "reason_a": "{He} needs a schedule {he} can plan around",
    },
    {
        "old_role": "dental receptionist",
        "old_emp": "Brightsmile Dental",
        "complaint": "the booking system crashed and I had forty angry patients in the waiting room",
        "short": "constant chaos at the front desk",
        "reason": "I've wanted out for a year, honestly.",
        "reason_a": "{He} had wanted out for a year",
    },
]
NEW_JOBS = [
    {
        "new_role": "UX designer",
        "new_emp": "Nordlight Studio",
        "field": "design",
        "perk": "the office has a rooftop terrace and everyone eats lunch together",
        "perk_a": "A rooftop terrace and team lunches together",
        "project": "the redesign of a banking app",
    },
    {
        "new_role": "data analyst",
        "new_emp": "Greenleaf Health",
        "field": "data",
        "perk": "my manager actually blocks out focus time for us and nobody books meetings on Fridays",
        "perk_a": "Protected focus time and no meetings on Fridays",
        "project": "a dashboard tracking emergency-room wait times",
    },
    {
        "new_role": "teaching assistant",
        "new_emp": "Willow Creek Primary",
        "field": "education",
        "perk": "the kids drew me a welcome card, I nearly cried",
        "perk_a": "The kids drew {him} a welcome card",
        "project": "running the after-school science club",
    },
    {
        "new_role": "project coordinator",
        "new_emp": "Arclight Energy",
        "field": "renewable energy",
        "perk": "I get every other Friday off",
        "perk_a": "Every other Friday off",
        "project": "the planning for an offshore wind farm",
    },
    {
        "new_role": "junior web developer",
        "new_emp": "Pixelforge",
        "field": "coding",
        "perk": "I can work from home three days a week",
        "perk_a": "Working from home three days a week",
        "project": "rebuilding the checkout page for a big furniture shop",
    },
    {
        "new_role": "park ranger",
        "new_emp": "Cedar Hollow State Park",
        "field": "conservation",
        "perk": "my office is literally a forest",
        "perk_a": "{His} office is a forest",
        "project": "a new trail for wheelchair users",
    },
    {
        "new_role": "lab technician",
        "new_emp": "Halcyon Biotech",
        "field": "science",
        "perk": "the lab has a window and I'm home by five thirty",
        "perk_a": "A lab with a window and being home by 5:30",
        "project": "testing samples for a vaccine trial",
    },
    {
        "new_role": "bookshop manager",
        "new_emp": "Paper Lantern Books",
        "field": "books",
        "perk": "I get to pick the staff recommendations shelf",
        "perk_a": "Picking the staff recommendations shelf",
        "project": "a monthly author-reading night",
    },
    {
        "new_role": "physiotherapy assistant",
        "new_emp": "Eastside Rehab Clinic",
        "field": "healthcare",
        "perk": "patients are genuinely grateful, which is a new feeling",
        "perk_a": "Patients are genuinely grateful",
        "project": "a balance class for older patients",
    },
]


class JobArc(Arc):
    kind = "job"

    def setup(self) -> None:
        self.n_stages = self.rng.choice([3, 4])
        self.v.update(self.draw("old_job"))
        self.v.update(self.draw("new_job"))
        self.v.update(reason_a=self.f(self.v["reason_a"]), perk_a=self.f(self.v["perk_a"]))

    def stage_0(self, s: Sess) -> list[Line]:
        out = [
            self.me_says(
                [
                    "Another brutal week at {old_emp}. Being a {old_role} there is wearing me down: {complaint}.",
                    "Don't ask about work. Seriously, {complaint}. Four years as a {old_role} at {old_emp} and it's never been this bad.",
                    "Work update: {complaint}. Sometimes I wonder why I'm still a {old_role} at {old_emp}.",
                ],
                "old",
            ),
            self.you_say(
                [
                    "That sounds exhausting. Have you thought about leaving?",
                    "Honestly, they don't deserve you.",
                    "Ugh, {old_emp} sounds like a nightmare. What would you do instead?",
                ]
            ),
        ]
        if self.maybe(0.7):
            out.append(
                self.me_says(
                    [
                        "I've been quietly looking at jobs in {field}. I did an online course last year and loved it.",
                        "Between us, I've been applying for {field} jobs at night. Nothing yet.",
                    ],
                    "hope",
                )
            )
        self.mention(
            s,
            [
                ("How are things at work these days?", "Same old, same old."),
                ("Is {old_emp} still driving you up the wall?", "Let's not talk about it, ha."),
            ],
            until=1,
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        self.quit_when = self.past(s)
        out = []
        if self.maybe(0.5):
            out.append(
                self.you_say(["Any news on the job front?", "So... are you still at {old_emp}?"])
            )
        out += [
            self.me_says(
                [
                    "I did it, I handed in my notice at {old_emp} {w}! {reason}",
                    "I quit! Gave my resignation letter to my manager {w}. {reason}",
                    "Big news: {w} I told {old_emp} I'm leaving. {reason}",
                ],
                "quit",
                w=self.quit_when.phrase,
            ),
            self.you_say(["WHAT! So proud of you. What's next?", "Finally!! What's the plan now?"]),
            self.me_says(
                [
                    "I've got a second-round interview at {new_emp} for a {new_role} role. Fingers crossed.",
                    "There's a {new_role} opening at {new_emp} and they want me to come in for an interview.",
                ],
                "interview",
            ),
        ]
        self.milestones.append((self.quit_when.day, "quitting {old_emp}", "quit"))
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(
                self.you_say(
                    ["How did the interview at {new_emp} go??", "Did you hear back from {new_emp}?"]
                )
            )
        out += [
            self.me_says(
                [
                    "I got it! Just finished my first week as a {new_role}. My brain is full.",
                    "Officially a {new_role} now! First week done and nobody has shouted at me once.",
                    "Week one as a {new_role}: survived. I think I'm going to love it.",
                ],
                "new",
            ),
            self.you_say(["Look at you!", "I knew you'd get it.", *POS]),
            self.me_says(["Best part: {perk}.", "And {perk}. I could get used to this."], "perk"),
        ]
        self.start_day = s.day
        self.mention(
            s,
            [
                ("How's the new job treating you?", "Really well, thanks for asking!"),
                ("Still enjoying {new_emp}?", "So far so good, touch wood."),
            ],
        )
        return out

    def stage_3(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "They already trust me with {project}, which is terrifying and great.",
                    "My manager put me on {project}. Two months in!",
                ],
                "project",
            ),
            self.you_say(["That's a big deal!", "Wow, they clearly rate you."]),
        ]

    def chain_questions(self) -> list[QDraft]:
        return [
            self.q(
                "multi-hop",
                "How did {name}'s career change: what was {his} old job, and where does {he} work now?",
                "{He} went from {old_role} at {old_emp} to {new_role} at {new_emp}",
                ["old", "interview", "new"],
            )
        ]

    def questions(self) -> list[QDraft]:
        qs = [
            self.q(
                "single-hop",
                [
                    "What did {name} do at {old_emp}?",
                    "What was {name}'s role at {his} old workplace?",
                ],
                "{old_role_cap}",
                ["old"],
                old_role_cap=cap(self.v["old_role"]),
            ),
            self.q(
                "temporal",
                ["When did {name} resign from {old_emp}?", "When did {name} quit {his} old job?"],
                self.quit_when.answer,
                ["quit"],
            ),
            self.q(
                "single-hop",
                [
                    "Why did {name} leave {his} job?",
                    "What reason did {name} give for handing in {his} notice?",
                ],
                "{reason_a}",
                ["quit"],
            ),
            self.q(
                "multi-hop",
                [
                    "Where does {name} work now?",
                    "Which company did {name} join after leaving {old_emp}?",
                ],
                "{new_emp}, as a {new_role}",
                ["interview", "new"],
            ),
            self.q(
                "multi-hop",
                "What did {name} do for a living before becoming a {new_role}?",
                "{He} was a {old_role} at {old_emp}",
                ["old", "new"],
            ),
            self.q(
                "single-hop",
                [
                    "What does {name} like about {his} new workplace?",
                    "What perk does {name}'s new job have?",
                    "What is the best part of {name}'s new job?",
                ],
                "{perk_a}",
                ["perk"],
            ),
            self.q(
                "open-domain",
                "Would {name} recommend {old_emp} as an employer to a friend?",
                "Probably not; {he} complained about {short}",
                ["old"],
            ),
        ]
        if "hope" in self.keys:
            qs.append(
                self.q(
                    "single-hop",
                    [
                        "What field was {name} hoping to move into?",
                        "What kind of jobs was {name} quietly applying for?",
                    ],
                    "{field_cap}",
                    ["hope"],
                    field_cap=cap(self.v["field"]),
                )
            )
        if "project" in self.keys:
            qs.append(
                self.q(
                    "multi-hop",
                    "What project is {name} working on at {new_emp}?",
                    "{project_cap}",
                    ["interview", "project"],
                    project_cap=cap(self.v["project"]),
                )
            )
        return qs

    def summary(self) -> tuple[str, str]:
        return self.f("became a {new_role}"), "new"


# --------------------------------------------------------------------------------------
# Trips (plans that sometimes change)
# --------------------------------------------------------------------------------------

# name -> (activities with a trait tag, foods, souvenirs)
DESTINATIONS: dict[str, tuple[list[tuple[str, str]], list[str], list[str]]] = {
    "Kyoto": (
        [
            ("walking through the bamboo grove at sunrise before the crowds", "outdoors"),
            ("a tea ceremony in a tiny wooden house", "culture"),
        ],
        ["matcha soft-serve, which I had every single day", "ramen at a counter with eight seats"],
        ["a hand-painted tea cup", "a little wooden fox charm"],
    ),
    "Lisbon": (
        [
            ("riding the old yellow tram up to the castle", "culture"),
            ("a fado night in a tiny bar in Alfama", "culture"),
        ],
        ["custard tarts still warm from the oven", "grilled sardines at a street festival"],
        ["a set of blue painted tiles", "a tin of fancy sardines"],
    ),
    "Reykjavik": (
        [
            ("snorkelling between two tectonic plates in freezing water", "adrenaline"),
            ("watching the northern lights from a hot spring", "outdoors"),
        ],
        ["lamb soup that fixed my soul", "a hot dog from the famous stand by the harbour"],
        ["a chunky wool sweater", "a bag of black lava salt"],
    ),
    "Mexico City": (
        [
            ("a hot-air balloon ride over the pyramids at Teotihuacan", "adrenaline"),
            ("the Frida Kahlo museum", "culture"),
        ],
        ["tacos al pastor from a street stand at one in the morning", "mole negro"],
        ["a hand-woven rug", "a little clay mezcal cup"],
    ),
    "Edinburgh": (
        [
            ("hiking up Arthur's Seat in a gale", "outdoors"),
            ("a ghost tour in the underground vaults", "culture"),
        ],
        ["haggis, which I loved, sorry", "a proper afternoon tea"],
        ["a tartan scarf", "a bottle of peaty whisky"],
    ),
    "Cape Town": (
        [("hiking up Table Mountain", "outdoors"), ("cage diving with sharks", "adrenaline")],
        ["fresh fish and chips on the harbour", "bobotie at a family-run place"],
        ["a beaded bracelet", "a bag of rooibos tea"],
    ),
    "Vancouver": (
        [
            ("kayaking around False Creek", "outdoors"),
            ("crossing a wobbly suspension bridge in the rainforest", "adrenaline"),
        ],
        ["absurdly good sushi", "poutine at two in the morning"],
        ["a bottle of maple syrup", "a carved cedar bookmark"],
    ),
    "Hanoi": (
        [
            ("a motorbike food tour through the Old Quarter", "adrenaline"),
            ("a boat trip around Ha Long Bay", "outdoors"),
        ],
        ["egg coffee, which sounds wrong but is amazing", "bun cha from a plastic-stool stall"],
        ["a silk scarf", "a bag of Vietnamese coffee"],
    ),
    "Seville": (
        [
            ("watching flamenco in a candlelit courtyard", "culture"),
            ("wandering the gardens of the Alcazar", "culture"),
        ],
        ["a tapas crawl that lasted five hours", "cold salmorejo on a hot afternoon"],
        ["a painted fan", "a bottle of local olive oil"],
    ),
    "Marrakech": (
        [
            ("a night in a desert camp under the stars", "outdoors"),
            ("getting lost in the souks for an entire afternoon", "culture"),
        ],
        ["lamb tagine with apricots", "mint tea, about a litre a day"],
        ["a leather bag", "a tin of ras el hanout"],
    ),
    "Dubrovnik": (
        [
            ("kayaking around the old city walls", "outdoors"),
            ("cliff jumping into the sea", "adrenaline"),
        ],
        ["black risotto", "oysters straight from the bay"],
        ["a lavender sachet", "a coral-red necklace"],
    ),
    "Buenos Aires": (
        [
            ("a tango lesson in a dance hall", "culture"),
            ("a bike tour through La Boca", "outdoors"),
        ],
        ["a steak the size of my head", "empanadas from a corner bakery"],
        ["a mate gourd", "a jar of dulce de leche"],
    ),
    "Crete": (
        [("hiking the Samaria Gorge", "outdoors"), ("the ruins at Knossos", "culture")],
        ["dakos salad and too much feta", "grilled octopus by the harbour"],
        ["a jar of thyme honey", "a little ceramic jug"],
    ),
}
COMPANIONS = [
    ("my sister {x}", "{His} sister {x}", "f"),
    ("my brother {x}", "{His} brother {x}", "m"),
    ("my old college roommate {x}", "{His} college roommate {x}", ""),
    ("my best friend {x}", "{His} best friend {x}", ""),
    ("my cousin {x}", "{His} cousin {x}", ""),
    ("my dad", "{His} dad", "m"),
    ("my mum", "{His} mum", "f"),
]
SIDE_NAMES_F = [
    "Anna",
    "Carla",
    "Fatima",
    "Iris",
    "Jade",
    "Leila",
    "Nina",
    "Paula",
    "Rosa",
    "Tara",
    "Uma",
    "Yara",
    "Zoe",
    "Ruth",
    "Bea",
    "Dana",
    "Freya",
    "Greta",
]
SIDE_NAMES_M = [
    "Ben",
    "Dev",
    "Eli",
    "Gabe",
    "Hugo",
    "Kai",
    "Mateo",
    "Owen",
    "Sven",
    "Victor",
    "Wes",
    "Ahmed",
    "Caleb",
    "Emeka",
    "Ravi",
    "Jonah",
    "Pablo",
    "Niall",
]
CHANGE_REASONS = [
    "Flights to {dest1} doubled in price overnight, so we pivoted.",
    "There's a big strike at the airport in {dest1} that week.",
    "Our hotel in {dest1} cancelled on us, and honestly it felt like a sign.",
    "{comp_first} found an unbelievable last-minute deal, so we changed everything.",
]
OD_TRIP = {
    "outdoors": (
        "Would {name} enjoy a weekend of hiking and camping?",
        "Likely yes; the highlight of {his} trip was {activity}",
    ),
    "culture": (
        "Would {name} be interested in a guided history and arts tour?",
        "Likely yes; {he} loved {activity}",
    ),
    "adrenaline": (
        "Is {name} the kind of person who might try bungee jumping?",
        "Probably; the highlight of {his} trip was {activity}",
    ),
}


class TripArc(Arc):
    kind = "trip"

    def setup(self) -> None:
        self.changed = self.rng.random() < 0.5
        self.n_stages = 3
        d1 = self.draw("dest")
        d2 = self.draw("dest") if self.changed else d1
        comp, comp_q, g = pick(self.rng, COMPANIONS)
        x = self.side_name(g)
        acts, foods, souvs = DESTINATIONS[d2]
        activity, self.tag = pick(self.rng, acts)
        self.v.update(
            dest1=d1,
            dest=d2,
            comp=comp.format(x=x),
            comp_first=x if "{x}" in comp else comp[3:].capitalize(),
        )
        self.v["comp_q"] = comp_q.format(x=x, His=self.me.his.capitalize())
        self.v["comp_short"] = x if "{x}" in comp else self.me.his + " " + comp[3:]
        self.v.update(activity=activity, food=pick(self.rng, foods), souvenir=pick(self.rng, souvs))
        self.v["change_reason"] = self.f(pick(self.rng, CHANGE_REASONS))
        self.v["wish"] = pick(self.rng, [a for a, _ in acts if a != activity] or [activity])

    def timeline(self) -> None:
        """Fix departure and return between the 'soon' chat and the 'back' chat."""
        s1, s2 = self.stage_sess[1], self.stage_sess[2]
        self.back_day = s2.day - timedelta(days=self.rng.randint(1, max(1, min(5, s2.gap - 2))))
        self.length = self.rng.randint(5, 10)
        earliest = s1.day + timedelta(days=1)
        self.depart = max(earliest, self.back_day - timedelta(days=self.length))
        self.length = (self.back_day - self.depart).days

    def stage_0(self, s: Sess) -> list[Line]:
        self.timeline()
        self.plan_when = spoken_future(s.day, self.depart)
        out = [
            self.me_says(
                [
                    "{comp_cap} and I are finally doing a proper trip: {dest1}, {w}! I can't stop looking at maps.",
                    "Guess who just booked flights to {dest1}? Me and {comp}! We fly {w}.",
                    "Okay so {comp} talked me into it: we're going to {dest1} {w}.",
                ],
                "plan",
                w=self.plan_when.phrase,
                comp_cap=cap(self.v["comp"]),
            ),
            self.you_say(
                [
                    "Oh I've always wanted to go to {dest1}! Send me everything.",
                    "Jealous!! How long are you going for?",
                    "{dest1}! Amazing. Have you sorted where you're staying?",
                ]
            ),
            self.me_says(
                [
                    "{n} days. Hotel still to sort, but flights are done.",
                    "Only {n} days, which already feels too short.",
                    "Flights yes, accommodation no. Classic us.",
                ],
                n=str(max(self.length, 1)),
            ),
        ]
        self.mention(
            s,
            [
                ("Still counting down to the trip?", "Every single day, ha."),
                ("Bought any travel guides yet?", "Three, which is two too many."),
            ],
            until=2,
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        if self.changed:
            out = [
                self.me_says(
                    [
                        "Plot twist with the trip: we're going to {dest} instead. {change_reason}",
                        "So the trip changed. New destination: {dest}! {change_reason}",
                        "Update: scrapped the original plan, it's {dest} now. {change_reason}",
                    ],
                    "change",
                ),
                self.you_say(
                    [
                        "Honestly, {dest} might be even better.",
                        "Ha, chaotic. But {dest} sounds amazing.",
                        "Wait, {dest}? Love that.",
                    ]
                ),
            ]
        else:
            out = [
                self.you_say(
                    ["Is the {dest} trip coming up soon?", "When do you leave for {dest}?"]
                ),
                self.me_says(
                    [
                        "Soon! The one thing I refuse to miss is {wish}.",
                        "Very soon. Top of my list is {wish}, {comp_short} already booked it.",
                    ],
                    "wish",
                ),
                self.you_say(["That sounds magical.", "Okay, now I'm even more jealous."]),
            ]
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        self.back = spoken_past(s.day, self.back_day)
        out = []
        if self.maybe(0.5):
            out.append(
                self.you_say(
                    [
                        "Welcome back!! How was {dest}?",
                        "You're back! Tell me everything about {dest}.",
                    ]
                )
            )
            out.append(
                self.me_says(
                    [
                        "{dest} was unreal. We got back {w} and I'm still dreaming about it. The highlight was {activity}.",
                        "Landed {w} and I already miss {dest}. Best bit by far was {activity}.",
                    ],
                    "back",
                    w=self.back.phrase,
                )
            )
        else:
            out.append(
                self.me_says(
                    [
                        "Back from {dest}! We landed {w}, and the highlight was {activity}.",
                        "Got home from {dest} {w}. I'll never forget {activity}.",
                    ],
                    "back",
                    w=self.back.phrase,
                )
            )
        out += [
            self.you_say(["And the food?", "Okay but what did you eat?", "Did you eat well?"]),
            self.me_says(
                ["Don't get me started. {food_cap}.", "The food! {food_cap}. I miss it already."],
                "food",
                food_cap=cap(self.v["food"]),
            ),
        ]
        if self.maybe(0.6):
            out.append(
                self.me_says(
                    [
                        "Also I brought back {souvenir}, I'm obsessed with it.",
                        "I got {souvenir} as a souvenir, it's my new favourite thing.",
                    ],
                    "souvenir",
                )
            )
        self.milestones.append((self.back.day, "the trip to {dest}", "back"))
        return out

    def chain_questions(self) -> list[QDraft]:
        if not self.changed:
            return []
        return [
            self.q(
                "multi-hop",
                "Where did {name} finally go with {comp_short}, and what was the highlight there?",
                "{dest} (not {dest1}); the highlight was {activity}",
                ["plan", "change", "back"],
            )
        ]

    def questions(self) -> list[QDraft]:
        qs = [
            self.q(
                "single-hop",
                [
                    "Who did {name} travel with?",
                    "Who went on the holiday with {name}?",
                    "Who was {name} planning the {dest1} trip with?",
                ],
                "{comp_q}",
                ["plan"],
            ),
            self.q(
                "single-hop",
                [
                    "What was the best part of {name}'s trip to {dest}?",
                    "What did {name} enjoy most on {his} holiday?",
                ],
                "{activity_cap}",
                ["back"],
                activity_cap=cap(self.v["activity"]),
            ),
            self.q(
                "temporal",
                [
                    "When did {name} get back from {dest}?",
                    "When did {name} return from {his} trip?",
                ],
                self.back.answer,
                ["back"],
            ),
            self.q(
                "single-hop",
                [
                    "What food did {name} rave about after the trip?",
                    "What did {name} love eating while away?",
                    "Which food from the {dest} trip does {name} miss?",
                ],
                "{food_cap}",
                ["food"],
                food_cap=cap(self.v["food"]),
            ),
            self.q("open-domain", OD_TRIP[self.tag][0], OD_TRIP[self.tag][1], ["back"]),
            self.q(
                "temporal",
                "When did {name} first say the trip with {comp_short} would happen?",
                self.plan_when.answer,
                ["plan"],
            ),
        ]
        if self.changed:
            qs += [
                self.q(
                    "multi-hop",
                    [
                        "Where did {name} end up going with {comp_short}?",
                        "Which city did {name} and {comp_short} actually visit?",
                    ],
                    "{dest} (instead of {dest1})",
                    ["plan", "change"],
                ),
                self.q(
                    "single-hop",
                    [
                        "Why did {name} change {his} travel plans?",
                        "Why did {name} switch away from {dest1}?",
                    ],
                    "{change_reason}",
                    ["change"],
                ),
                self.q(
                    "single-hop",
                    [
                        "Where was {name} originally planning to travel?",
                        "Which city did {name} first book flights to?",
                    ],
                    "{dest1}",
                    ["plan"],
                ),
            ]
        else:
            qs.append(
                self.q(
                    "single-hop",
                    [
                        "What was {name} most looking forward to doing on the trip?",
                        "What did {name} refuse to miss on the {dest} trip?",
                    ],
                    "{wish_cap}",
                    ["wish"],
                    wish_cap=cap(self.v["wish"]),
                )
            )
        if "souvenir" in self.keys:
            qs.append(
                self.q(
                    "multi-hop",
                    "What souvenir did {name} bring home from {dest}?",
                    "{souvenir_cap}",
                    ["back", "souvenir"],
                    souvenir_cap=cap(self.v["souvenir"]),
                )
            )
        return qs

    def summary(self) -> tuple[str, str]:
        return self.f("went to {dest}"), "back"


# --------------------------------------------------------------------------------------
# Hobbies
# --------------------------------------------------------------------------------------

HOBBIES: list[dict[str, Any]] = [
    {
        "topic": "guitar",
        "gerund": "learning guitar",
        "start": "beginner guitar lessons",
        "venues": ["the Music Box on Harbour Street", "a little studio above the record shop"],
        "motives": [
            (
                "My grandad left me his old acoustic and it's been sitting in its case for ten years.",
                "{His} grandad left {him} an old acoustic guitar that sat unused for years",
            ),
            (
                "I got tired of only listening to music and never making any.",
                "{He} wanted to make music, not just listen to it",
            ),
        ],
        "role": "teacher",
        "progress": "{teacher} says my chord changes are getting cleaner. I can get through a whole song without stopping now!",
        "struggle": (
            "My fingertips are absolutely wrecked though, the steel strings are no joke.",
            "Sore fingertips from the steel strings",
        ),
        "milestone": (
            "I played two songs at the open mic at the Crooked Fiddle and didn't throw up!",
            "{He} played two songs at an open mic at the Crooked Fiddle",
        ),
        "ms_short": "playing at an open mic",
        "gift": "a capo or a songbook",
        "od": (
            "Would {name} enjoy going to a live acoustic music night?",
            "Yes; {he} plays guitar and even performed at an open mic",
        ),
    },
    {
        "topic": "pottery",
        "gerund": "doing pottery",
        "start": "a wheel-throwing pottery course",
        "venues": ["the community arts centre", "a ceramics studio near the canal"],
        "motives": [
            (
                "I spend all day on screens and wanted something I can't do with a mouse.",
                "{He} wanted a hands-on break from screens",
            ),
            (
                "My therapist suggested finding something messy and hands-on.",
                "{His} therapist suggested something messy and hands-on",
            ),
        ],
        "role": "instructor",
        "progress": "{teacher} finally let me use the big wheel. My bowls are still lopsided but they hold soup.",
        "struggle": (
            "Centering the clay is the hardest thing I've ever tried, my arms ache after every class.",
            "Centering the clay on the wheel",
        ),
        "milestone": (
            "I sold four mugs at the studio's winter market! Real people paid real money.",
            "{He} sold four mugs at the studio's winter market",
        ),
        "ms_short": "selling mugs at a market",
        "gift": "nice glazes or a clay-tool set",
        "od": (
            "Would {name} appreciate a handmade-ceramics workshop voucher?",
            "Yes; {he} does pottery and even sold mugs at a market",
        ),
    },
    {
        "topic": "bouldering",
        "gerund": "bouldering",
        "start": "an intro-to-bouldering session",
        "venues": [
            "the climbing gym by the station",
            "Crux, the new climbing wall in the old warehouse",
        ],
        "motives": [
            (
                "The gym bored me to tears and a friend swore climbing is like puzzles for your body.",
                "The gym bored {him} and a friend said climbing is like puzzles for the body",
            ),
            (
                "I wanted to get over my fear of heights a bit, in a safe way.",
                "To ease {his} fear of heights safely",
            ),
        ],
        "role": "coach",
        "progress": "{teacher} showed me how to use my legs instead of hauling with my arms and suddenly I'm flying up the wall.",
        "struggle": (
            "My forearms feel like they belong to someone else the day after.",
            "Aching forearms after sessions",
        ),
        "milestone": (
            "I sent my first V4! Took me three weeks of falling off the same move.",
            "{He} climbed {his} first V4 problem",
        ),
        "ms_short": "climbing a V4",
        "gift": "a chalk bag or climbing shoes",
        "od": (
            "Would {name} be up for an indoor climbing birthday party?",
            "Yes; {he} goes bouldering regularly",
        ),
    },
    {
        "topic": "sourdough baking",
        "gerund": "baking sourdough",
        "start": "a sourdough workshop",
        "venues": ["the bakery on Mill Lane", "a cooking school downtown"],
        "motives": [
            (
                "I realised I spend a fortune on fancy bread every week.",
                "{He} was spending a fortune on fancy bread",
            ),
            (
                "My neighbour gave me a jar of starter and I felt responsible for it.",
                "A neighbour gave {him} a jar of sourdough starter",
            ),
        ],
        "role": "teacher",
        "progress": "{teacher} told me my crumb is 'almost respectable'. From a proper French baker that's basically a medal.",
        "struggle": (
            "My starter nearly died when I went away for a weekend, I had to revive it like a patient.",
            "Keeping {his} starter alive (it nearly died)",
        ),
        "milestone": (
            "I won second place in the bread category at the county fair!",
            "{He} won second place for bread at the county fair",
        ),
        "ms_short": "winning a prize at the county fair",
        "gift": "a proofing basket or a good bread knife",
        "od": (
            "Would {name} likely enjoy a visit to an artisan bakery?",
            "Yes; {he} bakes sourdough and won a prize for it",
        ),
    },
    {
        "topic": "watercolour painting",
        "gerund": "painting watercolours",
        "start": "a watercolour class",
        "venues": ["the library's evening programme", "a painting studio in the old town"],
        "motives": [
            (
                "I used to draw constantly as a kid and stopped at fifteen for no reason.",
                "{He} drew constantly as a child and wanted to return to it",
            ),
            (
                "I wanted a hobby that's quiet, something that slows me down.",
                "{He} wanted a quiet hobby that slows {him} down",
            ),
        ],
        "role": "teacher",
        "progress": "{teacher} taught us wet-on-wet skies and I painted a sunset that actually looks like a sunset.",
        "struggle": (
            "Everything I paint turns into brown mud if I fiddle with it too long.",
            "{His} paintings turn muddy if {he} overworks them",
        ),
        "milestone": (
            "Two of my paintings got picked for the library's community exhibition!",
            "Two of {his} paintings were chosen for the library's community exhibition",
        ),
        "ms_short": "having paintings in an exhibition",
        "gift": "a set of good brushes or watercolour paper",
        "od": (
            "Would {name} enjoy a day at an art gallery?",
            "Very likely; {he} paints watercolours and exhibited some",
        ),
    },
    {
        "topic": "salsa dancing",
        "gerund": "salsa dancing",
        "start": "a beginners' salsa class",
        "venues": ["a dance school near the market", "the Latin club on Friday nights"],
        "motives": [
            (
                "My cousin's wedding is next year and I refuse to be the stiff one again.",
                "{He} doesn't want to be stiff on the dance floor at {his} cousin's wedding",
            ),
            ("I wanted to meet people who aren't on my phone.", "To meet people in real life"),
        ],
        "role": "teacher",
        "progress": "{teacher} partnered with me to demo a turn in front of everyone. I didn't step on a single foot.",
        "struggle": (
            "I keep counting out loud and my partner laughs at me every time.",
            "{He} keeps counting the steps out loud",
        ),
        "milestone": (
            "Our class performed at the summer street festival and I did the lift!",
            "{His} class performed at the summer street festival",
        ),
        "ms_short": "dancing at the street festival",
        "gift": "proper dance shoes",
        "od": (
            "Would {name} enjoy a night out at a Latin music club?",
            "Yes; {he} takes salsa classes and performed at a festival",
        ),
    },
    {
        "topic": "chess",
        "gerund": "playing chess seriously",
        "start": "the chess club",
        "venues": ["the cafe on Elm Street", "the public library"],
        "motives": [
            (
                "I got hooked watching online tournaments during a sick week.",
                "{He} got hooked watching online tournaments while ill",
            ),
            (
                "My nephew beat me three times in a row and I can't let that stand.",
                "{His} nephew beat {him} three times in a row",
            ),
        ],
        "role": "club captain",
        "progress": "{teacher} made me study endgames for a month and I've stopped blundering my queen every game.",
        "struggle": (
            "I lost six games on the trot online last night and threw my phone on the bed.",
            "Losing streaks online (six games in a row)",
        ),
        "milestone": (
            "I won my section at the regional rapid tournament!",
            "{He} won {his} section at the regional rapid tournament",
        ),
        "ms_short": "winning a section at a tournament",
        "gift": "a nice wooden chess set",
        "od": (
            "Would {name} be a tough opponent in a strategy board game?",
            "Probably; {he} plays chess competitively and won a tournament section",
        ),
    },
    {
        "topic": "woodworking",
        "gerund": "woodworking",
        "start": "a woodworking evening course",
        "venues": ["the makerspace in the old fire station", "the technical college"],
        "motives": [
            (
                "I want to build furniture that doesn't fall apart after one move.",
                "{He} wants to build sturdy furniture",
            ),
            (
                "My dad was a carpenter and I never learned anything from him while I could.",
                "{His} dad was a carpenter and {he} never learned from him",
            ),
        ],
        "role": "instructor",
        "progress": "{teacher} showed me how to cut dovetail joints by hand. Mine are gappy but they hold.",
        "struggle": (
            "I put a chisel into my thumb and needed three stitches.",
            "{He} cut {his} thumb with a chisel and needed stitches",
        ),
        "milestone": (
            "I finished a walnut coffee table and it's now the centre of my living room.",
            "{He} built a walnut coffee table",
        ),
        "ms_short": "finishing a coffee table",
        "gift": "a good chisel set",
        "od": (
            "Could {name} probably help fix a wobbly chair?",
            "Likely; {he} does woodworking and built a coffee table",
        ),
    },
    {
        "topic": "photography",
        "gerund": "doing photography",
        "start": "a film photography course",
        "venues": ["the camera shop on Bridge Road", "the community college"],
        "motives": [
            (
                "I found my mum's old film camera in the attic.",
                "{He} found {his} mum's old film camera in the attic",
            ),
            (
                "I take a thousand phone photos and never look at them, I want to slow down.",
                "{He} wanted to slow down instead of taking endless phone photos",
            ),
        ],
        "role": "tutor",
        "progress": "{teacher} taught me to develop film in the darkroom. The first roll came out almost black but the second was gorgeous.",
        "struggle": ("Film is expensive! Every click hurts my wallet.", "The cost of film"),
        "milestone": (
            "One of my street photos won the local paper's monthly photo contest!",
            "One of {his} street photos won the local paper's monthly contest",
        ),
        "ms_short": "winning a photo contest",
        "gift": "a few rolls of film or a photo book",
        "od": (
            "Would {name} enjoy a photography walk through an old neighbourhood?",
            "Yes; {he} shoots film and won a photo contest",
        ),
    },
    {
        "topic": "knitting",
        "gerund": "knitting",
        "start": "a knitting circle",
        "venues": ["the yarn shop on Cherry Street", "the community centre on Thursdays"],
        "motives": [
            (
                "I needed something to do with my hands that isn't doomscrolling.",
                "{He} wanted something to do with {his} hands besides doomscrolling",
            ),
            (
                "My grandmother knitted everything I wore as a child and I want to carry it on.",
                "To carry on {his} grandmother's knitting tradition",
            ),
        ],
        "role": "group leader",
        "progress": "{teacher} taught me cables and now I'm a little obsessed.",
        "struggle": (
            "I dropped a stitch twenty rows back and had to undo a week of work.",
            "Dropped stitches that forced {him} to undo a week of work",
        ),
        "milestone": (
            "I finished my first sweater and it actually fits!",
            "{He} finished {his} first sweater",
        ),
        "ms_short": "finishing a first sweater",
        "gift": "fancy merino yarn",
        "od": (
            "Would {name} enjoy a yarn and craft festival?",
            "Yes; {he} knits and has made a whole sweater",
        ),
    },
    {
        "topic": "Spanish",
        "gerund": "learning Spanish",
        "start": "an evening Spanish course",
        "venues": ["the language school on Queen Street", "the adult education centre"],
        "motives": [
            (
                "I want to chat with my sister-in-law's family in Mexico without a translator app.",
                "To talk with {his} sister-in-law's family in Mexico without a translator app",
            ),
            (
                "I'm tired of being the tourist who only says 'gracias'.",
                "{He} is tired of being a tourist who only says 'gracias'",
            ),
        ],
        "role": "teacher",
        "progress": "{teacher} had us do role-plays ordering food. I managed the whole thing without English!",
        "struggle": ("The subjunctive is destroying me.", "The subjunctive"),
        "milestone": ("I passed the B1 exam!", "{He} passed the B1 Spanish exam"),
        "ms_short": "passing a language exam",
        "gift": "a Spanish novel for learners",
        "od": (
            "Could {name} likely get by ordering food in Madrid?",
            "Probably; {he} studies Spanish and passed the B1 exam",
        ),
    },
]
TEACHERS = [
    "Marguerite",
    "Dario",
    "Kofi",
    "Helen",
    "Ruben",
    "Ines",
    "Patrick",
    "Yuki",
    "Bongani",
    "Solveig",
    "Mr. Ortega",
    "Lorna",
]


class HobbyArc(Arc):
    kind = "hobby"

    def setup(self) -> None:
        self.n_stages = 3
        h = self.draw("hobby")
        self.h = h
        self.v.update(
            topic=h["topic"],
            topic_cap=cap(h["topic"]),
            gerund=h["gerund"],
            start=h["start"],
            venue=pick(self.rng, h["venues"]),
            role=h["role"],
            teacher=self.draw("teacher"),
            ms_short=h["ms_short"],
            gift=h["gift"],
        )
        motive, motive_a = pick(self.rng, h["motives"])
        self.v.update(progress=self.f(h["progress"]), motive=motive, motive_a=self.f(motive_a))
        self.v.update(struggle=h["struggle"][0], struggle_a=self.f(h["struggle"][1]))
        self.v.update(milestone=h["milestone"][0], milestone_a=self.f(h["milestone"][1]))

    def stage_0(self, s: Sess) -> list[Line]:
        self.when = self.past(s)
        out = [
            self.me_says(
                [
                    "New hobby alert: I signed up for {start} at {venue} and had my first session {w}.",
                    "I finally did it, I started {start} {w}! It's at {venue}.",
                    "So {w} I went to my first {start} class at {venue}. I'm hooked already.",
                ],
                "start",
                w=self.when.phrase,
            ),
            self.you_say(
                [
                    "Since when are you into {topic}?",
                    "Ooh, what made you want to try {topic}?",
                    "Wait, {topic}? That's new. How come?",
                ]
            ),
            self.me_says(["{motive}", "Honestly? {motive}"], "motive"),
        ]
        if self.maybe(0.5):
            out.append(
                self.you_say(
                    [
                        "I love that.",
                        "That's a really good reason.",
                        "Okay, you have to keep me posted.",
                    ]
                )
            )
        self.milestones.append((self.when.day, "starting {topic}", "start"))
        self.mention(
            s,
            [
                ("How's the {topic} going?", "Slowly but surely!"),
                ("Are you still doing {topic}?", "Yep, still at it."),
                ("Did you make it to {topic} this week?", "Skipped it, I was wiped out."),
            ],
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(self.you_say(["Are you still going to {topic}?", "How's the class going?"]))
        out += [
            self.me_says(
                [
                    "My {role} {progress}",
                    "It's going well! {progress}",
                    "{topic_cap} update: {progress}",
                ],
                "progress",
            ),
            self.you_say(["Ha, that's real progress.", *POS]),
        ]
        if self.maybe(0.6):
            out.append(
                self.me_says(
                    ["{struggle}", "{topic_cap} is humbling, though. {struggle}"], "struggle"
                )
            )
            out.append(
                self.you_say(
                    [
                        "No pain, no gain?",
                        "Oof. Part of the process, I guess.",
                        "Ha, rite of passage.",
                    ]
                )
            )
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        self.ms_day = s.day
        out = [
            self.me_says(
                [
                    "{milestone}",
                    "Guess what? {milestone}",
                    "Okay, {topic} bragging moment: {milestone}",
                ],
                "milestone",
            ),
            self.you_say(["WHAT. That's incredible!", "I'm so proud of you!", *POS]),
        ]
        if self.maybe(0.4):
            out.append(
                self.me_says(
                    [
                        "Not bad for someone who started from zero.",
                        "I still can't quite believe it.",
                    ]
                )
            )
        self.milestones.append((s.day, "{ms_short}", "milestone"))
        return out

    def questions(self) -> list[QDraft]:
        qs = [
            self.q(
                "temporal",
                [
                    "When did {name} start {gerund}?",
                    "When did {name} go to {his} first {topic} class?",
                ],
                self.when.answer,
                ["start"],
            ),
            self.q(
                "single-hop",
                ["Why did {name} take up {topic}?", "What got {name} interested in {topic}?"],
                "{motive_a}",
                ["motive"],
            ),
            self.q(
                "single-hop",
                "What is the name of {name}'s {topic} {role}?",
                "{teacher}",
                ["progress"],
            ),
            self.q(
                "single-hop",
                [
                    "Where does {name} go for {topic}?",
                    "Where did {name} sign up for {topic}?",
                ],
                "{venue_cap}",
                ["start"],
                venue_cap=cap(self.v["venue"]),
            ),
            self.q(
                "single-hop",
                [
                    "What has {name} achieved with {his} new hobby?",
                    "What was {name}'s proudest {topic} moment?",
                ],
                "{milestone_a}",
                ["milestone"],
            ),
            self.q(
                "temporal",
                "How long after starting {topic} did {name} achieve {ms_short}?",
                cap(gap_phrase(self.when.day, self.ms_day)),
                ["start", "milestone"],
            ),
            self.q("open-domain", self.h["od"][0], self.h["od"][1], ["start", "milestone"]),
            self.q(
                "open-domain",
                "What would make a thoughtful gift for {name}?",
                "Something for {topic}, e.g. {gift}",
                ["start"],
            ),
        ]
        if "struggle" in self.keys:
            qs.append(
                self.q(
                    "single-hop",
                    "What has {name} found difficult about {topic}?",
                    "{struggle_a}",
                    ["struggle"],
                )
            )
        return qs

    def summary(self) -> tuple[str, str]:
        return self.f("took up {topic}"), "start"


# --------------------------------------------------------------------------------------
# Health
# --------------------------------------------------------------------------------------

INJURIES: list[dict[str, str]] = [
    {
        "injury": "sprained my ankle",
        "short": "spraining {his} ankle",
        "body": "ankle",
        "cause": "playing five-a-side football, I landed on someone's foot",
        "cause_a": "Playing five-a-side football",
        "prognosis": "no running for six weeks",
        "treatment": "physio twice a week with a physio called {pt} who is terrifyingly strong",
        "treat_a": "Physiotherapy twice a week",
        "recovery": "ran 5k without any pain",
        "rec_short": "run 5k again",
    },
    {
        "injury": "broke my wrist",
        "short": "breaking {his} wrist",
        "body": "wrist",
        "cause": "slipping on black ice outside the bakery",
        "cause_a": "Slipping on black ice",
        "prognosis": "a cast for six weeks",
        "treatment": "putty exercises from {pt}, my hand therapist, and doing everything left-handed",
        "treat_a": "Hand-therapy putty exercises (and doing everything left-handed)",
        "recovery": "got the cast off and can finally type properly",
        "rec_short": "type properly again",
    },
    {
        "injury": "threw my back out",
        "short": "hurting {his} back",
        "body": "back",
        "cause": "lifting a bookshelf up three flights of stairs",
        "cause_a": "Lifting a bookshelf up the stairs",
        "prognosis": "a muscle spasm that should ease in a few weeks",
        "treatment": "seeing a chiropractor, {pt}, and doing stretches every single morning",
        "treat_a": "Chiropractor visits and daily morning stretches",
        "recovery": "went back to the gym and deadlifted again, carefully",
        "rec_short": "go back to the gym",
    },
    {
        "injury": "pulled my hamstring",
        "short": "pulling {his} hamstring",
        "body": "hamstring",
        "cause": "sprinting for the last bus like an idiot",
        "cause_a": "Sprinting for a bus",
        "prognosis": "at least a month of rest",
        "treatment": "ice, compression and boring sessions on a static bike that {pt} set up",
        "treat_a": "Ice, compression and static-bike rehab",
        "recovery": "played a full tennis match with no twinges",
        "rec_short": "play tennis again",
    },
    {
        "injury": "cracked a rib",
        "short": "cracking a rib",
        "body": "rib",
        "cause": "coming off my bike when a car door opened in front of me",
        "cause_a": "A cycling accident with a car door",
        "prognosis": "six weeks of it hurting to laugh",
        "treatment": "breathing exercises from {pt} and a lot of sleeping propped up on pillows",
        "treat_a": "Breathing exercises and sleeping propped up",
        "recovery": "cycled to work again for the first time",
        "rec_short": "cycle to work again",
    },
    {
        "injury": "twisted my knee",
        "short": "twisting {his} knee",
        "body": "knee",
        "cause": "on the first day of a ski trip, of course",
        "cause_a": "Skiing",
        "prognosis": "a strained ligament and a brace for a month",
        "treatment": "a knee brace and strengthening work with {pt}, my physio",
        "treat_a": "A knee brace and strengthening exercises",
        "recovery": "did a proper hike up a hill without the brace",
        "rec_short": "hike without the brace",
    },
]
THERAPISTS = ["Gretchen", "Marco", "Aiyana", "Boris", "Delphine", "Hamid", "Siobhan", "Tobias"]


class HealthArc(Arc):
    kind = "health"

    def setup(self) -> None:
        self.n_stages = 3
        self.v.update(self.draw("injury"))
        self.v["pt"] = self.draw("therapist")
        for k in ("short", "treatment"):
            self.v[k] = self.f(self.v[k])

    def stage_0(self, s: Sess) -> list[Line]:
        self.when = self.past(s)
        out = []
        if self.maybe(0.4):
            out.append(
                self.you_say(
                    ["Why are you typing so slowly today?", "You sound a bit off, everything okay?"]
                )
            )
        out += [
            self.me_says(
                [
                    "Not my finest moment: I {injury} {w}, {cause}.",
                    "So, I {injury} {w}. How? {cause_cap}.",
                    "Ugh, I {injury} {w}, {cause}. I'm such a klutz.",
                ],
                "injury",
                w=self.when.phrase,
                cause_cap=cap(self.v["cause"]),
            ),
            self.you_say(["Ouch!! Are you okay?", "Oh no! What did the doctor say?", *NEG]),
            self.me_says(
                [
                    "The doctor says {prognosis}. I'm going to go stir crazy.",
                    "Verdict: {prognosis}. Ugh.",
                ],
                "prognosis",
            ),
        ]
        self.milestones.append((self.when.day, "{short}", "injury"))
        self.mention(
            s,
            [
                ("How's the {body} doing?", "Getting there, slowly."),
                ("Is your {body} any better?", "Better than last week, thanks!"),
            ],
            until=2,
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        out = [
            self.you_say(
                [
                    "How's the recovery going?",
                    "Is your {body} healing okay?",
                    "How are you holding up?",
                ]
            )
        ]
        out += [
            self.me_says(
                ["Slowly. The plan is {treatment}.", "Getting there. Current regime: {treatment}."],
                "treatment",
            ),
            self.you_say(
                ["Sounds like you're in good hands.", "Slow and steady.", "Don't rush it!"]
            ),
        ]
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        self.rec_day = s.day
        return [
            self.me_says(
                [
                    "Recovery milestone: {w} I {recovery}!",
                    "Small victory, {w} I {recovery}. I nearly cried.",
                ],
                "recovery",
                w=self.past(s).phrase,
            ),
            self.you_say(
                ["Yesss! Welcome back.", "That's huge. Well done for being patient.", *POS]
            ),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                ["How did {name} hurt {his} {body}?", "What caused {name}'s {body} injury?"],
                "{cause_a}",
                ["injury"],
            ),
            self.q(
                "temporal",
                ["When did {name} get injured?", "When did {name} end up {short}?"],
                self.when.answer,
                ["injury"],
            ),
            self.q(
                "single-hop",
                [
                    "What did the doctor tell {name} after the accident?",
                    "What was {name}'s prognosis?",
                ],
                "{prognosis_cap}",
                ["prognosis"],
                prognosis_cap=cap(self.v["prognosis"]),
            ),
            self.q(
                "single-hop",
                [
                    "What has {name} been doing to recover?",
                    "What does {name}'s rehab involve?",
                    "What is {name}'s recovery regime for {his} {body}?",
                ],
                "{treat_a}",
                ["treatment"],
            ),
            self.q(
                "multi-hop",
                "Who has been helping {name} recover from {short}?",
                "{pt}",
                ["injury", "treatment"],
            ),
            self.q(
                "temporal",
                "How long after {short} was {name} able to {rec_short}?",
                cap(gap_phrase(self.when.day, self.rec_day)),
                ["injury", "recovery"],
            ),
            self.q(
                "open-domain",
                "Would {name} have been up for a long mountain hike in the week after {short}?",
                "Unlikely; {he} was told {prognosis}",
                ["injury", "prognosis"],
            ),
        ]


# --------------------------------------------------------------------------------------
# Moving home (where someone lives changes)
# --------------------------------------------------------------------------------------

CITIES = [
    "Portland",
    "Leeds",
    "Lyon",
    "Melbourne",
    "Toronto",
    "Austin",
    "Glasgow",
    "Rotterdam",
    "Denver",
    "Bristol",
    "Montreal",
    "Wellington",
    "Valencia",
    "Copenhagen",
    "Manchester",
    "Halifax",
]
MOVE_REASONS = [
    (
        "My sister just had twins there and I want to be around for them.",
        "To be near {his} sister's newborn twins",
    ),
    (
        "The rent here went up thirty percent, and {new_city} is way cheaper.",
        "{His} rent rose thirty percent; {new_city} is cheaper",
    ),
    (
        "My parents are getting older and I want to be closer to them.",
        "To be closer to {his} ageing parents",
    ),
    (
        "Half my friends have already moved there and I'm lonely.",
        "Many of {his} friends already live there",
    ),
    (
        "I can do my job remotely now, so why not somewhere new?",
        "{He} can work remotely and wanted a change",
    ),
]
NEW_PLACES = [
    (
        "a one-bedroom with a tiny balcony that gets the afternoon sun",
        "a one-bedroom flat with a sunny balcony",
    ),
    (
        "a top-floor flat with a view of the river and no lift, so my calves are going to be huge",
        "a top-floor flat with a river view and no lift",
    ),
    (
        "a room in a shared house with two nurses who work nights, so it's super quiet during the day",
        "a room in a shared house with two night-shift nurses",
    ),
    (
        "a converted garage with a wood stove, it's tiny but so cosy",
        "a converted garage with a wood stove",
    ),
    (
        "a ground-floor flat with a little garden, there's even a lemon tree",
        "a ground-floor flat with a small garden",
    ),
]
MISSES = [
    (
        "the bagel place on my old corner, nothing here comes close",
        "The bagel place on {his} old corner",
    ),
    ("being able to walk to everything", "Being able to walk everywhere"),
    ("my Thursday quiz team at the pub", "{His} Thursday pub quiz team"),
    ("the farmers' market on Sundays", "The Sunday farmers' market"),
    (
        "my old neighbour's cat who used to visit me every evening",
        "{His} old neighbour's cat that visited every evening",
    ),
]
IMPRESSIONS = [
    "People here say good morning to strangers, it's unsettling.",
    "It rains sideways but the coffee is incredible.",
    "I already got lost twice and found a great bakery both times.",
    "The bus drivers wave at each other. I love it here.",
]


class MoveArc(Arc):
    kind = "move"

    def setup(self) -> None:
        self.n_stages = 3
        old = self.draw("city")
        new = self.draw("city")
        place, place_a = pick(self.rng, NEW_PLACES)
        self.v.update(old_city=old, new_city=new, place=place, place_a=place_a)
        reason, reason_a = pick(self.rng, MOVE_REASONS)
        miss, miss_a = pick(self.rng, MISSES)
        self.v.update(
            reason=self.f(reason),
            reason_a=self.f(reason_a),
            miss=miss,
            miss_a=self.f(miss_a),
            impression=pick(self.rng, IMPRESSIONS),
        )

    def stage_0(self, s: Sess) -> list[Line]:
        out = [
            self.me_says(
                [
                    "My lease here in {old_city} ends soon and I'm seriously thinking about moving to {new_city}. {reason}",
                    "Random thought I can't shake: leaving {old_city} for {new_city}. {reason}",
                    "I've lived in {old_city} for nine years and I think it's time. {new_city} is calling. {reason}",
                ],
                "plan",
            ),
            self.you_say(
                [
                    "Wait, you'd actually leave {old_city}?!",
                    "Whoa. That's a big step.",
                    "Oh! I did not see that coming.",
                ]
            ),
            self.me_says(
                ["I think so. I'm going to look at a few places soon.", "Yeah. Scary, but yes."]
            ),
        ]
        self.mention(
            s,
            [
                ("Any news on the flat hunt?", "Nothing yet, the market is wild."),
                ("Still thinking about {new_city}?", "Constantly, ha."),
            ],
            until=1,
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "Signed a lease! It's {place}.",
                    "Found a place! {place_cap}, and I signed on the spot.",
                ],
                "lease",
                place_cap=cap(self.v["place"]),
            ),
            self.you_say(["Send photos immediately!", "Oh that sounds perfect for you.", *POS]),
        ]

    def stage_2(self, s: Sess) -> list[Line]:
        self.moved = self.past(s, allow_today=False)
        out = [
            self.me_says(
                [
                    "The movers came {w}, so I'm officially living in {new_city}! {impression}",
                    "I moved {w}! Writing to you from my new kitchen in {new_city}. {impression}",
                ],
                "moved",
                w=self.moved.phrase,
            ),
            self.you_say(
                [
                    "How are you settling in?",
                    "Do you miss anything yet?",
                    "Welcome to your new life!",
                ]
            ),
            self.me_says(
                ["Mostly great. I do miss {miss}.", "Honestly? I miss {miss}. But it's worth it."],
                "miss",
            ),
        ]
        self.milestones.append((self.moved.day, "moving to {new_city}", "moved"))
        return out

    def chain_questions(self) -> list[QDraft]:
        return [
            self.q(
                "multi-hop",
                "Which city did {name} move from and to, and what does {he} miss about the old one?",
                "From {old_city} to {new_city}; {he} misses {miss_a_lc}",
                ["plan", "moved", "miss"],
                miss_a_lc=self.v["miss_a"][:1].lower() + self.v["miss_a"][1:],
            )
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                ["Where did {name} live before the move?", "Which city did {name} leave?"],
                "{old_city}",
                ["plan"],
            ),
            self.q(
                "single-hop",
                [
                    "Which city does {name} live in now?",
                    "Where is {name} living these days?",
                    "Which city did {name} finally move to?",
                ],
                "{new_city}",
                ["moved"],
            ),
            self.q(
                "single-hop",
                [
                    "Why did {name} want to relocate?",
                    "What made {name} decide to leave {old_city}?",
                ],
                "{reason_a}",
                ["plan"],
            ),
            self.q(
                "temporal",
                ["When did {name} move to {new_city}?", "When did {name} move house?"],
                self.moved.answer,
                ["moved"],
            ),
            self.q(
                "multi-hop",
                "What kind of home did {name} find after deciding to leave {old_city}?",
                "{place_a_cap}",
                ["plan", "lease"],
                place_a_cap=cap(self.v["place_a"]),
            ),
            self.q(
                "single-hop", "What does {name} miss about {his} old city?", "{miss_a}", ["miss"]
            ),
            self.q(
                "open-domain",
                "Could {name} easily pop round for coffee with friends in {old_city} these days?",
                "Not easily; {he} moved to {new_city}",
                ["moved"],
            ),
        ]


# --------------------------------------------------------------------------------------
# Family events
# --------------------------------------------------------------------------------------

PROPOSALS = [
    "on top of a lighthouse at sunset",
    "in their favourite pizza place, and the whole restaurant clapped",
    "with the ring hidden in the last piece of a jigsaw puzzle",
    "on a frozen lake after ice skating",
]
WEDDING_VENUES = [
    "an old barn outside town",
    "a vineyard two hours north",
    "the botanical gardens",
    "a tiny chapel by the sea",
]
WEDDING_MOMENTS = [
    "Grandpa did the worm on the dance floor",
    "it poured with rain during the vows and everyone just laughed",
    "their dog was the ring bearer and ran off with the rings",
    "the best man's speech made everyone cry, in a good way",
]


class WeddingArc(Arc):
    kind = "family"

    def setup(self) -> None:
        self.n_stages = 3
        sis = self.rng.random() < 0.5
        self.v.update(
            sib="sister" if sis else "brother",
            sib_name=self.side_name("f" if sis else "m"),
            fiance=self.side_name(),
            sib_his="her" if sis else "his",
            proposal=pick(self.rng, PROPOSALS),
            venue=pick(self.rng, WEDDING_VENUES),
            moment=pick(self.rng, WEDDING_MOMENTS),
        )
        self.v["role"] = "maid of honour" if self.me.gender == "f" else "best man"

    def stage_0(self, s: Sess) -> list[Line]:
        self.eng = self.past(s)
        return [
            self.me_says(
                [
                    "Family news! My {sib} {sib_name} got engaged {w}. {fiance} proposed {proposal}.",
                    "{sib_name} is engaged!! My little {sib}! {fiance} popped the question {w}, {proposal}.",
                ],
                "engaged",
                w=self.eng.phrase,
            ),
            self.you_say(
                [
                    "Oh my god, congratulations to them! Did you know it was coming?",
                    "Aww! That's so romantic.",
                ]
            ),
            self.me_says(
                [
                    "No idea! And {sib_name} asked me to be the {role}, so I guess I'm organising things now.",
                    "Not a clue. Also I'm going to be {role} at the wedding, which is terrifying.",
                ],
                "role",
            ),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(
                self.you_say(
                    [
                        "How's the wedding planning going?",
                        "Is {sib_name} still calm about the wedding?",
                    ]
                )
            )
        out += [
            self.me_says(
                [
                    "Wedding prep has taken over my life. They booked {venue} for the ceremony, it's gorgeous.",
                    "We went to see the venue, {venue}. I'm already crying and it's months away.",
                ],
                "venue",
            ),
            self.you_say(["That sounds like a dream.", "Perfect choice."]),
        ]
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        self.wed = self.past(s, allow_today=False)
        self.milestones.append((self.wed.day, "{sib_name}'s wedding", "wedding"))
        return [
            self.me_says(
                [
                    "The wedding was {w} and it was perfect. Best moment: {moment}.",
                    "We had the wedding {w}! I'm still recovering. Also, {moment}.",
                ],
                "wedding",
                w=self.wed.phrase,
            ),
            self.you_say(["Hahaha, iconic.", "Sounds like an unforgettable day.", *LAUGH]),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                ["Who is {name}'s {sib} marrying?", "Who is {sib_name} engaged to?"],
                "{fiance}",
                ["engaged"],
            ),
            self.q(
                "single-hop",
                "How did {fiance} propose?",
                "{proposal_cap}",
                ["engaged"],
                proposal_cap=cap(self.v["proposal"]),
            ),
            self.q(
                "temporal", "When did {name}'s {sib} get engaged?", self.eng.answer, ["engaged"]
            ),
            self.q(
                "single-hop",
                "What role did {name} have in the wedding?",
                "{role_cap}",
                ["role"],
                role_cap=cap(self.v["role"]),
            ),
            self.q(
                "multi-hop",
                "Where was the wedding of {name}'s {sib} held?",
                "{venue_cap}",
                ["engaged", "venue"],
                venue_cap=cap(self.v["venue"]),
            ),
            self.q(
                "temporal",
                "When did {sib_name}'s wedding take place?",
                self.wed.answer,
                ["wedding"],
            ),
            self.q(
                "multi-hop",
                "What memorable thing happened at {fiance}'s wedding?",
                "{moment_cap}",
                ["engaged", "wedding"],
                moment_cap=cap(self.v["moment"]),
            ),
        ]


BABY_DETAILS = [
    ("she grabbed my finger and wouldn't let go", "She grabbed {his} finger and wouldn't let go"),
    (
        "he sneezed on me within five minutes, a true family member",
        "He sneezed on {him} within five minutes",
    ),
    (
        "she has a full head of dark hair, like a tiny rock star",
        "{He} noticed she has a full head of dark hair",
    ),
    ("he slept through my entire visit, which I respect", "He slept through the whole visit"),
]
BABY_NAMES = [
    ("Ada", "girl"),
    ("Leo", "boy"),
    ("Mira", "girl"),
    ("Felix", "boy"),
    ("Elsie", "girl"),
    ("Arlo", "boy"),
    ("Nell", "girl"),
    ("Jasper", "boy"),
]
WEIGHTS = ["3.2 kilos", "3.6 kilos", "2.9 kilos", "4.1 kilos"]


class BabyArc(Arc):
    kind = "family"

    def setup(self) -> None:
        self.n_stages = 3
        sis = self.rng.random() < 0.5
        baby, sex = pick(self.rng, BABY_NAMES)
        detail, detail_a = pick(
            self.rng,
            [d for d in BABY_DETAILS if d[0].split()[0] == ("she" if sex == "girl" else "he")],
        )
        self.v.update(
            sib="sister" if sis else "brother",
            sib_name=self.side_name("f" if sis else "m"),
            spouse=self.side_name(),
            baby=baby,
            sex=sex,
            weight=pick(self.rng, WEIGHTS),
            detail=detail,
            kin="aunt" if self.me.gender == "f" else "uncle",
            niece="niece" if sex == "girl" else "nephew",
        )
        self.v["detail_a"] = self.f(detail_a)

    def stage_0(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "Okay, secret's out: my {sib} {sib_name} and {spouse} are expecting a baby!",
                    "Big family news, my {sib} {sib_name} and {spouse} are having a baby! I'm going to be an {kin}.",
                ],
                "expecting",
            ),
            self.you_say(
                [
                    "Oh how exciting! When's the due date?",
                    "Congratulations, {kin} {name}! When's the baby due?",
                ]
            ),
            self.me_says(
                [
                    "The baby's due {due}. I've already bought far too many tiny socks.",
                    "Due {due}! I'm way more excited than I expected.",
                ],
                "due",
                due=spoken_future(
                    s.day, self.stage_sess[1].day - timedelta(days=self.rng.randint(1, 3))
                ).phrase,
            ),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        self.born = self.past(s)
        self.milestones.append((self.born.day, "the birth of {baby}", "born"))
        return [
            self.me_says(
                [
                    "I'm an {kin}!!! {baby} arrived {w}, {weight} and perfectly healthy.",
                    "Baby news: a little {sex} called {baby}, born {w}. {weight}, everyone's doing great.",
                    "Meet my new {niece}, {baby}! Born {w}, {weight}. I'm already obsessed.",
                ],
                "born",
                w=self.born.phrase,
            ),
            self.you_say(["Welcome to the world, {baby}!", "That's such a lovely name.", *POS]),
        ]

    def stage_2(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(self.you_say(["Have you met the baby yet?", "How's the new {kin} life?"]))
        out += [
            self.me_says(
                [
                    "I finally got to hold {baby}. {detail_cap}.",
                    "Met the little one at last! {detail_cap}.",
                ],
                "met",
                detail_cap=cap(self.v["detail"]),
            ),
            self.you_say(["My heart!", "Stop, that's so cute."]),
        ]
        return out

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                ["What is the name of {name}'s {niece}?", "What did {name}'s {sib} name the baby?"],
                "{baby}",
                ["born"],
            ),
            self.q("temporal", "When was {name}'s {niece} born?", self.born.answer, ["born"]),
            self.q(
                "multi-hop",
                "Who are the parents of {baby}?",
                "{sib_name} and {spouse}",
                ["expecting", "born"],
            ),
            self.q(
                "single-hop", "How much did {name}'s {niece} weigh at birth?", "{weight}", ["born"]
            ),
            self.q(
                "single-hop",
                "What happened when {name} first held the baby?",
                "{detail_a}",
                ["met"],
            ),
            self.q(
                "open-domain",
                "Is {name} an {kin}?",
                "Yes; {his} {sib} {sib_name} had a baby, {baby}",
                ["expecting", "born"],
            ),
        ]


PARENT_JOBS = [
    ("postwoman", "mum"),
    ("school headteacher", "mum"),
    ("nurse", "mum"),
    ("train driver", "dad"),
    ("civil engineer", "dad"),
    ("firefighter", "dad"),
    ("librarian", "mum"),
    ("pharmacist", "dad"),
]
PARENT_HOBBIES = [
    ("birdwatching", "blurry photos of birds every morning"),
    ("golf", "voice notes about every single shot"),
    ("ukulele", "videos of wobbly songs"),
    ("beekeeping", "updates on the queen like she's royalty"),
    ("open-water swimming", "pictures of freezing lakes"),
]
PARTY_DETAILS = [
    "the whole team sang a song they wrote about {par_him}",
    "there was a cake shaped like {par_his} old workplace",
    "{par_he} cried through the entire speech",
    "someone put together a slideshow from 1989",
]


class RetireArc(Arc):
    kind = "family"

    def setup(self) -> None:
        self.n_stages = 3
        job, par = pick(self.rng, PARENT_JOBS)
        hob, sends = pick(self.rng, PARENT_HOBBIES)
        mum = par == "mum"
        self.v.update(
            par=par,
            pjob=job,
            years=str(self.rng.choice([25, 31, 34, 38, 40])),
            phobby=hob,
            sends=sends,
            par_he="she" if mum else "he",
            par_him="her" if mum else "him",
            par_his="her" if mum else "his",
            Par_he="She" if mum else "He",
        )
        self.v["party"] = self.f(pick(self.rng, PARTY_DETAILS))

    def stage_0(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "My {par} is retiring after {years} years as a {pjob}! I can't picture {par_him} not working.",
                    "Big milestone: {years} years as a {pjob} and my {par} is finally hanging it up.",
                ],
                "retire",
            ),
            self.you_say(
                [
                    "Wow, {years} years! What's {par_he} going to do with all that time?",
                    "That's a whole career. Good for {par_him}!",
                ]
            ),
            self.me_says(
                [
                    "No idea. {Par_he} says 'absolutely nothing', but I don't believe that for a second.",
                    "We're throwing {par_him} a party, obviously.",
                ]
            ),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        self.party = self.past(s, allow_today=False)
        return [
            self.me_says(
                [
                    "The retirement party was {w}, and {party}.",
                    "We had {par_his} send-off {w}. Highlight: {party}.",
                ],
                "party",
                w=self.party.phrase,
            ),
            self.you_say(["That's adorable.", "What a send-off.", *POS]),
        ]

    def stage_2(self, s: Sess) -> list[Line]:
        return [
            self.you_say(["How's your {par} enjoying retirement?", "Is your {par} bored yet?"]),
            self.me_says(
                [
                    "{Par_he} has taken up {phobby} and sends me {sends}.",
                    "Not bored at all. It's {phobby} now, all day, and I get {sends}.",
                ],
                "phobby",
            ),
            self.you_say(LAUGH),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                [
                    "What did {name}'s {par} do for a living?",
                    "What was the career of {name}'s {par}?",
                ],
                "{Par_he} was a {pjob} for {years} years",
                ["retire"],
            ),
            self.q(
                "temporal",
                "When was the retirement party for {name}'s {par}?",
                self.party.answer,
                ["party"],
            ),
            self.q(
                "multi-hop",
                "What new pastime did {name}'s {par} pick up after leaving {par_his} {pjob} job?",
                "{phobby_cap}",
                ["retire", "phobby"],
                phobby_cap=cap(self.v["phobby"]),
            ),
            self.q(
                "single-hop",
                "What happened at the retirement party?",
                "{party_cap}",
                ["party"],
                party_cap=cap(self.v["party"]),
            ),
            self.q(
                "open-domain",
                "Does {name}'s {par} have more free time now than before?",
                "Yes; {par_he} retired and now spends time on {phobby}",
                ["retire", "phobby"],
            ),
        ]


# --------------------------------------------------------------------------------------
# Purchases (a considered option that was not chosen is a built-in distractor)
# --------------------------------------------------------------------------------------

PURCHASES: list[dict[str, str]] = [
    {
        "thing": "car",
        "a": "a used Honda Civic",
        "b": "a Toyota Corolla hybrid",
        "why_a": "It was three grand cheaper and the previous owner kept every single receipt.",
        "why_a_ans": "It was three thousand cheaper and came with a full service history",
        "why_b": "The fuel savings won me over in the end.",
        "why_b_ans": "The fuel savings",
        "use_a": "The air con in the Civic died during the first heatwave, naturally.",
        "use_a_ans": "Its air conditioning died in the first heatwave",
        "use_b": "I drove the Corolla all the way to the coast and barely used any petrol.",
        "use_b_ans": "{He} drove it to the coast on very little petrol",
        "consider": "I test-drove both and I honestly can't decide.",
        "consider_ans": "{He} needed a new car",
    },
    {
        "thing": "bike",
        "a": "a Brompton folding bike",
        "b": "an electric cargo bike",
        "why_a": "It folds up and fits under my desk at work.",
        "why_a_ans": "It folds up and fits under {his} desk at work",
        "why_b": "I can carry the whole weekly shop on it, maybe even a Christmas tree.",
        "why_b_ans": "{He} can carry the weekly shop on it",
        "use_a": "Someone tried to nick the saddle off the Brompton on day two. Day two!",
        "use_a_ans": "Someone tried to steal its saddle on day two",
        "use_b": "The cargo bike has made me the most popular person on my street, all the kids want a ride.",
        "use_b_ans": "All the kids on {his} street want a ride on it",
        "consider": "My commute is killing me and the bus is never on time.",
        "consider_ans": "{His} commute was miserable and the bus is unreliable",
    },
    {
        "thing": "camera",
        "a": "a Fujifilm X-T30",
        "b": "a Sony a6400",
        "why_a": "The colours straight out of the camera are just gorgeous.",
        "why_a_ans": "The colours straight out of the camera",
        "why_b": "The autofocus is ridiculous, it tracks eyes from across the room.",
        "why_b_ans": "Its excellent autofocus",
        "use_a": "I took the Fuji to a friend's wedding and the photos look like a magazine spread.",
        "use_a_ans": "{He} took it to a friend's wedding and the photos came out magazine-quality",
        "use_b": "I dropped the Sony in a puddle on its first outing and it still works, thank god.",
        "use_b_ans": "{He} dropped it in a puddle on its first outing, but it still works",
        "consider": "My phone photos just aren't cutting it anymore.",
        "consider_ans": "{His} phone photos weren't good enough anymore",
    },
    {
        "thing": "piano",
        "a": "a digital piano with weighted keys",
        "b": "an old upright piano from a church sale",
        "why_a": "I can practise with headphones at midnight without the neighbours hating me.",
        "why_a_ans": "{He} can practise with headphones late at night",
        "why_b": "It was free as long as I could move it, and it has so much character.",
        "why_b_ans": "It was free if {he} could move it, and it has character",
        "use_a": "I've practised every night on the digital one, even at 1 a.m. with headphones.",
        "use_a_ans": "{He} has practised on it every night, even at 1 a.m.",
        "use_b": "The upright needed tuning twice already, and it took four of us to get it up the stairs.",
        "use_b_ans": "It has needed tuning twice and took four people to carry upstairs",
        "consider": "I want to get back into playing after fifteen years.",
        "consider_ans": "{He} wants to play again after fifteen years",
    },
    {
        "thing": "sofa",
        "a": "a green velvet sofa",
        "b": "a grey corner sofa",
        "why_a": "It's a bit impractical, but it makes me happy every time I walk in.",
        "why_a_ans": "It makes {him} happy, even if impractical",
        "why_b": "It's sensible, it seats six, and it's stain-resistant.",
        "why_b_ans": "It's sensible, seats six and is stain-resistant",
        "use_a": "Two days in and I spilled red wine on the velvet. A lesson in humility.",
        "use_a_ans": "{He} spilled red wine on it after two days",
        "use_b": "We fit eight people on the corner sofa for the match on Sunday.",
        "use_b_ans": "Eight people fit on it to watch a match",
        "consider": "My current couch is held together by tape and optimism.",
        "consider_ans": "{His} old couch was falling apart",
    },
    {
        "thing": "laptop",
        "a": "a MacBook Air",
        "b": "a ThinkPad",
        "why_a": "The battery lasts literally all day.",
        "why_a_ans": "The all-day battery life",
        "why_b": "The keyboard is a dream and I can actually repair it myself.",
        "why_b_ans": "The great keyboard and being repairable",
        "use_a": "The MacBook survived a whole coffee spill, I don't know how.",
        "use_a_ans": "It survived a coffee spill",
        "use_b": "The ThinkPad's fan sounds like a jet engine when I edit photos.",
        "use_b_ans": "Its fan is very loud when {he} edits photos",
        "consider": "My old one takes ten minutes to boot.",
        "consider_ans": "{His} old laptop took ten minutes to boot",
    },
    {
        "thing": "coffee machine",
        "a": "a manual lever espresso machine",
        "b": "a bean-to-cup machine",
        "why_a": "It's all about the ritual, and it looks beautiful on the counter.",
        "why_a_ans": "The ritual, and it looks beautiful",
        "why_b": "Press one button, get a flat white. I'm not a barista.",
        "why_b_ans": "One-button convenience",
        "use_a": "My first twenty shots with the lever machine were undrinkable, but I'm getting there.",
        "use_a_ans": "{His} first twenty shots were undrinkable, but {he} is improving",
        "use_b": "I've made about four hundred flat whites on the new machine already.",
        "use_b_ans": "{He} has made about four hundred flat whites with it",
        "consider": "I spend way too much at the cafe every morning.",
        "consider_ans": "{He} was spending too much at the cafe",
    },
]


class PurchaseArc(Arc):
    kind = "purchase"

    def setup(self) -> None:
        self.n_stages = 3
        p = self.draw("purchase")
        first = self.rng.random() < 0.5
        x = "a" if first else "b"
        self.v.update(
            thing=p["thing"],
            a=p["a"],
            b=p["b"],
            consider=p["consider"],
            chosen=p[x],
            other_opt=p["b"] if first else p["a"],
            why=p[f"why_{x}"],
            use=p[f"use_{x}"],
        )
        self.v.update(
            consider_a=self.f(p["consider_ans"]),
            why_a=self.f(p[f"why_{x}_ans"]),
            use_a=self.f(p[f"use_{x}_ans"]),
        )

    def stage_0(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "I need a new {thing}. {consider} I'm torn between {a} and {b}.",
                    "Help me decide: {a} or {b}? {consider}",
                ],
                "consider",
            ),
            self.you_say(
                [
                    "Ooh, tough one. What's your gut saying?",
                    "Whatever you pick, don't overthink it!",
                    "Both sound good. What's the budget?",
                ]
            ),
            self.me_says(["I'll decide this weekend. Probably.", "My gut keeps changing hourly."]),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        self.when = self.past(s)
        self.milestones.append((self.when.day, "buying {chosen}", "bought"))
        out = []
        if self.maybe(0.5):
            out.append(
                self.you_say(
                    [
                        "Did you ever decide on the {thing}?",
                        "So what happened with the {thing} dilemma?",
                    ]
                )
            )
        out += [
            self.me_says(
                [
                    "Decision made: I bought {chosen} {w}! {why}",
                    "I went for {chosen} in the end, picked it up {w}. {why}",
                    "The great {thing} saga is over: I bought {chosen} {w}. {why}",
                ],
                "bought",
                w=self.when.phrase,
            ),
            self.you_say(["Good choice!", "Love it. No regrets!", *POS]),
        ]
        self.mention(
            s,
            [
                ("How's the new {thing}?", "Love it so far."),
                ("Still happy with the {thing}?", "No regrets yet!"),
            ],
        )
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        return [
            self.me_says(["{use}", "Update on the {thing} situation: {use}"], "use"),
            self.you_say(["Ha, of course.", "Typical!", "Well, that's one way to break it in."]),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                [
                    "Which {thing} did {name} end up buying?",
                    "What did {name} finally choose for {his} new {thing}?",
                ],
                "{chosen_cap}",
                ["bought"],
                chosen_cap=cap(self.v["chosen"]),
            ),
            self.q(
                "multi-hop",
                "Which option did {name} consider but not buy when shopping for a {thing}?",
                "{other_cap}",
                ["consider", "bought"],
                other_cap=cap(self.v["other_opt"]),
            ),
            self.q("single-hop", "Why did {name} pick {chosen}?", "{why_a}", ["bought"]),
            self.q(
                "temporal", "When did {name} buy {his} new {thing}?", self.when.answer, ["bought"]
            ),
            self.q(
                "single-hop",
                [
                    "What happened with {name}'s new {thing} after the purchase?",
                    "How has {name}'s new {thing} worked out?",
                ],
                "{use_a}",
                ["use"],
            ),
            self.q(
                "single-hop",
                "Why was {name} shopping for a new {thing}?",
                "{consider_a}",
                ["consider"],
            ),
        ]


# --------------------------------------------------------------------------------------
# Dating
# --------------------------------------------------------------------------------------

MEET_PLACES = [
    ("at a friend's board-game night", "At a friend's board-game night"),
    ("in the queue at the post office", "In a queue at the post office"),
    ("on a dating app, I know, I know", "On a dating app"),
    ("at the dog park, {pname_he} has a very rude spaniel", "At the dog park"),
    ("at a wedding, we were seated at the singles table", "At a wedding (at the singles table)"),
]
DATE_JOBS = [
    "a marine biologist",
    "a firefighter",
    "a pastry chef",
    "a tattoo artist",
    "an architect",
    "a vet nurse",
    "a high-school history teacher",
]
DATE_TALKS = [
    (
        "We talked for four hours about our worst childhood haircuts.",
        "They talked for four hours about childhood haircuts",
    ),
    (
        "We ended up arguing about whether a hot dog is a sandwich, and it was the best argument of my life.",
        "They had a fun argument about whether a hot dog is a sandwich",
    ),
    (
        "We walked along the river until the cafe kicked us out.",
        "They walked along the river until the cafe closed",
    ),
    (
        "We found out we went to the same summer camp when we were eleven!",
        "They discovered they went to the same summer camp as kids",
    ),
]
NEXT_STEPS = [
    ("we're moving in together next month", "moving in together"),
    ("I'm meeting {pname_his} parents this weekend", "meeting {pname}'s parents"),
    (
        "we're going away together for the first time, to a cabin in the woods",
        "their first trip together",
    ),
]


class DatingArc(Arc):
    kind = "dating"

    def setup(self) -> None:
        self.n_stages = 3
        pf = self.rng.random() < 0.5
        self.v.update(
            pname=self.side_name("f" if pf else "m"),
            pname_he="she" if pf else "he",
            pname_his="her" if pf else "his",
            pjob=pick(self.rng, DATE_JOBS),
        )
        talk, talk_a = pick(self.rng, DATE_TALKS)
        self.v.update(talk=talk, talk_a=talk_a)
        where, where_a = pick(self.rng, MEET_PLACES)
        nxt, nxt_a = pick(self.rng, NEXT_STEPS)
        self.v.update(where=self.f(where), where_a=where_a, nxt=self.f(nxt), nxt_a=self.f(nxt_a))

    def stage_0(self, s: Sess) -> list[Line]:
        self.when = self.past(s, allow_today=False)
        self.milestones.append((self.when.day, "the first date with {pname}", "date"))
        return [
            self.me_says(
                [
                    "Okay, gossip about myself: I went on a date {w} with someone I met {where}. {pname}, {pjob}.",
                    "So... I had a date {w}! {pname}, {pjob}. We met {where}.",
                ],
                "date",
                w=self.when.phrase,
            ),
            self.you_say(
                [
                    "SPILL. Everything.",
                    "Ooh! And?? How did it go?",
                    "Finally some good news. Details please!",
                ]
            ),
            self.me_says(["{talk}", "It went really well. {talk}"], "talk"),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(
                self.you_say(["Are you still seeing {pname}?", "How are things with {pname}?"])
            )
        out += [
            self.me_says(
                [
                    "We made it official! {pname} is my partner now, which feels wild to type.",
                    "It's official, we're together. I haven't felt this calm with someone in years.",
                ],
                "official",
            ),
            self.you_say(["I'm so happy for you!", "Ahh, finally!", *POS]),
        ]
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        self.next_day = s.day
        return [
            self.me_says(["Big step: {nxt}.", "Don't freak out, but {nxt}."], "next"),
            self.you_say(["Whoa! Things are moving fast.", "That's a big deal!", "Aww, you two."]),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                [
                    "How did {name} meet {pname}?",
                    "Where did {name} first meet the person {he} started dating?",
                ],
                "{where_a}",
                ["date"],
            ),
            self.q(
                "single-hop",
                "What does {pname} do for work?",
                "{He_p} is {pjob}",
                ["date"],
                He_p=cap(self.v["pname_he"]),
            ),
            self.q(
                "temporal",
                "When did {name} go on a first date with {pname}?",
                self.when.answer,
                ["date"],
            ),
            self.q("single-hop", "What happened on {name}'s first date?", "{talk_a}", ["talk"]),
            self.q(
                "temporal",
                "How long after their first date did {name} and {pname} take the step of {nxt_a}?",
                cap(gap_phrase(self.when.day, self.next_day)),
                ["date", "next"],
            ),
            self.q(
                "open-domain",
                "Is {name} single?",
                "No; {he} is in a relationship with {pname}",
                ["date", "official"],
            ),
            self.q(
                "multi-hop",
                "What big step is {name} taking with the {pjob_bare} {he} met {where_short}?",
                "{nxt_a_cap}",
                ["date", "next"],
                pjob_bare=self.v["pjob"].split(" ", 1)[1],
                where_short=self.v["where_a"].lower().split(" (")[0],
                nxt_a_cap=cap(self.v["nxt_a"]),
            ),
        ]


# --------------------------------------------------------------------------------------
# Volunteering
# --------------------------------------------------------------------------------------

ORGS: list[dict[str, str]] = [
    {
        "org": "the Riverside food bank",
        "task": "I sort donations and pack boxes for families",
        "cause": "food poverty",
        "event": "a charity pub quiz",
    },
    {
        "org": "the Hope & Whiskers animal rescue",
        "task": "I walk the dogs and clean out the kennels",
        "cause": "animal welfare",
        "event": "a sponsored dog walk",
    },
    {
        "org": "a literacy charity for adults",
        "task": "I help grown-ups practise reading, one on one",
        "cause": "adult literacy",
        "event": "a second-hand book sale",
    },
    {
        "org": "the hospice charity shop",
        "task": "I run the till and price the donations",
        "cause": "end-of-life care",
        "event": "a vintage fashion show",
    },
    {
        "org": "a beach clean-up group",
        "task": "we pick litter off the shore and log everything we find",
        "cause": "ocean plastic",
        "event": "a fundraising swim",
    },
]
AMOUNTS = ["£1,240", "$2,300", "£860", "$4,150", "€1,900", "$3,075"]


class VolunteerArc(Arc):
    kind = "volunteer"

    def setup(self) -> None:
        self.n_stages = 3
        self.v.update(self.draw("org"))
        self.v.update(
            day=pick(self.rng, WEEKDAYS[:3] + WEEKDAYS[5:]), amount=pick(self.rng, AMOUNTS)
        )

    def stage_0(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "I've started volunteering at {org} on {day}s. {task_cap}.",
                    "New routine: every {day} I'm at {org}, where {task}.",
                ],
                "start",
                task_cap=cap(self.v["task"]),
            ),
            self.you_say(
                [
                    "That's lovely. What made you sign up?",
                    "Oh that's really cool. How did you get into that?",
                ]
            ),
            self.me_says(
                [
                    "I wanted to do something about {cause} instead of just reading about it.",
                    "{cause_cap} is something I care about a lot, and I had free evenings.",
                ],
                "why",
                cause_cap=cap(self.v["cause"]),
            ),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        s2 = self.stage_sess[2]
        self.event_day = s2.day - timedelta(days=self.rng.randint(1, max(1, min(6, s2.gap - 2))))
        self.event_when = spoken_future(s.day, self.event_day)
        return [
            self.me_says(
                [
                    "We're organising {event} to raise money, it's {w}. I'm in charge of the posters!",
                    "I volunteered to help run {event} {w}. What was I thinking.",
                ],
                "event",
                w=self.event_when.phrase,
            ),
            self.you_say(
                ["Count me in, I'll come!", "You'll smash it.", "Let me know if you need a hand."]
            ),
        ]

    def stage_2(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "We did it, the fundraiser {w} brought in {amount}! I'm exhausted but so happy.",
                    "Final count from the fundraiser {w}: {amount}. Way more than we hoped!",
                ],
                "result",
                w=spoken_past(s.day, self.event_day).phrase,
            ),
            self.you_say(["That's incredible!", *POS]),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                [
                    "Where has {name} been volunteering?",
                    "Which organisation does {name} give {his} time to?",
                ],
                "{org_cap}",
                ["start"],
                org_cap=cap(self.v["org"]),
            ),
            self.q(
                "single-hop",
                [
                    "Which day of the week does {name} volunteer?",
                    "On which day does {name} go to {org}?",
                ],
                "{day}",
                ["start"],
            ),
            self.q(
                "single-hop",
                [
                    "Why did {name} start volunteering?",
                    "What cause made {name} sign up as a volunteer?",
                ],
                "{He} cares about {cause}",
                ["why"],
            ),
            self.q(
                "multi-hop",
                "How much money did {name}'s {event_bare} raise?",
                "{amount}",
                ["event", "result"],
                event_bare=self.v["event"].split(" ", 1)[1],
            ),
            self.q(
                "temporal",
                "When was the fundraiser that {name} helped organise scheduled?",
                self.event_when.answer,
                ["event"],
            ),
            self.q(
                "open-domain",
                "Would {name} likely support a petition about {cause}?",
                "Likely yes; {he} volunteers at {org} because {he} cares about {cause}",
                ["start", "why"],
            ),
        ]


# --------------------------------------------------------------------------------------
# Garden
# --------------------------------------------------------------------------------------

GARDENS: list[dict[str, str]] = [
    {
        "plot": "an allotment plot by the railway line",
        "crops": "tomatoes, courgettes and far too many beans",
        "pest": "slugs",
        "victim": "lettuces",
        "harvest": "about six kilos of tomatoes",
        "dish": "a huge batch of passata",
    },
    {
        "plot": "a raised bed in the community garden",
        "crops": "chillies, basil and strawberries",
        "pest": "a squirrel",
        "victim": "strawberries",
        "harvest": "a mountain of chillies",
        "dish": "my own hot sauce",
    },
    {
        "plot": "a patch in my landlord's back garden",
        "crops": "potatoes, kale and sunflowers",
        "pest": "caterpillars",
        "victim": "kale",
        "harvest": "a whole sack of potatoes",
        "dish": "potato salad for my street party",
    },
    {
        "plot": "a shared plot at the school garden",
        "crops": "pumpkins, sweetcorn and peas",
        "pest": "pigeons",
        "victim": "peas",
        "harvest": "three enormous pumpkins",
        "dish": "pumpkin soup and a very ugly jack-o'-lantern",
    },
]


class GardenArc(Arc):
    kind = "garden"

    def setup(self) -> None:
        self.n_stages = 3
        self.v.update(self.draw("garden"))

    def stage_0(self, s: Sess) -> list[Line]:
        self.when = self.past(s)
        self.milestones.append((self.when.day, "getting a garden plot", "plot"))
        return [
            self.me_says(
                [
                    "After two years on the waiting list I finally got {plot} {w}! My back already hurts from digging.",
                    "I'm a gardener now, apparently. Got {plot} {w}.",
                ],
                "plot",
                w=self.when.phrase,
            ),
            self.you_say(
                ["Ooh, what are you going to grow?", "Green fingers! What are you planting?"]
            ),
            self.me_says(
                ["{crops_cap}. Ambitious, I know.", "The plan is {crops}."],
                "crops",
                crops_cap=cap(self.v["crops"]),
            ),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "Garden disaster: {pest} got every single one of my {victim}. I'm at war.",
                    "I went down to the plot and {pest} had destroyed all my {victim}. Devastated.",
                ],
                "pest",
            ),
            self.you_say(["Nooo, all that work!", *NEG]),
        ]

    def stage_2(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "Harvest report: {harvest}! I turned most of it into {dish}.",
                    "The garden finally paid off, {harvest}. Made {dish} with it.",
                ],
                "harvest",
            ),
            self.you_say(["Save me some!", "Okay, farmer!", *POS]),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                "What did {name} plan to grow?",
                "{crops_cap}",
                ["crops"],
                crops_cap=cap(self.v["crops"]),
            ),
            self.q(
                "single-hop",
                "What pest ruined part of {name}'s garden?",
                "{pest_cap} (they ate the {victim})",
                ["pest"],
                pest_cap=cap(self.v["pest"]),
            ),
            self.q(
                "single-hop",
                "What did {name} make with {his} harvest?",
                "{dish_cap}",
                ["harvest"],
                dish_cap=cap(self.v["dish"]),
            ),
            self.q(
                "temporal", "When did {name} get {his} garden plot?", self.when.answer, ["plot"]
            ),
            self.q(
                "multi-hop",
                "Which of the crops {name} planted did {pest} destroy?",
                "{victim_cap}",
                ["crops", "pest"],
                victim_cap=cap(self.v["victim"]),
            ),
            self.q(
                "open-domain",
                "Would {name} appreciate a pair of good gardening gloves?",
                "Yes; {he} has {plot} and grows vegetables",
                ["plot", "harvest"],
            ),
        ]


# --------------------------------------------------------------------------------------
# Races
# --------------------------------------------------------------------------------------

RACES: list[dict[str, str]] = [
    {
        "race": "half marathon",
        "rname": "the Riverside Half",
        "long": "eighteen kilometres",
        "time": "1:58:40",
    },
    {"race": "10k", "rname": "the Old Town 10k", "long": "twelve kilometres", "time": "52 minutes"},
    {
        "race": "marathon",
        "rname": "the Harbour City Marathon",
        "long": "thirty-two kilometres",
        "time": "4:21:05",
    },
    {
        "race": "sprint triathlon",
        "rname": "the Lakeside Sprint Tri",
        "long": "a full practice brick session",
        "time": "1:24:30",
    },
]
RACE_WHYS = [
    (
        "I turn thirty-five this year and want something to show for it.",
        "{He} turns thirty-five and wanted a challenge",
    ),
    (
        "I'm raising money for the hospital that looked after my gran.",
        "To raise money for the hospital that cared for {his} gran",
    ),
    (
        "My brother ran one last year and I'm competitive.",
        "{His} brother did one and {he} is competitive",
    ),
    ("I need a goal or I'll never get off the sofa.", "{He} needed a goal to stay active"),
]


class RaceArc(Arc):
    kind = "race"

    def setup(self) -> None:
        self.n_stages = 3
        self.v.update(self.draw("race"))
        self._race_day: date | None = None
        why, why_a = pick(self.rng, RACE_WHYS)
        self.v.update(why=why, why_a=self.f(why_a))

    def race_day(self) -> date:
        if self._race_day is None:
            s2 = self.stage_sess[2]
            self._race_day = s2.day - timedelta(
                days=self.rng.randint(1, max(1, min(6, s2.gap - 2)))
            )
        return self._race_day

    def stage_0(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                [
                    "I signed up for {rname}, it's {w}. A {race}, and I've never done anything like it.",
                    "Don't laugh, but I've entered {rname}, my first ever {race}. It's {w}.",
                ],
                "signup",
                w=spoken_future(s.day, self.race_day()).phrase,
            ),
            self.you_say(["Whoa! What made you do that?", "Respect. Why now?"]),
            self.me_says("{why}", "why"),
        ]

    def stage_1(self, s: Sess) -> list[Line]:
        return [
            self.you_say(["How's the training going?", "Are you still training?"]),
            self.me_says(
                [
                    "Longest session so far: {long}. My legs have filed a formal complaint.",
                    "Building up slowly. I did {long} on Sunday and had to lie on the kitchen floor after.",
                ],
                "training",
            ),
            self.you_say(["That's so far!", "You're a machine."]),
        ]

    def stage_2(self, s: Sess) -> list[Line]:
        self.when = spoken_past(s.day, self.race_day())
        self.milestones.append((self.when.day, "running {rname}", "result"))
        return [
            self.me_says(
                [
                    "I finished {rname} {w}! {time}, and I didn't walk once.",
                    "Race report: {w} I crossed the finish line in {time}. I cried a little.",
                ],
                "result",
                w=self.when.phrase,
            ),
            self.you_say(["YOU DID IT!", "Legend. Absolute legend.", *POS]),
        ]

    def questions(self) -> list[QDraft]:
        return [
            self.q(
                "single-hop",
                [
                    "What race did {name} enter?",
                    "Which event was {name} training for?",
                    "Which {race} did {name} sign up for?",
                ],
                "{rname_cap}, a {race}",
                ["signup"],
                rname_cap=cap(self.v["rname"]),
            ),
            self.q("single-hop", "Why did {name} decide to do a {race}?", "{why_a}", ["why"]),
            self.q(
                "single-hop",
                "What was {name}'s longest training session before the race?",
                "{long_cap}",
                ["training"],
                long_cap=cap(self.v["long"]),
            ),
            self.q(
                "single-hop",
                ["What was {name}'s finishing time?", "What time did {name} finish {rname} in?"],
                "{time}",
                ["result"],
            ),
            self.q("temporal", "When did {name} compete in {rname}?", self.when.answer, ["result"]),
            self.q(
                "open-domain",
                "Is {name} likely in good physical shape?",
                "Yes; {he} trained for and finished a {race} in {time}",
                ["training", "result"],
            ),
        ]


# --------------------------------------------------------------------------------------
# Traits: preferences stated implicitly, twice, in different sessions (open-domain fodder)
# --------------------------------------------------------------------------------------

TRAITS: list[dict[str, Any]] = [
    {
        "id": "flying",
        "lines": [
            "I'm taking the overnight train to my cousin's, eleven hours. You know me and planes, my palms sweat just looking at the booking page.",
            "Someone at work suggested a weekend in Rome and I immediately started looking up the train route instead of the flight.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} be keen on a long-haul flight to Australia?",
                "Unlikely; {he} is anxious about flying and takes trains when possible",
                [0, 1],
            ),
            (
                "single-hop",
                "How does {name} prefer to travel long distances?",
                "By train, to avoid flying",
                [0],
            ),
        ],
    },
    {
        "id": "early",
        "excl": "night",
        "lines": [
            "I was up at 5:15 again this morning. The city is so peaceful before anyone's awake.",
            "By 9 p.m. I'm useless, honestly. I'm usually in bed by half nine.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} enjoy a concert that starts at midnight?",
                "Probably not; {he} gets up very early and is in bed by around 9:30",
                [0, 1],
            )
        ],
    },
    {
        "id": "night",
        "excl": "early",
        "lines": [
            "It's 2 a.m. and I'm wide awake, these are my peak productivity hours.",
            "Morning meetings should be illegal. My brain doesn't boot up until eleven.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} enjoy a 6 a.m. sunrise yoga class?",
                "Unlikely; {he} is a night owl",
                [0, 1],
            )
        ],
    },
    {
        "id": "veggie",
        "lines": [
            "Eight years without meat now and I genuinely don't miss it.",
            "The only thing I could eat at the work dinner was the mushroom risotto. Again.",
        ],
        "qs": [
            (
                "open-domain",
                "What sort of restaurant should {other} pick for {name}'s birthday dinner?",
                "One with good vegetarian options; {he} hasn't eaten meat in years",
                [0, 1],
            ),
            (
                "single-hop",
                "How many years has {name} gone without eating meat?",
                "About eight years",
                [0],
            ),
        ],
    },
    {
        "id": "spicy",
        "lines": [
            "I put chilli crisp on literally everything, including scrambled eggs.",
            "I ordered the hottest curry on the menu last night. The waiter warned me. It was perfect.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} enjoy a hot-sauce tasting event?",
                "Yes; {he} loves very spicy food",
                [0, 1],
            )
        ],
    },
    {
        "id": "cold",
        "lines": [
            "It's four degrees out and I'm wearing two coats. I was built for summer.",
            "Every winter I seriously consider moving somewhere tropical.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} enjoy a winter holiday in Lapland?",
                "Probably not; {he} hates the cold",
                [0, 1],
            )
        ],
    },
    {
        "id": "introvert",
        "lines": [
            "Honestly my ideal Friday is a book and a blanket. Big parties drain me.",
            "I slipped out of the office party after forty minutes, too many people talking at once.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} prefer a big surprise party or a quiet dinner with a few friends?",
                "A quiet dinner; big parties drain {him}",
                [0, 1],
            )
        ],
    },
    {
        "id": "jazz",
        "lines": [
            "Found a first pressing of a Coltrane record at the flea market and nearly screamed.",
            "There's a trio at the Blue Lantern every Thursday, I never miss them.",
        ],
        "qs": [
            (
                "open-domain",
                "What kind of music would {name} most likely want on at a dinner party?",
                "Jazz; {he} collects jazz records and goes to see a jazz trio weekly",
                [0, 1],
            ),
            (
                "single-hop",
                "Where does {name} go to hear live music on Thursdays?",
                "The Blue Lantern",
                [1],
            ),
        ],
    },
    {
        "id": "catallergy",
        "lines": [
            "I had to leave Sam's flat early last night. His cat plus my allergies equals disaster.",
            "My eyes swell up if I'm in a room with a cat for ten minutes.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} be a good choice to cat-sit for a week?",
                "No; {he} is allergic to cats",
                [0, 1],
            )
        ],
    },
    {
        "id": "coffee",
        "lines": [
            "I'm on my fourth espresso and it's not even noon.",
            "Three weeks off caffeine now! The headaches have finally stopped.",
        ],
        "qs": [
            (
                "multi-hop",
                "How have {name}'s coffee habits changed?",
                "{He} went from several espressos a day to quitting caffeine",
                [0, 1],
            ),
            ("single-hop", "Does {name} still drink coffee?", "No; {he} gave up caffeine", [1]),
        ],
    },
    {
        "id": "football",
        "lines": [
            "The Harbour City Gulls lost again on Saturday. Why do I do this to myself?",
            "Renewed my season ticket for the Gulls. I'm a glutton for punishment.",
        ],
        "qs": [
            ("single-hop", "Which team does {name} support?", "The Harbour City Gulls", [0]),
            (
                "open-domain",
                "Would {name} enjoy watching a football match at the pub?",
                "Yes; {he} is a devoted football fan",
                [0, 1],
            ),
        ],
    },
    {
        "id": "plants",
        "lines": [
            "Seventeen houseplants and counting. My flat is basically a jungle.",
            "My fiddle-leaf fig finally grew a new leaf and I threw it a little party.",
        ],
        "qs": [
            (
                "open-domain",
                "What would be a good housewarming gift for {name}?",
                "A houseplant; {he} loves plants",
                [0, 1],
            )
        ],
    },
    {
        "id": "heights",
        "lines": [
            "They took us up to a glass-floored viewing deck on the team day and I crawled off it on my hands and knees.",
            "I can't even stand on the top of a stepladder without my knees going.",
        ],
        "qs": [
            (
                "open-domain",
                "Would {name} enjoy skydiving?",
                "Almost certainly not; {he} is afraid of heights",
                [0, 1],
            )
        ],
    },
    {
        "id": "lactose",
        "lines": [
            "Ordered a cheese board out of pure bravado and paid for it all night. Dairy and I are not friends.",
            "I've finally found an oat milk that actually froths properly.",
        ],
        "qs": [
            (
                "open-domain",
                "Would a fondue night be a good idea for {name}?",
                "No; {he} is lactose intolerant",
                [0, 1],
            )
        ],
    },
]
TRAIT_REACTIONS = [
    "Ha, classic you.",
    "Fair enough!",
    "Honestly, relatable.",
    "You're one of a kind.",
    "Ha, I know.",
    "Same, to be honest.",
    "Respect.",
]


class TraitArc(Arc):
    kind = "trait"

    def setup(self) -> None:
        self.n_stages = 2
        self.trait: dict[str, Any] = self.draw("trait", lambda t: t["id"] in self.conv_traits())

    def conv_traits(self) -> set[str]:
        """Trait ids of this person that are taken or excluded (avoid contradictions)."""
        taken: set[str] = set()
        for t in self.conv.traits.get(self.me.name, []):
            taken.add(t["id"])
            if "excl" in t:
                taken.add(t["excl"])
        return taken

    def render(self, stage: int, sess: Sess) -> list[Line]:
        out = []
        if self.maybe(0.3):
            out.append(
                self.you_say(
                    ["What are you up to?", "How's your day going?", "Anything fun happening?"]
                )
            )
        out.append(self.me_says(self.trait["lines"][stage], f"t{stage}"))
        if self.maybe(0.75):
            out.append(self.you_say(TRAIT_REACTIONS))
        return out

    def questions(self) -> list[QDraft]:
        return [self.q(cat, q, a, [f"t{i}" for i in idx]) for cat, q, a, idx in self.trait["qs"]]


ARC_TYPES: list[type[Arc]] = [
    PetArc,
    JobArc,
    TripArc,
    HobbyArc,
    HealthArc,
    MoveArc,
    WeddingArc,
    BabyArc,
    RetireArc,
    PurchaseArc,
    DatingArc,
    VolunteerArc,
    GardenArc,
    RaceArc,
]


# --------------------------------------------------------------------------------------
# Small talk
# --------------------------------------------------------------------------------------

OPENERS = [
    "Hey {y}! How's your week been?",
    "Hi hi! Long time no chat, how are you?",
    "Morning {y}! Got a minute?",
    "Hey! Finally sitting down with a cup of tea. How are things?",
    "{y}! I have so much to tell you.",
    "Hey, sorry I've been quiet. How are you doing?",
    "Happy {weekday}! How's life?",
    "Hello from my sofa. What's new?",
    "Hey you. Are you surviving this week?",
    "Hi! It's been too long. What's going on with you?",
    "Evening! Is now a good time?",
    "Hey! I've got ten minutes before my next thing. How are you?",
    "Yo {y}! What's happening?",
    "Hiya. Quick catch-up?",
]
OPENER_REPLIES = [
    "Hey {x}! Busy but good. You?",
    "Hi! Honestly, a bit of a whirlwind. What's new with you?",
    "Good to hear from you! All fine here, mostly.",
    "Hey! Tired, but hanging in there. Tell me everything.",
    "Oh hi! Perfect timing, I was just about to message you.",
    "Surviving, just about! What's up?",
    "Hey! Can't complain. Well, I can, but I won't.",
    "Always! How are you, {x}?",
    "Hey hey! Pretty good, actually. What about you?",
    "Not bad at all. Been meaning to text you!",
    "Oh, good timing, I just made coffee.",
]
CLOSINGS: list[tuple[str, list[str]]] = [
    ("Okay, I have to run. Talk soon!", ["Bye! Take care.", "Talk soon!", "Have a good one!"]),
    (
        "I should go make dinner. Catch up next week?",
        ["Definitely! Enjoy your dinner.", "Yes please! Bye!"],
    ),
    ("Right, my battery's dying. Speak soon!", ["Speak soon!", "Bye! Go charge that phone."]),
    (
        "Anyway, I'd better get back to work. Bye for now!",
        ["Good luck with the rest of the day!", "Bye! Take care."],
    ),
    ("I'm falling asleep, goodnight!", ["Night night!", "Sleep well!"]),
    ("Gotta go, my train's here. Bye!", ["Safe travels, bye!", "Talk soon!"]),
    ("Let's do a proper call soon, okay?", ["Yes please! Bye!", "Deal. Speak soon!"]),
    ("Okay, my lunch break is over. Bye!", ["Bye! Speak soon.", "Enjoy the afternoon!"]),
    ("I'll let you go. This was nice!", ["It was! Talk soon.", "Always is. Bye!"]),
    ("Someone's at the door, gotta go!", ["Go go go! Bye!", "Ha, bye!"]),
    ("Okay, back to the chaos. Talk later!", ["Good luck! Later!", "Bye for now!"]),
]
SMALL_TALK: list[list[str]] = [
    [
        "Did you hear the storm last night? The thunder woke me up at three.",
        "Yes! My whole street lost power for an hour.",
        "I lit candles and pretended it was romantic.",
    ],
    [
        "I've been rewatching an old detective show, it's so comforting.",
        "Which one?",
        "The one with the grumpy inspector and the vintage car. I know every episode by heart.",
    ],
    [
        "Is it just me or did this week last a month?",
        "It's not just you. I've had about three Mondays.",
    ],
    [
        "I tried that new ramen place near the cinema.",
        "Any good?",
        "The broth was great, the service was glacial.",
    ],
    ["Finally some sun today!", "I sat outside at lunch like a lizard."],
    [
        "My neighbour has started learning the trumpet.",
        "Oh no. At what time of day?",
        "Seven a.m. Every day.",
    ],
    [
        "I'm trying to drink more water. I've set six reminders on my phone.",
        "Are they working?",
        "I ignore all of them.",
    ],
    [
        "Did you hear the bridge is closed for repairs again?",
        "Ugh, that adds twenty minutes to everything.",
    ],
    [
        "What are you reading at the moment?",
        "A thriller someone left on the train. It's terrible and I can't stop.",
    ],
    [
        "I made soup from whatever was in the fridge.",
        "Brave. How did it turn out?",
        "Edible. Just about.",
    ],
    [
        "My phone screen cracked again.",
        "How?!",
        "It leapt out of my pocket. I think it wants to be free.",
    ],
    ["Any plans for the weekend?", "Absolutely none, and I'm thrilled about it."],
    ["I think I need a haircut, I look like a sheepdog.", "Ha, send a picture."],
    ["Traffic was a nightmare this morning.", "There was some parade, half the roads were closed."],
    [
        "I finally cleaned out my wardrobe.",
        "Find anything interesting?",
        "Three umbrellas and a ticket stub from 2015.",
    ],
    [
        "The cafe by my place changed their croissants and I'm in mourning.",
        "That's a genuine tragedy.",
    ],
    [
        "Have you been watching the baking competition?",
        "Yes! I can't believe the pastry guy went home.",
        "Robbed.",
    ],
    ["I'm so tired, I slept terribly.", "Same here. The neighbours were having a party."],
    [
        "I forgot my keys and had to wait for my flatmate for an hour.",
        "Classic. Where did you wait?",
        "In the laundrette, reading their notice board.",
    ],
    ["Quick question: do you still have my blue umbrella?", "Ha, maybe? I'll check."],
    [
        "I've started doing the crossword every morning.",
        "Any good at it?",
        "I get about four clues and then look up the answers.",
    ],
    [
        "There's a new bakery on my street, I've been three times this week.",
        "Research purposes, obviously.",
    ],
    [
        "My mum sent me a twelve-paragraph text about recycling.",
        "Ha, mine does the same about the weather.",
    ],
    ["The heating in my building broke again.", "Oh no, not again!"],
    [
        "I've been trying to cut down on screen time.",
        "How's that going?",
        "I'm typing this on my phone, so...",
    ],
    ["Did you watch the match?", "Only the second half. Ridiculous ending."],
    ["I got a parking ticket for being two minutes late.", "That's criminal."],
    [
        "My laptop decided to update in the middle of a meeting.",
        "Always at the worst possible moment.",
    ],
    ["Are you going to the street fair next weekend?", "Maybe! Depends on the weather."],
    ["I spent an hour choosing a new phone case.", "And?", "Went with plain black. As always."],
    ["The guy upstairs is moving furniture at midnight again.", "What is he building up there?"],
    [
        "I burnt the toast, set off the alarm and woke the whole building.",
        "Good morning to everyone, then.",
    ],
    ["I found twenty quid in an old jacket.", "Best feeling in the world."],
    ["Lunch today was a sad desk salad.", "The saddest of meals."],
    [
        "Have you been to the new museum downtown?",
        "Not yet, is it good?",
        "The dinosaur room alone is worth it.",
    ],
    [
        "I have a dentist appointment tomorrow and I'm dreading it.",
        "You'll be fine. Treat yourself after.",
    ],
    [
        "Someone on the bus was eating a whole rotisserie chicken.",
        "No way. At what time?",
        "Nine in the morning.",
    ],
    ["I accidentally liked a photo from 2016 while scrolling.", "Ha, the ultimate crime."],
    ["I need a holiday from my holiday plans.", "You need a nap, is what you need."],
    [
        "My flatmate labelled all the food in the fridge.",
        "Passive aggressive or organised?",
        "Both, somehow.",
    ],
    ["I tried a new recipe for lentil curry.", "And?", "Too much cumin. Way too much."],
    [
        "My internet has been down since yesterday.",
        "That explains the silence!",
        "I've been forced to talk to humans.",
    ],
    [
        "Are you watching that new sci-fi series everyone's talking about?",
        "I gave up after episode two, too confusing.",
        "Same! I thought it was just me.",
    ],
    ["The pigeons on my windowsill have built a nest.", "Congratulations, you're a landlord now."],
    ["I spent my whole Saturday doing laundry.", "Living the dream.", "Five loads. Five."],
    [
        "I went to a pub quiz last night and we came last.",
        "Ha! What was the worst round?",
        "Flags. We got zero flags.",
    ],
    [
        "Is it weird that I enjoy going to the supermarket late at night?",
        "Not at all. It's very peaceful.",
    ],
    ["My umbrella flipped inside out on the way in this morning.", "That wind is brutal."],
    [
        "I finally fixed the dripping tap in the bathroom.",
        "Look at you, handy!",
        "It took three videos and a lot of swearing.",
    ],
    [
        "Do you have any podcast recommendations?",
        "There's a great one about weird history, I'll send you the link.",
    ],
    ["I ate way too much pizza last night.", "No such thing.", "My stomach disagrees."],
    [
        "There was a fox in the street at six this morning.",
        "Urban wildlife! Did you get a photo?",
        "Too slow, as usual.",
    ],
    [
        "The lift in my building has been broken for a week.",
        "Which floor are you on again?",
        "Sixth. Send help.",
    ],
    [
        "I've been trying to read more before bed.",
        "How's that going?",
        "I fall asleep after two pages.",
    ],
    ["My sister keeps sending me memes at three in the morning.", "Does she ever sleep?"],
    [
        "I signed up for a newsletter by accident and now I get twelve emails a day.",
        "Unsubscribe! Be free!",
    ],
    [
        "The queue at the post office was out the door today.",
        "Is it always that bad?",
        "Only when I'm in a hurry.",
    ],
    [
        "I had the strangest dream about being late for an exam.",
        "The classic one! I still get that.",
    ],
    [
        "My coffee order got mixed up and I got someone's oat caramel thing.",
        "Was it good?",
        "Annoyingly, yes.",
    ],
    [
        "I've decided to finally learn how to iron properly.",
        "Ambitious.",
        "I burned one shirt so far.",
    ],
]


# --------------------------------------------------------------------------------------
# Conversation assembly
# --------------------------------------------------------------------------------------


def fits_hour(text: str, hour: int) -> bool:
    """Keep greetings plausible for the session's time of day."""
    low = text.lower()
    if "morning" in low:
        return hour < 12
    if "night" in low or "asleep" in low:
        return hour >= 20
    if "dinner" in low:
        return 16 <= hour < 21
    if "lunch" in low:
        return 11 <= hour < 15
    return True


def timely(conv: Conv, options: Sequence[str], hour: int) -> str:
    return conv.fresh([o for o in options if fits_hour(o, hour)])


def make_decks(rng: random.Random) -> dict[str, Deck]:
    return {
        "dog_breed": Deck(rng, DOG_BREEDS),
        "cat_breed": Deck(rng, CAT_BREEDS),
        "pet_name": Deck(rng, PET_NAMES),
        "pet_source": Deck(rng, PET_SOURCES),
        "old_job": Deck(rng, OLD_JOBS),
        "new_job": Deck(rng, NEW_JOBS),
        "dest": Deck(rng, sorted(DESTINATIONS)),
        "name_f": Deck(rng, SIDE_NAMES_F),
        "name_m": Deck(rng, SIDE_NAMES_M),
        "hobby": Deck(rng, HOBBIES),
        "teacher": Deck(rng, TEACHERS),
        "injury": Deck(rng, INJURIES),
        "therapist": Deck(rng, THERAPISTS),
        "city": Deck(rng, CITIES),
        "purchase": Deck(rng, PURCHASES),
        "org": Deck(rng, ORGS),
        "garden": Deck(rng, GARDENS),
        "race": Deck(rng, RACES),
        "trait": Deck(rng, TRAITS),
        "small_talk": Deck(rng, SMALL_TALK),
    }


def choose_arcs(conv: Conv, decks: dict[str, Deck]) -> list[Arc]:
    """Give each speaker 4-5 storylines and 1-2 traits, with at least two kinds in common.

    Shared kinds (both speakers adopt a pet, both travel...) create realistic
    same-topic distractors across the two people.
    """
    rng = conv.rng
    core = ["pet", "trip", "hobby", "job", "health", "purchase", "move"]
    shared = rng.sample(core, 2)
    by_kind: dict[str, list[type[Arc]]] = {}
    for cls in ARC_TYPES:
        by_kind.setdefault(cls.kind, []).append(cls)
    arcs: list[Arc] = []
    for person in (conv.a, conv.b):
        for _ in range(rng.randint(1, 2)):
            t = TraitArc(conv, person, decks)
            conv.traits.setdefault(person.name, []).append(t.trait)
            arcs.append(t)
        kinds = list(shared)
        others = [k for k in by_kind if k not in kinds]
        rng.shuffle(others)
        kinds += others[: rng.randint(2, 3)]
        for k in kinds:
            arcs.append(pick(rng, by_kind[k])(conv, person, decks))
    return arcs


def schedule(
    rng: random.Random, arcs: list[Arc], sessions: list[Sess]
) -> list[list[tuple[Arc, int]]]:
    """Spread each arc's stages over increasing sessions, keeping session loads even.

    Arcs learn their sessions up front so that plans ("we fly in March") can agree
    with when the event is later reported.
    """
    n_sessions = len(sessions)
    load = [0] * n_sessions
    plan: list[list[tuple[Arc, int]]] = [[] for _ in range(n_sessions)]
    order = list(arcs)
    rng.shuffle(order)
    order.sort(key=lambda a: -a.n_stages)
    for arc in order:
        best: list[int] | None = None
        best_cost = 0.0
        for _ in range(40):
            cand = sorted(rng.sample(range(n_sessions), arc.n_stages))
            cost = sum((load[i] + 1) ** 2 for i in cand) + rng.random()
            if best is None or cost < best_cost:
                best, best_cost = cand, cost
        assert best is not None
        for stage, si in enumerate(best):
            load[si] += 1
            plan[si].append((arc, stage))
        arc.stage_sess = [sessions[i] for i in best]
    return plan


def arrange(rng: random.Random, middle: list[Block], first_speaker_after: str) -> list[Block]:
    """Shuffle blocks, preferring an order in which speakers alternate at block boundaries."""
    pool = list(middle)
    rng.shuffle(pool)
    out: list[Block] = []
    last = first_speaker_after
    while pool:
        idx = next((i for i, b in enumerate(pool) if b.lines[0].speaker != last), 0)
        blk = pool.pop(idx)
        out.append(blk)
        last = blk.lines[-1].speaker
    return out


def draw_small_talk(deck: Deck, conv: Conv, room: int) -> list[str]:
    """A filler exchange that fits in ``room`` turns and is new to this conversation."""

    def unusable(talk: list[str]) -> bool:
        return len(talk) > room or talk[0] in conv.used

    talk: list[str] = deck.draw(unusable)
    conv.used.add(talk[0])
    return talk


def build_conversation(
    idx: int, rng: random.Random, decks: dict[str, Deck], a: Person, b: Person
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cid = f"c{idx}"
    conv = Conv(cid, rng, a, b)
    n_sessions = rng.randint(7, 10)
    tz = timezone(timedelta(hours=pick(rng, TIMEZONES)))
    day = date(2023, 1, 1) + timedelta(days=rng.randint(0, 330))
    sessions: list[Sess] = []
    gap = 30
    for i in range(n_sessions):
        when = datetime(
            day.year, day.month, day.day, rng.randint(8, 21), rng.randint(0, 59), tzinfo=tz
        )
        sessions.append(Sess(i, when, gap))
        gap = rng.randint(5, 32)
        day = day + timedelta(days=gap)

    arcs = choose_arcs(conv, decks)
    plan = schedule(rng, arcs, sessions)
    key_to_id: dict[str, str] = {}
    out_sessions: list[dict[str, Any]] = []
    for sess, items in zip(sessions, plan, strict=True):
        rng.shuffle(items)
        middle = [Block(arc.render(stage, sess), "stage") for arc, stage in items]
        # Echo entities from earlier sessions in non-informative turns (distractors).
        eligible = [
            m
            for m in conv.mentions
            if m.exchanges and m.from_session <= sess.index < m.until_session
        ]
        for m in rng.sample(eligible, min(len(eligible), rng.choice([0, 1, 1, 2]))):
            ask, reply = m.exchanges.pop(rng.randrange(len(m.exchanges)))
            middle.append(
                Block([Line(conv.other(m.owner).name, ask), Line(m.owner.name, reply)], "filler")
            )
        opener = pick(rng, [a, b])
        replier = conv.other(opener)
        fmt = {"x": opener.name, "y": replier.name, "weekday": WEEKDAYS[sess.day.weekday()]}
        hour = sess.when.hour
        hello = timely(conv, OPENERS, hour).format(**fmt)
        hello_reply = timely(conv, OPENER_REPLIES, hour).format(**fmt)
        greeting = Block([Line(opener.name, hello), Line(replier.name, hello_reply)], "greeting")
        closer = pick(rng, [a, b])
        bye = timely(conv, [c[0] for c in CLOSINGS], hour)
        bye_reply = timely(conv, dict(CLOSINGS)[bye], hour)
        closing = Block(
            [Line(closer.name, bye), Line(conv.other(closer).name, bye_reply)], "closing"
        )
        target = rng.randint(MIN_TURNS + 3, MAX_TURNS)
        used = sum(len(blk.lines) for blk in middle) + 4
        while used < target and MAX_TURNS - used >= 2:
            talk = draw_small_talk(decks["small_talk"], conv, MAX_TURNS - used)
            x = pick(rng, [a, b])
            y = conv.other(x)
            middle.append(
                Block([Line((x, y)[i % 2].name, t) for i, t in enumerate(talk)], "filler")
            )
            used += len(talk)
        blocks = [greeting, *arrange(rng, middle, replier.name), closing]
        lines = [ln for blk in blocks for ln in blk.lines]
        if len(lines) > MAX_TURNS:  # drop the closing reply, then the greeting reply
            lines = [ln for ln in lines if ln is not closing.lines[1]]
        if len(lines) > MAX_TURNS:
            lines = [ln for ln in lines if ln is not greeting.lines[1]]
        if not MIN_TURNS <= len(lines) <= MAX_TURNS:
            raise ValueError(f"{cid} session {sess.index + 1} has {len(lines)} turns")
        sid = f"{cid}_s{sess.index + 1}"
        turns = []
        for t_i, ln in enumerate(lines):
            tid = f"{sid}_t{t_i + 1}"
            if ln.key is not None:
                key_to_id[ln.key] = tid
            turns.append({"id": tid, "speaker": ln.speaker, "text": ln.text})
        out_sessions.append({"id": sid, "datetime": sess.when.isoformat(), "turns": turns})

    drafts = [d for arc in arcs for d in arc.questions() + arc.chain_questions()]
    drafts += cross_questions(conv, arcs)
    chosen = select_questions(rng, drafts)
    questions = []
    for n, d in enumerate(chosen, 1):
        questions.append(
            {
                "id": f"{cid}_q{n}",
                "conversation_id": cid,
                "question": d.question,
                "answer": d.answer,
                "evidence": sorted({key_to_id[k] for k in d.evidence}, key=turn_order),
                "category": d.category,
            }
        )
    conversation = {"id": cid, "speakers": [a.name, b.name], "sessions": out_sessions}
    return conversation, questions


def turn_order(tid: str) -> tuple[int, int]:
    _, s, t = tid.split("_")
    return int(s[1:]), int(t[1:])


CROSS = {
    "pet": ("What pets did {a} and {b} each adopt?", "Which animals did {a} and {b} bring home?"),
    "trip": (
        "Where did {a} and {b} each go on holiday?",
        "Which places did {a} and {b} travel to?",
    ),
    "hobby": (
        "What new hobbies did {a} and {b} each pick up?",
        "What activities did {a} and {b} start doing?",
    ),
    "job": (
        "What new jobs did {a} and {b} each start?",
        "What career changes did {a} and {b} make?",
    ),
}


def cross_questions(conv: Conv, arcs: list[Arc]) -> list[QDraft]:
    """Questions spanning two storylines: shared topics across speakers and event order."""
    rng = conv.rng
    out: list[QDraft] = []
    for kind, templates in CROSS.items():
        pa = [x for x in arcs if x.kind == kind and x.me == conv.a]
        pb = [x for x in arcs if x.kind == kind and x.me == conv.b]
        sum_a = pa[0].summary() if pa else None
        sum_b = pb[0].summary() if pb else None
        if sum_a and sum_b:
            sa, la = sum_a
            sb, lb = sum_b
            out.append(
                QDraft(
                    pick(rng, templates).format(a=conv.a.name, b=conv.b.name),
                    f"{conv.a.name} {sa}; {conv.b.name} {sb}",
                    [pa[0].keys[la], pb[0].keys[lb]],
                    "multi-hop",
                )
            )
    for person in (conv.a, conv.b):
        events = [
            (d, x.f(p), x.keys[lab]) for x in arcs if x.me == person for d, p, lab in x.milestones
        ]
        pairs = [
            (e1, e2)
            for i, e1 in enumerate(events)
            for e2 in events[i + 1 :]
            if abs((e1[0] - e2[0]).days) >= 5
        ]
        for e1, e2 in rng.sample(pairs, min(2, len(pairs))):
            first = e1 if e1[0] < e2[0] else e2
            shown = [e1, e2]
            rng.shuffle(shown)
            out.append(
                QDraft(
                    f"Which happened first for {person.name}: {shown[0][1]} or {shown[1][1]}?",
                    cap(first[1]),
                    [e1[2], e2[2]],
                    "temporal",
                )
            )
    return out


QUOTAS = {"single-hop": 0.40, "multi-hop": 0.22, "temporal": 0.22, "open-domain": 0.16}


def select_questions(rng: random.Random, drafts: list[QDraft]) -> list[QDraft]:
    """Subsample drafts to a category mix close to QUOTAS, at most one per near-duplicate group."""
    seen: set[str] = set()
    uniq: list[QDraft] = []
    pool = list(drafts)
    rng.shuffle(pool)
    for d in pool:
        g = d.group or d.question
        if g in seen:
            continue
        seen.add(g)
        uniq.append(d)
    total = min(len(uniq), rng.randint(36, MAX_QUESTIONS_PER_CONVERSATION - 4))
    chosen: list[QDraft] = []
    for cat, share in QUOTAS.items():
        chosen += [d for d in uniq if d.category == cat][: round(total * share)]
    rest = [d for d in uniq if d not in chosen]
    chosen += rest[: max(0, total - len(chosen))]
    order = {id(d): i for i, d in enumerate(drafts)}
    chosen.sort(key=lambda d: order[id(d)])
    return chosen


def generate(seed: int = SEED) -> dict[str, Any]:
    rng = random.Random(seed)
    decks = make_decks(rng)
    people = [Person(n, g) for n, g in PEOPLE]
    rng.shuffle(people)
    conversations, questions = [], []
    for i in range(N_CONVERSATIONS):
        conv, qs = build_conversation(i + 1, rng, decks, people[2 * i], people[2 * i + 1])
        conversations.append(conv)
        questions += qs
    return {
        "name": "convbench",
        "version": 1,
        "seed": seed,
        "conversations": conversations,
        "questions": questions,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--hard", action="store_true", help="write the hard variant (harden.py) instead"
    )
    parser.add_argument(
        "--long", action="store_true", help="write the long variant (harden.LONG) instead"
    )
    args = parser.parse_args(argv)
    data = generate(args.seed)
    if args.hard:
        data = harden(data, args.seed)
        if args.out == DEFAULT_OUT:
            args.out = HARD_OUT
    elif args.long:
        data = harden(data, args.seed, **LONG)
        if args.out == DEFAULT_OUT:
            args.out = LONG_OUT
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    n_turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
    print(
        f"wrote {args.out}: {len(data['conversations'])} conversations, "
        f"{n_turns} turns, {len(data['questions'])} questions"
    )


if __name__ == "__main__":
    main()
