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


# --------------------------------------------------------------------------------------
# Shared reactions
# --------------------------------------------------------------------------------------

POS = [
    "That's amazing!", "Oh wow, congrats!", "I love that for you.", "Yay, that's such good news.",
    "Okay, that made my day.", "That's so exciting!", "Look at you go!", "Ha, brilliant.",
    "Honestly, you deserve it.", "This is the best update I've had all week.",
]  # fmt: skip
NEG = [
    "Oh no, that's awful.", "Ugh, I'm so sorry.", "That sounds really rough.", "Oof. Hang in there.",
    "Yikes, that's stressful.", "Oh no! Poor you.", "That's the worst, I'm sorry.",
    "Sending you a big hug.",
]  # fmt: skip
LAUGH = [
    "Hahaha, I'm dying.", "Okay that's hilarious.", "LOL. Of course.", "Stop, I can picture it.",
    "Ha! That's so specific.", "I laughed out loud on the bus reading that.",
]  # fmt: skip


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


# --------------------------------------------------------------------------------------
# Pets
# --------------------------------------------------------------------------------------

DOG_BREEDS = [
    "beagle", "corgi", "greyhound", "border collie", "dachshund", "golden retriever", "whippet",
    "shiba inu", "boxer", "pug", "cocker spaniel", "lurcher", "schnauzer", "basset hound",
]  # fmt: skip
CAT_BREEDS = [
    "ginger tabby", "Siamese", "Maine Coon", "Russian Blue", "black-and-white tuxedo",
    "tortoiseshell", "Bengal", "calico", "grey Persian",
]  # fmt: skip
PET_NAMES = [
    "Biscuit", "Pepper", "Miso", "Juniper", "Otis", "Luna", "Waffles", "Noodle", "Clementine",
    "Hazel", "Ziggy", "Mochi", "Pickle", "Rufus", "Olive", "Bramble", "Tofu", "Pretzel",
    "Gus", "Marmalade", "Dobby", "Fig",
]  # fmt: skip
PET_SOURCES = [
    "the Riverside animal shelter", "a rescue charity called Second Chance Paws",
    "a neighbour who was moving abroad", "the city shelter on Fifth Street",
    "a farm just outside town", "a couple who were moving into a flat that didn't allow pets",
    "the Hope & Whiskers rescue", "my cousin's friend who fosters for a rescue",
]  # fmt: skip
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
    ("knocking pens off my desk at five in the morning", "It's a deliberate alarm clock."),
    ("only drinking from a dripping tap", "I bought a fancy water fountain and {pet_he} ignores it."),
    ("chasing light reflections on the ceiling for hours", "I've started wearing a watch just for it."),
    ("sitting on my keyboard during video calls", "My manager has met {pet_him} more than my parents."),
    ("bringing me a hair tie every morning", "I don't know where {pet_he} finds them all."),
]
DOG_VET = [
    ("kept shaking {pet_his} head and scratching one ear", "an ear infection",
     "drops twice a day for ten days, which {pet_he} hates"),
    ("started limping after the park", "a sprained paw",
     "strict rest for two weeks, no fetch, which is torture for both of us"),
    ("swallowed half a tea towel", "a partial blockage",
     "they kept {pet_him} overnight and luckily it passed without surgery"),
    ("stopped eating for two days", "a cracked tooth",
     "{pet_he} had the tooth pulled and is on soft food for a week"),
    ("got stung on the nose by a wasp and swelled up", "an allergic reaction",
     "an antihistamine shot and a very sorry-for-{pet_him}self evening"),
]  # fmt: skip
CAT_VET = [
    ("was sneezing nonstop", "a respiratory infection", "antibiotics hidden in {pet_his} food for a week"),
    ("hid under the bed and wouldn't eat", "a urinary infection", "a special prescription diet from now on"),
    ("was scratching {pet_his} neck raw", "a flea allergy", "a monthly flea treatment and a cone for a few days"),
    ("kept throwing up", "a hairball blockage", "a gross-smelling paste and a lot more brushing"),
]
DOG_TRICKS = [
    "learned to roll over on command", "passed {pet_his} puppy obedience class, top of the class obviously",
    "can now high-five for treats", "went to the beach for the first time and charged straight into the waves",
    "finally walks on the lead without pulling",
]  # fmt: skip
CAT_TRICKS = [
    "learned to high-five for treats", "walks on a harness now, sort of",
    "finally let my flatmate stroke {pet_him}", "comes running when I whistle, like a dog",
]  # fmt: skip


