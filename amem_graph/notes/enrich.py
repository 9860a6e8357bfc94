"""Note construction: keywords, tags and a one-line context for every new memory.

With a chat model the note is the model's (``NoteAnswer``); without one, or when the model's
answers stay malformed, it is built offline and deterministically:

* keywords are the memory's terms weighted by BM25's idf over the *store's own vocabulary*
  (document frequencies in the memory's scope), boosted for named entities (capitalised words
  that do not open a sentence, and capitalised runs like "Maya Lopez") and technical tokens
  ("ops-eu", "deploy.sh", "812");
* tags come from a configurable vocabulary (``NotesConfig.tag_vocabulary``): a tag applies
  when one of its words occurs (compared as stems);
* the context says what kind of note it is, by whom, and about which keywords.

What the caller gave (``keywords``, ``tags``, ``context``) is never replaced: the note lives
in ``note_keywords`` / ``note_tags`` / ``note_context`` and repeats none of the caller's terms.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from amem_graph.core.config import NotesConfig
from amem_graph.core.text import STOP_WORDS, analyze, stem
from amem_graph.core.versions import NoteState
from amem_graph.notes.llm import NoteLLM
from amem_graph.notes.prompts import ENRICH_SYSTEM, NoteAnswer, enrich_prompt
from amem_graph.stores.base import GraphStore, MemoryFilter

_COMMON = """i me my mine we us our you your yours he him his she her hers its them they their what
    which who whom when where why how all any both each few more most other some so than too
    very just can could would should shall may might must do does did done doing have has had
    having been being am were here also about after again against before below between
    during from further once only over own same through under until up down out off above
    yes yeah oh ok okay hey hi hello thanks thank really well get got gets getting go goes
    going gone make made makes one two lot lots thing things something anything everything
    nothing much many even still always never ever now then today know think thought feel
    felt said say says told tell see seen saw look looking like want wanted need needed
    sure great good nice cool awesome amazing wow totally definitely glad happy let lets
    use used uses using every another such which whose while because though although yet
    it's i'm i've you're that's don't can't didn't isn't wasn't won't"""
#: words too common in conversation and notes to be anyone's keyword
NOTE_STOP = STOP_WORDS | frozenset(_COMMON.split())
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-./']*[A-Za-z0-9]|[A-Za-z0-9]")
_SENTENCE_END = re.compile(r"[.!?]\s*$")
_ENTITY_BOOST = 1.5
_TECH_BOOST = 1.3


_TECH_MARKS = frozenset("-./_")


def _is_technical(token: str) -> bool:
    return not _TECH_MARKS.isdisjoint(token) or any(map(str.isdigit, token))


class Vocabulary:
    """Document frequencies of analysed terms per scope: the store's own, read once per scope,
    then kept current with every memory this process writes."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._df: dict[str, Counter[str]] = {}
        self._n: dict[str, int] = {}
        self._lock = threading.Lock()

    def _load(self, scope: str) -> None:
        if scope in self._df:
            return
        df: Counter[str] = Counter()
        found = self.store.find_memories(MemoryFilter(scopes=(scope,), statuses=None))
        for memory in found:
            df.update(set(analyze(memory.content)))
        self._df[scope], self._n[scope] = df, len(found)

    def add(self, scope: str, content: str) -> None:
        """Count one more document in ``scope``."""
        with self._lock:
            self._load(scope)
            self._df[scope].update(set(analyze(content)))
            self._n[scope] += 1

    def idf(self, scope: str, terms: Sequence[str]) -> dict[str, float]:
        """BM25's idf of each term in ``scope`` (a term never seen counts as rare)."""
        with self._lock:
            self._load(scope)
            df, n = self._df[scope], self._n[scope]
            return {t: math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}


@dataclass(frozen=True)
class Draft:
    """What note construction reads of a memory being written."""

    content: str
    scope: str
    kind: str
    agent: str | None
    keywords: Sequence[str] = ()
    tags: Sequence[str] = ()


def _candidates(content: str) -> list[tuple[str, str, bool]]:
    """(surface form, stem, is entity) for each keyword candidate, in text order."""
    out: list[tuple[str, str, bool]] = []
    run: list[str] = []
    sentence_start = True
    end = 0
    for match in _TOKEN.finditer(content):
        token = match.group(0).strip("'")
        # a token ends in a letter or digit, so a sentence's end lies between the previous
        # token and this one: the gap alone is searched (the whole prefix made it quadratic)
        opens = sentence_start or bool(_SENTENCE_END.search(content, end, match.start()))
        end = match.end()
        sentence_start = False
        lower = token.lower()
        capital = (token[:1].isupper() and not token.isupper()) or (
            token.isupper() and len(token) > 1
        )
        if capital and not opens and lower not in NOTE_STOP:
            run.append(token)
            continue
        if len(run) > 1:
            out.append((" ".join(run), " ".join(stem(w.lower()) for w in run), True))
        elif run:
            out.append((run[0], stem(run[0].lower()), True))
        run = []
        if lower in NOTE_STOP or (len(lower) < 3 and not lower.isdigit()):
            continue
        out.append((token if _is_technical(token) else lower, stem(lower), False))
    if len(run) > 1:
        out.append((" ".join(run), " ".join(stem(w.lower()) for w in run), True))
    elif run:
        out.append((run[0], stem(run[0].lower()), True))
    return out


