"""``convbench-hard``: convbench rewritten where it is easy for a sentence model.

convbench's turns are short, one topic each, and its questions paraphrase them, so a dense
retriever does well and keyword search poorly. Real chats are the other way round as often:
people write long messages that wander between topics, talk around a subject many times
without saying anything new, and questions name the place, person or thing the answer turn
names. This pass rewrites a generated convbench dataset (same conversations, same evidence,
renumbered turn ids) in three ways, each seeded and deterministic:

* **asides**: about one turn in two gains a chit-chat sentence before or after them (every
  turn alike, evidence or not, so length says nothing about evidence);
* **talk around the topic**: each session gains a few turns of topic-adjacent small talk ("I
  really need a holiday", "the dog has been so clingy") that answer no question and pull a
  sentence model off target;
* **named context**: most questions whose evidence names something open with the rare name their evidence uses
  ("Speaking of Mexico City, what did Marcus enjoy most?"), never a word of the answer.

``python bench/quality/generate.py --hard`` writes ``data/convbench-hard.json``.

``convbench-long`` (``LONG``, ``generate.py --long``) is the same pass turned up until keyword
search is the strong signal, as on real chats: every turn of 5+ words gains three asides (long
messages that wander), each session 6-10 turns of talk around the topic, and every question
whose evidence names something opens with it. Dense retrieval trails BM25 there by about
0.08 recall@10, the way it trails on real multi-session chats.
"""

# Hand-written chat lines read better unbroken, so long lines are allowed here.
# ruff: noqa: E501

from __future__ import annotations

import random
import re
from typing import Any

NAME = "convbench-hard"
#: share of turns (of at least MIN_WORDS words) that gain an aside
ASIDE_SHARE = 0.5
MIN_WORDS = 5
#: extra small-talk turns per session
EXTRA_TURNS = (3, 6)
#: share of questions that name their evidence's rare entity
NAMED_SHARE = 0.8

ASIDES = [
    "It's been raining sideways here all week, by the way.",
    "Also I've been living on toast and cereal, don't judge me.",
    "Side note: the neighbours are renovating again and the drilling starts at eight.",
    "Anyway, I'm typing this on the bus so sorry for the typos.",
    "My phone is on four percent so this might be quick.",
    "Oh and I finally finished that enormous fantasy series, the ending was a mess.",
    "Random, but I found a tenner in my winter coat this morning.",
    "I've also somehow caught a cold, classic.",
    "Work is chaos, but when isn't it.",
    "Also the kettle broke so I'm boiling water in a saucepan like it's 1850.",
    "My landlord still hasn't fixed the boiler, so I'm wearing two jumpers.",
    "I keep meaning to call my aunt back, I'm a terrible niece and nephew rolled into one.",
    "Side note, I've been trying to drink more water and it's going badly.",
    "The supermarket near me has rearranged every aisle and I'm lost.",
    "I stayed up far too late watching videos of people restoring old furniture.",
    "Also I burnt the rice again, I don't know how.",
    "By the way, did you see the sky last night? It was ridiculous.",
    "My sister keeps sending me memes at 2am, it's a whole thing.",
    "Sorry if I'm slow to reply, the wifi has been dreadful.",
    "I've been obsessed with crosswords lately, it's becoming a problem.",
    "Anyway enough about that, the week has been long.",
    "Also my knee has been clicking on the stairs, I'm officially old.",
    "Not to change the subject but I need a new winter coat.",
    "Ugh and I have a dentist appointment on Friday.",
    "The train was cancelled again this morning, standard.",
    "Also I tried oat milk and I have opinions.",
    "I've been sleeping terribly, the heat is unbearable at night.",
    "My plants are dying, which feels symbolic.",
    "Also, the group chat is planning a picnic and nobody can agree on a date.",
    "Honestly I could sleep for a week.",
]

AROUND = [
    "I really need a holiday, somewhere warm with no emails.",
    "Everyone at work keeps talking about changing jobs, it's contagious.",
    "My cousin wants a puppy but she works twelve-hour shifts.",
    "Do you ever think about moving somewhere completely different?",
    "I keep saying I'll start a new hobby and then I just watch TV.",
    "I should really book a check-up, I haven't been to a doctor in ages.",
    "There's a wedding every weekend this summer, my wallet is crying.",
    "Prices for everything have gone mad lately, even coffee.",
    "My neighbour's cat sits on our windowsill and judges us.",
    "I've been looking at flights just to torture myself.",
    "Half my friends are running races now, what happened to brunch?",
    "I read an article about volunteering and felt very guilty.",
    "My mum keeps asking when I'm going to settle down.",
    "I've been thinking about getting fitter but it's so hard to start.",
    "The garden centre had a sale and I had to be dragged out.",
    "Someone at work brought their baby in and the whole office melted.",
    "I keep looking at houses online I could never afford.",
    "My friend just quit her job to travel, I'm so jealous.",
    "I've got so many half-finished projects lying around.",
    "The vet bills people talk about terrify me.",
    "My brother is thinking about retiring early, lucky him.",
    "I should learn to cook properly one of these days.",
    "I went to a dating app workshop thing once, never again.",
    "Everyone seems to be buying a new car at the same time.",
    "Our street is doing a charity bake sale, I've promised brownies.",
    "I'm trying to be better about texting people back.",
    "Honestly, this year has flown by.",
    "I keep meaning to get back into running.",
    "A colleague of mine just adopted a rescue dog and won't stop showing photos.",
    "Moving house is my idea of a nightmare, all those boxes.",
]