class PetArc(Arc):
    kind = "pet"

    def setup(self) -> None:
        self.n_stages = self.rng.choice([3, 3, 4])
        self.dog = self.rng.random() < 0.6
        species = "dog" if self.dog else "cat"
        breed = self.draw("dog_breed" if self.dog else "cat_breed")
        pet_f = self.rng.random() < 0.5
        if self.dog:
            pre, post = pick(self.rng, [("", " puppy"), ("two-year-old ", ""), ("five-year-old ", ""), ("scruffy little ", "")])
        else:
            pre, post = pick(self.rng, [("", " kitten"), ("three-year-old ", " cat"), ("shy ", " cat")])
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
        self.when = past_when(self.rng, s.day)
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
            ["How's {pet} doing, by the way?", "Give {pet} a scratch behind the ears from me!",
             "Is {pet} still keeping you up at night?", "Did you bring {pet} to the park this weekend?"],
            ["Ha, {pet_he}'s thriving. Spoiled rotten.", "Will do, {pet_he}'ll be thrilled.",
             "Same as ever, honestly.", "Not this time, it was pouring."],
        )  # fmt: skip
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(self.you_say(["How is {pet} settling in?", "Wait, how's the new {species}?", "Any {pet} news?"]))
        out.append(
            self.me_says(
                [
                    "{Pet_he}'s great, but {pet_he} has developed this habit of {quirk}. {quirk_story}",
                    "Honestly {pet} is a character. {Pet_he} keeps {quirk}. {quirk_story}",
                    "The latest thing is {quirk}. {quirk_story} I don't know who raised {pet_him}. Oh wait, me.",
                ],
                "quirk",
            )
        )
        out.append(self.you_say(LAUGH))
        if self.maybe(0.5):
            out.append(self.me_says(["The vet says it's normal, apparently.", "I'm choosing to find it charming.", "I've given up fighting it."]))
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
            self.you_say(["Oh no, poor baby. Is {pet_he} okay now?", "Oh no! What did they do for {pet_him}?", *NEG]),
            self.me_says(
                ["{treatment_cap}. {Pet_he}'s already bouncing back.", "The plan is {treatment}. Fingers crossed.",
                 "{treatment_cap}, and a lot of cuddles."],
                "treat",
                treatment_cap=cap(self.v["treatment"]),
            ),
        ]  # fmt: skip
        self.milestones.append((s.day, "taking {pet} to the vet", "vet"))
        return out

    def stage_3(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                ["Proud {species} parent moment: {pet} {trick}!", "Small win to report: {pet} {trick}.",
                 "You'll never believe it, {pet} {trick}."],
                "trick",
            ),
            self.you_say(["No way, what a clever {species}!", "Genius. Absolute genius.", *POS]),
        ]  # fmt: skip

    def questions(self) -> list[QDraft]:
        qs = [
            self.q("single-hop", ["What breed is {name}'s {species}?", "What kind of {species} did {name} adopt?"],
                   "A {breed}", ["adopt"]),
            self.q("single-hop", ["Where did {name} get {pet} from?", "Where did {name} find {his} new pet?"],
                   "From {source}", ["source"]),
            self.q("temporal", ["When did {name} adopt {pet}?", "When did {name} bring {his} {species} home?"],
                   self.when.answer, ["adopt"]),
            self.q("single-hop", ["What funny habit does {name}'s {species} have?", "What odd thing does {pet} keep doing?"],
                   "{Pet_he} keeps {quirk}", ["quirk"]),
            self.q("multi-hop", ["What did the vet find wrong with {name}'s {breed}?",
                                 "What health problem did {name}'s {breed} have?"],
                   "{diagnosis_cap}", ["adopt", "vet"], diagnosis_cap=cap(self.v["diagnosis"])),
            self.q("single-hop", ["How was {pet} treated after the vet visit?", "What was the treatment plan for {name}'s pet?"],
                   "{treatment_cap}", ["treat"], treatment_cap=cap(self.v["treatment"])),
            self.q("temporal", "How long after adopting {pet} did {name} have to take {pet_him} to the vet?",
                   cap(gap_phrase(self.when.day, self.vet_day)), ["adopt", "vet"]),
            self.q("open-domain", ["Would {name} need a pet sitter if {he} went away for a week?",
                                   "Is {name} likely to own pet supplies like a lead or a litter box?"],
                   "Yes; {he} has a {species}, {pet}", ["adopt"]),
        ]  # fmt: skip
        if "trick" in self.keys:
            qs.append(self.q("single-hop", ["What new skill did {name}'s {species} show off?", "What did {pet} manage to do recently?"],
                             "{Pet_he} {trick}", ["trick"]))  # fmt: skip
        return qs

    def summary(self) -> tuple[str, str]:
        return self.f("a {breed} named {pet}"), "adopt"