def offline_keywords(draft: Draft, vocabulary: Vocabulary, limit: int) -> list[str]:
    """The ``limit`` best keywords of ``draft`` by tf x idf (x entity and technical boosts)."""
    found = _candidates(draft.content)
    if not found or limit == 0:
        return []
    stems = sorted({s for _, s, _ in found})
    idf = vocabulary.idf(draft.scope, [t for s in stems for t in s.split()])
    tf = Counter(s for _, s, _ in found)
    best: dict[str, tuple[float, int, str]] = {}
    for position, (surface, key, entity) in enumerate(found):
        weight = max(idf[t] for t in key.split()) * (1.0 + math.log(tf[key]))
        if entity:
            weight *= _ENTITY_BOOST
        elif _is_technical(surface):
            weight *= _TECH_BOOST
        if key not in best or weight > best[key][0]:
            best[key] = (weight, best.get(key, (0.0, position, ""))[1], surface)
    given = {stem(k.lower()) for k in draft.keywords}
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
    return [surface for key, (_, _, surface) in ranked if key not in given][:limit]


def tag_stems(vocabulary: dict[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """Each tag's words as stems, what ``offline_tags`` compares."""
    return {tag: frozenset(stem(w.lower()) for w in words) for tag, words in vocabulary.items()}


def offline_tags(draft: Draft, stems: dict[str, frozenset[str]]) -> list[str]:
    """Vocabulary tags whose words occur in the memory (as stems), in vocabulary order."""
    present = set(analyze(draft.content))
    given = {t.lower() for t in draft.tags}
    return [tag for tag, words in stems.items() if tag.lower() not in given and words & present]


def offline_context(draft: Draft, keywords: Sequence[str]) -> str:
    """One line: the kind of note, its author and its main keywords."""
    by = f" by {draft.agent}" if draft.agent else ""
    main = list(dict.fromkeys([*draft.keywords, *keywords]))[:3]
    about = ""
    if main:
        about = " about " + (
            main[0] if len(main) == 1 else ", ".join(main[:-1]) + " and " + main[-1]
        )
    return f"{draft.kind.capitalize()} note{by}{about}."


def offline_note(
    draft: Draft, vocabulary: Vocabulary, config: NotesConfig, stems: dict[str, frozenset[str]]
) -> NoteState:
    """The deterministic note of ``draft`` (``stems``: ``tag_stems`` of the vocabulary)."""
    keywords = offline_keywords(draft, vocabulary, config.max_keywords)
    tags = offline_tags(draft, stems)
    return NoteState(keywords=keywords, tags=tags, context=offline_context(draft, keywords))


def _from_answer(draft: Draft, answer: NoteAnswer) -> NoteState:
    given_k = {k.lower() for k in draft.keywords}
    given_t = {t.lower() for t in draft.tags}
    return NoteState(
        keywords=[k for k in answer.keywords if k.lower() not in given_k],
        tags=[t for t in answer.tags if t.lower() not in given_t],
        context=answer.context,
    )


def build_notes(
    drafts: Sequence[Draft], vocabulary: Vocabulary, config: NotesConfig, llm: NoteLLM | None
) -> list[NoteState]:
    """Notes for ``drafts`` in order; the model's, asked ``llm_concurrency`` at a time.

    Each draft joins the vocabulary after its own note is built, so a batch gets the notes
    it would get written one by one.
    """
    answers: list[NoteAnswer | None] = [None] * len(drafts)
    if llm is not None and drafts:
        tags = sorted(config.tag_vocabulary)

        def ask(draft: Draft) -> NoteAnswer | None:
            return llm.ask("enrich", NoteAnswer, ENRICH_SYSTEM, enrich_prompt(draft.content, tags))

        with ThreadPoolExecutor(max_workers=config.llm_concurrency) as pool:
            answers = list(pool.map(ask, drafts))
    notes = []
    stems = tag_stems(config.tag_vocabulary)
    for draft, answer in zip(drafts, answers, strict=True):
        if answer is None:
            notes.append(offline_note(draft, vocabulary, config, stems))
        else:
            notes.append(_from_answer(draft, answer))
        vocabulary.add(draft.scope, draft.content)
    return notes


def note_text(content: str, keywords: Sequence[str], tags: Sequence[str], context: str) -> str:
    """What the embedding reads of a note when notes are indexed (A-Mem embeds them too)."""
    parts = [content]
    if context:
        parts.append(context)
    if keywords:
        parts.append("keywords: " + ", ".join(keywords))
    if tags:
        parts.append("tags: " + ", ".join(tags))
    return "\n".join(parts)