QUESTION_WORDS = {
    "What",
    "When",
    "Where",
    "Which",
    "Who",
    "Why",
    "How",
    "Would",
    "Is",
    "Did",
    "Does",
    "Could",
    "Has",
    "Was",
}
#: convbench-long: ``harden(data, seed, **LONG)``
LONG: dict[str, Any] = {
    "name": "convbench-long",
    "aside_share": 1.0,
    "asides": 3,
    "extra_turns": (6, 10),
    "named_share": 1.0,
}
OPENINGS = ["Speaking of {x}, ", "About {x}: ", "Going back to {x}, ", "Re {x}: "]

#: not names: a question opening "Speaking of June" would just be odd
CALENDAR = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "yesterday", "weekend", "morning", "tonight", "evening",
}  # fmt: skip
_CAPS = re.compile(r"\b([A-Z][a-z]+(?:[ -][A-Z][a-z]+)*)")
_SENTENCE = re.compile(r"(?<=[.!?:;…\"])\s+")
_WORD = re.compile(r"\w+")


def _stem(word: str) -> str:
    return word.lower().removesuffix("s")


def _entity(text: str, avoid: set[str]) -> str | None:
    """The first capitalised name in ``text`` sharing no word with ``avoid`` (a lone word
    opening a sentence is capitalised anyway, so it does not count)."""
    for sentence in _SENTENCE.split(text.strip()):
        for match in _CAPS.finditer(sentence):
            name = match.group(1)
            words = {_stem(w) for w in _WORD.findall(name)}
            if match.start() == 0 and len(words) == 1:
                continue
            if not words & (avoid | CALENDAR) and len(name) >= 4:
                return name
    return None


def _renumber(session: dict[str, Any], turns: list[tuple[str | None, str, str]]) -> dict[str, str]:
    """Lay ``turns`` (old id or None, speaker, text) into ``session``; old id -> new id."""
    mapping: dict[str, str] = {}
    out = []
    for i, (old, speaker, text) in enumerate(turns, 1):
        tid = f"{session['id']}_t{i}"
        if old is not None:
            mapping[old] = tid
        out.append({"id": tid, "speaker": speaker, "text": text})
    session["turns"] = out
    return mapping


def harden(
    data: dict[str, Any],
    seed: int,
    *,
    name: str = NAME,
    aside_share: float = ASIDE_SHARE,
    asides: int = 1,
    extra_turns: tuple[int, int] = EXTRA_TURNS,
    named_share: float = NAMED_SHARE,
) -> dict[str, Any]:
    """A hard twin of a generated convbench dataset (the input is not changed): a turn of
    ``MIN_WORDS`` or more gains ``asides`` asides with probability ``aside_share``."""
    rng = random.Random(seed * 7919 + 17)
    mapping: dict[str, str] = {}
    conversations = []
    for conv in data["conversations"]:
        speakers = list(conv["speakers"])
        sessions = []
        for session in conv["sessions"]:
            turns: list[tuple[str | None, str, str]] = []
            for turn in session["turns"]:
                text = turn["text"]
                if len(_WORD.findall(text)) >= MIN_WORDS and rng.random() < aside_share:
                    for _ in range(asides):
                        aside = rng.choice(ASIDES)
                        text = f"{aside} {text}" if rng.random() < 0.5 else f"{text} {aside}"
                turns.append((turn["id"], turn["speaker"], text))
            for _ in range(rng.randint(*extra_turns)):
                at = rng.randint(1, len(turns))  # never before the greeting
                turns.insert(at, (None, rng.choice(speakers), rng.choice(AROUND)))
            new = {"id": session["id"], "datetime": session["datetime"], "turns": []}
            mapping.update(_renumber(new, turns))
            sessions.append(new)
        conversations.append({"id": conv["id"], "speakers": speakers, "sessions": sessions})
    texts = {
        t["id"]: t["text"] for c in data["conversations"] for s in c["sessions"] for t in s["turns"]
    }
    names = {c["id"]: {s.lower() for s in c["speakers"]} for c in data["conversations"]}
    questions = []
    for q in data["questions"]:
        question = q["question"]
        if rng.random() < named_share:
            words = _WORD.findall(q["answer"]) + _WORD.findall(question)
            avoid = names[q["conversation_id"]] | {_stem(w) for w in words}
            found = next((e for t in q["evidence"] if (e := _entity(texts[t], avoid))), None)
            if found is not None:
                first, _, rest = question.partition(" ")
                if first in QUESTION_WORDS:
                    question = rng.choice(OPENINGS).format(x=found) + f"{first.lower()} {rest}"
        questions.append(
            {**q, "question": question, "evidence": [mapping[t] for t in q["evidence"]]}
        )
    return {**data, "name": name, "conversations": conversations, "questions": questions}