# --------------------------------------------------------------------------------------
# Jobs (a fact that changes over time)
# --------------------------------------------------------------------------------------

OLD_JOBS = [
    {"old_role": "line cook", "old_emp": "Rosetti's Trattoria",
     "complaint": "the head chef threw a pan at the wall again and we didn't close until 1 a.m.",
     "short": "brutal hours and an aggressive head chef", "reason": "I'm done with finishing at midnight."},
    {"old_role": "paralegal", "old_emp": "Hartley & Stone",
     "complaint": "I spent my whole weekend formatting exhibits that a partner didn't even read",
     "short": "weekend work nobody appreciated", "reason": "I want to be someone who goes home at six."},
    {"old_role": "bank teller", "old_emp": "First Coastal Bank",
     "complaint": "a customer shouted at me for twenty minutes about a fee I don't even set",
     "short": "abusive customers and no support", "reason": "I can't do another year behind that glass."},
    {"old_role": "warehouse shift supervisor", "old_emp": "Brightway Logistics",
     "complaint": "it's night shifts again all month and I haven't seen the sun since Tuesday",
     "short": "endless night shifts", "reason": "My sleep is completely wrecked."},
    {"old_role": "junior accountant", "old_emp": "Delmar & Co",
     "complaint": "quarter-end close means living in spreadsheets until eleven every night",
     "short": "crushing overtime", "reason": "Numbers are fine, but not eighty hours a week of them."},
    {"old_role": "cafe shift manager", "old_emp": "the Copper Kettle",
     "complaint": "two people called in sick and I ran the espresso machine alone for six hours",
     "short": "chronic understaffing", "reason": "The owner keeps promising more staff and never hires anyone."},
    {"old_role": "call-centre agent", "old_emp": "Telvio",
     "complaint": "eighty calls in one shift and the script won't let me actually fix anything",
     "short": "a soul-destroying call quota", "reason": "I want a job where I build something."},
    {"old_role": "sales assistant", "old_emp": "Halden Outdoor",
     "complaint": "they changed my rota three times this week without asking",
     "short": "chaotic scheduling", "reason": "I need a life I can actually plan."},
    {"old_role": "dental receptionist", "old_emp": "Brightsmile Dental",
     "complaint": "the booking system crashed and I had forty angry patients in the waiting room",
     "short": "constant chaos at the front desk", "reason": "I've wanted out for a year, honestly."},
]  # fmt: skip
NEW_JOBS = [
    {"new_role": "UX designer", "new_emp": "Nordlight Studio", "field": "design",
     "perk": "the office has a rooftop terrace and everyone eats lunch together",
     "project": "the redesign of a banking app"},
    {"new_role": "data analyst", "new_emp": "Greenleaf Health", "field": "data",
     "perk": "my manager actually blocks out focus time for us and nobody books meetings on Fridays",
     "project": "a dashboard tracking emergency-room wait times"},
    {"new_role": "teaching assistant", "new_emp": "Willow Creek Primary", "field": "education",
     "perk": "the kids drew me a welcome card, I nearly cried",
     "project": "running the after-school science club"},
    {"new_role": "project coordinator", "new_emp": "Arclight Energy", "field": "renewable energy",
     "perk": "I get every other Friday off",
     "project": "the planning for an offshore wind farm"},
    {"new_role": "junior web developer", "new_emp": "Pixelforge", "field": "coding",
     "perk": "I can work from home three days a week",
     "project": "rebuilding the checkout page for a big furniture shop"},
    {"new_role": "park ranger", "new_emp": "Cedar Hollow State Park", "field": "conservation",
     "perk": "my office is literally a forest",
     "project": "a new trail for wheelchair users"},
    {"new_role": "lab technician", "new_emp": "Halcyon Biotech", "field": "science",
     "perk": "the lab has a window and I'm home by five thirty",
     "project": "testing samples for a vaccine trial"},
    {"new_role": "bookshop manager", "new_emp": "Paper Lantern Books", "field": "books",
     "perk": "I get to pick the staff recommendations shelf",
     "project": "a monthly author-reading night"},
    {"new_role": "physiotherapy assistant", "new_emp": "Eastside Rehab Clinic", "field": "healthcare",
     "perk": "patients are genuinely grateful, which is a new feeling",
     "project": "a balance class for older patients"},
]  # fmt: skip


class JobArc(Arc):
    kind = "job"

    def setup(self) -> None:
        self.n_stages = self.rng.choice([3, 4])
        self.v.update(self.draw("old_job"))
        self.v.update(self.draw("new_job"))

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
                ["That sounds exhausting. Have you thought about leaving?", "Honestly, they don't deserve you.",
                 "Ugh, {old_emp} sounds like a nightmare. What would you do instead?"]
            ),
        ]  # fmt: skip
        if self.maybe(0.7):
            out.append(
                self.me_says(
                    ["I've been quietly looking at jobs in {field}. I did an online course last year and loved it.",
                     "Between us, I've been applying for {field} jobs at night. Nothing yet."],
                    "hope",
                )
            )  # fmt: skip
        self.mention(
            s,
            ["How are things at work these days?", "Is {old_emp} still driving you up the wall?"],
            ["Same old, same old.", "Let's not talk about it, ha."],
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        self.quit_when = past_when(self.rng, s.day)
        out = []
        if self.maybe(0.5):
            out.append(self.you_say(["Any news on the job front?", "So... are you still at {old_emp}?"]))
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
                ["I've got a second-round interview at {new_emp} for a {new_role} role. Fingers crossed.",
                 "There's a {new_role} opening at {new_emp} and they want me to come in for an interview."],
                "interview",
            ),
        ]  # fmt: skip
        self.milestones.append((self.quit_when.day, "quitting {old_emp}", "quit"))
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        out = []
        if self.maybe(0.5):
            out.append(self.you_say(["How did the interview at {new_emp} go??", "Did you hear back from {new_emp}?"]))
        out += [
            self.me_says(
                ["I got it! Just finished my first week as a {new_role}. My brain is full.",
                 "Officially a {new_role} now! First week done and nobody has shouted at me once.",
                 "Week one as a {new_role}: survived. I think I'm going to love it."],
                "new",
            ),
            self.you_say(["Look at you!", "I knew you'd get it.", *POS]),
            self.me_says(["Best part: {perk}.", "And {perk}. I could get used to this."], "perk"),
        ]  # fmt: skip
        self.start_day = s.day
        self.mention(
            s,
            ["How's the new job treating you?", "Still enjoying {new_emp}?"],
            ["Really well, thanks for asking!", "So far so good, touch wood."],
        )
        return out

    def stage_3(self, s: Sess) -> list[Line]:
        return [
            self.me_says(
                ["They already trust me with {project}, which is terrifying and great.",
                 "My manager put me on {project}. Two months in!"],
                "project",
            ),
            self.you_say(["That's a big deal!", "Wow, they clearly rate you."]),
        ]

    def questions(self) -> list[QDraft]:
        qs = [
            self.q("single-hop", ["What did {name} do at {old_emp}?", "What was {name}'s role at {his} old workplace?"],
                   "{old_role_cap}", ["old"], old_role_cap=cap(self.v["old_role"])),
            self.q("temporal", ["When did {name} resign from {old_emp}?", "When did {name} quit {his} old job?"],
                   self.quit_when.answer, ["quit"]),
            self.q("single-hop", "Why did {name} leave {his} job?", "{reason}", ["quit"]),
            self.q("multi-hop", ["Where does {name} work now?", "Which company did {name} join after leaving {old_emp}?"],
                   "{new_emp}, as a {new_role}", ["interview", "new"]),
            self.q("multi-hop", "What did {name} do for a living before becoming a {new_role}?",
                   "{He} was a {old_role} at {old_emp}", ["old", "new"]),
            self.q("single-hop", ["What does {name} like about {his} new workplace?", "What perk does {name}'s new job have?"],
                   "{perk_cap}", ["perk"], perk_cap=cap(self.v["perk"])),
            self.q("open-domain", "Would {name} recommend {old_emp} as an employer to a friend?",
                   "Probably not; {he} complained about {short}", ["old"]),
        ]  # fmt: skip
        if "hope" in self.keys:
            qs.append(self.q("single-hop", "What field was {name} hoping to move into?", "{field_cap}", ["hope"],
                             field_cap=cap(self.v["field"])))  # fmt: skip
        if "project" in self.keys:
            qs.append(self.q("multi-hop", "What project is {name} working on at {new_emp}?", "{project_cap}",
                             ["interview", "project"], project_cap=cap(self.v["project"])))  # fmt: skip
        return qs

    def summary(self) -> tuple[str, str]:
        return self.f("became a {new_role}"), "new"


# --------------------------------------------------------------------------------------
# Trips (plans that sometimes change)
# --------------------------------------------------------------------------------------

# name -> (activities with a trait tag, foods, souvenirs)
DESTINATIONS: dict[str, tuple[list[tuple[str, str]], list[str], list[str]]] = {
    "Kyoto": ([("walking through the bamboo grove at sunrise before the crowds", "outdoors"),
               ("a tea ceremony in a tiny wooden house", "culture")],
              ["matcha soft-serve, which I had every single day", "ramen at a counter with eight seats"],
              ["a hand-painted tea cup", "a little wooden fox charm"]),
    "Lisbon": ([("riding the old yellow tram up to the castle", "culture"),
                ("a fado night in a tiny bar in Alfama", "culture")],
               ["custard tarts still warm from the oven", "grilled sardines at a street festival"],
               ["a set of blue painted tiles", "a tin of fancy sardines"]),
    "Reykjavik": ([("snorkelling between two tectonic plates in freezing water", "adrenaline"),
                   ("watching the northern lights from a hot spring", "outdoors")],
                  ["lamb soup that fixed my soul", "a hot dog from the famous stand by the harbour"],
                  ["a chunky wool sweater", "a bag of black lava salt"]),
    "Mexico City": ([("a hot-air balloon ride over the pyramids at Teotihuacan", "adrenaline"),
                     ("the Frida Kahlo museum", "culture")],
                    ["tacos al pastor from a street stand at one in the morning", "mole negro"],
                    ["a hand-woven rug", "a little clay mezcal cup"]),
    "Edinburgh": ([("hiking up Arthur's Seat in a gale", "outdoors"),
                   ("a ghost tour in the underground vaults", "culture")],
                  ["haggis, which I loved, sorry", "a proper afternoon tea"],
                  ["a tartan scarf", "a bottle of peaty whisky"]),
    "Cape Town": ([("hiking up Table Mountain", "outdoors"),
                   ("cage diving with sharks", "adrenaline")],
                  ["fresh fish and chips on the harbour", "bobotie at a family-run place"],
                  ["a beaded bracelet", "a bag of rooibos tea"]),
    "Vancouver": ([("kayaking around False Creek", "outdoors"),
                   ("crossing a wobbly suspension bridge in the rainforest", "adrenaline")],
                  ["absurdly good sushi", "poutine at two in the morning"],
                  ["a bottle of maple syrup", "a carved cedar bookmark"]),
    "Hanoi": ([("a motorbike food tour through the Old Quarter", "adrenaline"),
               ("a boat trip around Ha Long Bay", "outdoors")],
              ["egg coffee, which sounds wrong but is amazing", "bun cha from a plastic-stool stall"],
              ["a silk scarf", "a bag of Vietnamese coffee"]),
    "Seville": ([("watching flamenco in a candlelit courtyard", "culture"),
                 ("wandering the gardens of the Alcazar", "culture")],
                ["a tapas crawl that lasted five hours", "cold salmorejo on a hot afternoon"],
                ["a painted fan", "a bottle of local olive oil"]),
    "Marrakech": ([("a night in a desert camp under the stars", "outdoors"),
                   ("getting lost in the souks for an entire afternoon", "culture")],
                  ["lamb tagine with apricots", "mint tea, about a litre a day"],
                  ["a leather bag", "a tin of ras el hanout"]),
    "Dubrovnik": ([("kayaking around the old city walls", "outdoors"),
                   ("cliff jumping into the sea", "adrenaline")],
                  ["black risotto", "oysters straight from the bay"],
                  ["a lavender sachet", "a coral-red necklace"]),
    "Buenos Aires": ([("a tango lesson in a dance hall", "culture"),
                      ("a bike tour through La Boca", "outdoors")],
                     ["a steak the size of my head", "empanadas from a corner bakery"],
                     ["a mate gourd", "a jar of dulce de leche"]),
    "Crete": ([("hiking the Samaria Gorge", "outdoors"),
               ("the ruins at Knossos", "culture")],
              ["dakos salad and too much feta", "grilled octopus by the harbour"],
              ["a jar of thyme honey", "a little ceramic jug"]),
}  # fmt: skip
COMPANIONS = [
    ("my sister {x}", "{His} sister {x}"), ("my brother {x}", "{His} brother {x}"),
    ("my old college roommate {x}", "{His} college roommate {x}"), ("my partner {x}", "{His} partner {x}"),
    ("my best friend {x}", "{His} best friend {x}"), ("my cousin {x}", "{His} cousin {x}"),
    ("my dad", "{His} dad"), ("my mum", "{His} mum"),
]  # fmt: skip
SIDE_NAMES = [
    "Anna", "Ben", "Carla", "Dev", "Eli", "Fatima", "Gabe", "Hugo", "Iris", "Jade", "Kai", "Leila",
    "Mateo", "Nina", "Owen", "Paula", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Victor", "Wes", "Yara",
    "Zoe", "Ruth", "Ahmed", "Bea", "Caleb", "Dana", "Emeka", "Freya",
]  # fmt: skip
CHANGE_REASONS = [
    "Flights to {dest1} doubled in price overnight, so we pivoted.",
    "There's a big strike at the airport in {dest1} that week.",
    "Our hotel in {dest1} cancelled on us, and honestly it felt like a sign.",
    "{comp_first} found an unbelievable last-minute deal, so we changed everything.",
]  # fmt: skip
OD_TRIP = {
    "outdoors": ("Would {name} enjoy a weekend of hiking and camping?", "Likely yes; the highlight of {his} trip was {activity}"),
    "culture": ("Would {name} be interested in a guided history and arts tour?", "Likely yes; {he} loved {activity}"),
    "adrenaline": ("Is {name} the kind of person who might try bungee jumping?", "Probably; the highlight of {his} trip was {activity}"),
}  # fmt: skip


class TripArc(Arc):
    kind = "trip"

    def setup(self) -> None:
        self.changed = self.rng.random() < 0.5
        self.n_stages = 3
        d1 = self.draw("dest")
        d2 = self.draw("dest") if self.changed else d1
        comp, comp_q = pick(self.rng, COMPANIONS)
        x = self.draw("side_name")
        acts, foods, souvs = DESTINATIONS[d2]
        activity, self.tag = pick(self.rng, acts)
        self.v.update(dest1=d1, dest=d2, comp=comp.format(x=x), comp_first=x if "{x}" in comp else comp[3:].capitalize())
        self.v["comp_q"] = comp_q.format(x=x, His=self.me.his.capitalize())
        self.v["comp_short"] = x if "{x}" in comp else self.me.his + " " + comp[3:]
        self.v.update(activity=activity, food=pick(self.rng, foods), souvenir=pick(self.rng, souvs))
        self.v["change_reason"] = self.f(pick(self.rng, CHANGE_REASONS))
        self.v["wish"] = pick(self.rng, [a for a, _ in acts if a != activity] or [activity])

    def stage_0(self, s: Sess) -> list[Line]:
        self.plan_when = future_when(self.rng, s.day)
        out = [
            self.me_says(
                [
                    "{comp_cap} and I are finally doing a proper trip: {dest1}, {w}! I can't stop looking at maps.",
                    "Guess who just booked flights to {dest1} for {w}? Me and {comp}!",
                    "Okay so {comp} talked me into it: we're going to {dest1} {w}.",
                ],
                "plan",
                w=self.plan_when.phrase,
                comp_cap=cap(self.v["comp"]),
            ),
            self.you_say(
                ["Oh I've always wanted to go to {dest1}! Send me everything.", "Jealous!! How long are you going for?",
                 "{dest1}! Amazing. Have you sorted where you're staying?"]
            ),
            self.me_says(["Ten days. Hotel still to sort, but flights are done.", "Just over a week, which already feels too short.",
                          "Flights yes, accommodation no. Classic us."]),
        ]  # fmt: skip
        self.mention(
            s,
            ["Still counting down to the trip?", "Bought any travel guides yet?"],
            ["Every single day, ha.", "Three, which is two too many."],
        )
        return out

    def stage_1(self, s: Sess) -> list[Line]:
        if self.changed:
            out = [
                self.me_says(
                    ["Plot twist with the trip: we're going to {dest} instead. {change_reason}",
                     "So the trip changed. New destination: {dest}! {change_reason}",
                     "Update: scrapped the original plan, it's {dest} now. {change_reason}"],
                    "change",
                ),
                self.you_say(["Honestly, {dest} might be even better.", "Ha, chaotic. But {dest} sounds amazing.",
                              "Wait, {dest}? Love that."]),
            ]  # fmt: skip
        else:
            out = [
                self.you_say(["Is the {dest} trip coming up soon?", "When do you leave for {dest}?"]),
                self.me_says(["Soon! The one thing I refuse to miss is {wish}.",
                              "Very soon. Top of my list is {wish}, {comp_short} already booked it."], "wish"),
                self.you_say(["That sounds magical.", "Okay, now I'm even more jealous."]),
            ]  # fmt: skip
        return out

    def stage_2(self, s: Sess) -> list[Line]:
        self.back = past_when(self.rng, s.day, allow_today=False)
        out = []
        if self.maybe(0.5):
            out.append(self.you_say(["Welcome back!! How was {dest}?", "You're back! Tell me everything about {dest}."]))
            out.append(
                self.me_says(
                    ["We got back {w} and I'm still dreaming about it. The highlight was {activity}.",
                     "Landed {w}. Best bit by far was {activity}."],
                    "back",
                    w=self.back.phrase,
                )
            )  # fmt: skip
        else:
            out.append(
                self.me_says(
                    ["Back from {dest}! We landed {w}, and the highlight was {activity}.",
                     "Got home from {dest} {w}. I'll never forget {activity}."],
                    "back",
                    w=self.back.phrase,
                )
            )  # fmt: skip
        out += [
            self.you_say(["And the food?", "Okay but what did you eat?", "Did you eat well?"]),
            self.me_says(["Don't get me started. {food_cap}.", "The food! {food_cap}. I miss it already."], "food",
                         food_cap=cap(self.v["food"])),
        ]  # fmt: skip
        if self.maybe(0.6):
            out.append(self.me_says(["Also I brought back {souvenir} for the flat.", "I got {souvenir} as a souvenir, it's on my shelf now."], "souvenir"))
        self.milestones.append((self.back.day, "the trip to {dest}", "back"))
        return out

    def questions(self) -> list[QDraft]:
        qs = [
            self.q("single-hop", ["Who did {name} travel with?", "Who went on the holiday with {name}?"],
                   "{comp_q}", ["plan"]),
            self.q("single-hop", ["What was the best part of {name}'s trip to {dest}?", "What did {name} enjoy most on {his} holiday?"],
                   "{activity_cap}", ["back"], activity_cap=cap(self.v["activity"])),
            self.q("temporal", ["When did {name} get back from {dest}?", "When did {name} return from {his} trip?"],
                   self.back.answer, ["back"]),
            self.q("single-hop", ["What food did {name} rave about after the trip?", "What did {name} love eating while away?"],
                   "{food_cap}", ["food"], food_cap=cap(self.v["food"])),
            self.q("open-domain", OD_TRIP[self.tag][0], OD_TRIP[self.tag][1], ["back"]),
            self.q("temporal", "When did {name} first say the trip with {comp_short} would happen?",
                   self.plan_when.answer, ["plan"]),
        ]  # fmt: skip
        if self.changed:
            qs += [
                self.q("multi-hop", ["Where did {name} end up going with {comp_short}?",
                                     "Which city did {name} and {comp_short} actually visit?"],
                       "{dest} (instead of {dest1})", ["plan", "change"]),
                self.q("single-hop", "Why did {name} change {his} travel plans?", "{change_reason}", ["change"]),
                self.q("single-hop", "Where was {name} originally planning to travel?", "{dest1}", ["plan"]),
            ]  # fmt: skip
        else:
            qs.append(self.q("single-hop", "What was {name} most looking forward to doing on the trip?", "{wish_cap}",
                             ["wish"], wish_cap=cap(self.v["wish"])))  # fmt: skip
        if "souvenir" in self.keys:
            qs.append(self.q("multi-hop", "What souvenir did {name} bring home from {dest}?", "{souvenir_cap}",
                             ["back", "souvenir"], souvenir_cap=cap(self.v["souvenir"])))  # fmt: skip
        return qs

    def summary(self) -> tuple[str, str]:
        return self.f("went to {dest}"), "back"


