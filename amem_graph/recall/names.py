"""Agents a query names, and the query without them.

"What did Avery say about the van?" asks about what Avery wrote, and recall's speaker
re-scoring already favours that (``speaker_weight``). Left in the searched text, the name
pulls the sentence model toward any memory about Avery or addressed to them ("how was the
trip, Avery?") and BM25 toward every mention of it, away from the words that carry the
question. So recall searches with the rest of the query and keeps the name for re-scoring.
On every dev set (``bench/quality``) this gave recall@10 +0.04 to +0.07 and MRR +0.03 to
+0.06, real chats included.

Only an agent named verbatim (any case, possessive allowed) and that wrote a memory the
recall can see counts (``GraphStore.authors``), so a content word that happens to be some
other tenant's agent id is never dropped.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable

from amem_graph.core.text import analyze

#: a possessive after an agent id; trailing id punctuation (ids are letters, digits and
#: _ . : @ / -) is sentence punctuation
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_TRAILING = ".:/-"
#: how an id of two words is written as one ("Jon Snow" -> jon_snow, jon-snow)
_JOINERS = ("_", "-")


def _casings(word: str) -> tuple[str, ...]:
    return (word, word.lower(), word.capitalize(), word.upper())


def _core(word: str) -> str:
    """A whitespace-separated word of a query as an id would read: no possessive, no
    sentence punctuation around it."""
    return _POSSESSIVE.sub("", word.strip(',;!?()"')).rstrip(_TRAILING)


def candidates(query: str) -> list[str]:
    """The query's words that could be agent ids, as written and in common casings, and
    each pair of neighbouring words joined as one id would join them."""
    out: dict[str, None] = {}
    words = [w for w in map(_core, query.split()) if w]  # as ``without`` reads them
    for word in words:
        out.update(dict.fromkeys(_casings(word)))
    for a, b in itertools.pairwise(words):
        for joiner in _JOINERS:
            out.update(dict.fromkeys(_casings(a + joiner + b)))
            out[a.capitalize() + joiner + b.capitalize()] = None
    return list(out)


def without(query: str, names: set[str]) -> str:
    """``query`` less every word, or pair of neighbouring words, that is one of ``names``
    (case-insensitive, with its possessive), or ``query`` itself when nothing searchable would
    be left."""
    if not names:
        return query
    lowered = {n.lower() for n in names}
    words = query.split()
    cores = [_core(w).lower() for w in words]
    kept, i = [], 0
    while i < len(words):
        pair = cores[i + 1] if i + 1 < len(words) else None
        if pair is not None and any(cores[i] + j + pair in lowered for j in _JOINERS):
            i += 2
            continue
        if cores[i] not in lowered:
            kept.append(words[i])
        i += 1
    rest = " ".join(kept)
    return rest if analyze(rest) else query


def named(agent: str, terms: frozenset[str]) -> bool:
    """Whether a query whose analysed terms are ``terms`` names ``agent``: all of the id's
    terms are among them, an id's underscores read as spaces (jon_snow is named by "Jon
    Snow" as jon-snow is)."""
    return any(
        (parts := analyze(form)) and terms.issuperset(parts)
        for form in (agent, agent.replace("_", " "))
    )


class KnownAuthors:
    """The agents seen to have written under each filter, so that recall on a server store can
    guess which words of a query are agents, search without them at once, and have the store
    check the guess in the same round trip (``HybridRetriever.search``): the ``authors``
    round trip saved. Only a guess: the store's answer decides, and a wrong guess costs a
    second search. Learnt from those answers and from the authors of the memories recall
    reads under the filter, so a speaker is known before a question first names them.
    Bounded: the least recently used filters are forgotten, and a filter keeps at most
    ``per_filter``."""

    def __init__(self, limit: int = 256, per_filter: int = 4096) -> None:
        self._by_filter: OrderedDict[Hashable, frozenset[str]] = OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit
        self._per_filter = per_filter

    def guess(self, key: Hashable, words: Iterable[str]) -> set[str] | None:
        """Those of ``words`` last seen to be authors under the filter ``key``; None when
        nothing was learnt under it yet (no guess worth a search)."""
        with self._lock:
            known = self._by_filter.get(key)
        return None if known is None else set(known.intersection(words))

    def learn(
        self,
        key: Hashable,
        asked: Iterable[str],
        found: Iterable[str],
        seen: Iterable[str] = (),
    ) -> None:
        """The store's answer for ``asked`` under ``key`` (``found`` are authors, the rest
        not), and ``seen``: authors of memories the filter admitted."""
        asked = frozenset(asked)
        with self._lock:
            known = (self._by_filter.pop(key, frozenset()) - asked) | frozenset(found)
            if len(known) < self._per_filter:
                known |= frozenset(seen) - asked
            self._by_filter[key] = known  # even empty: this filter was asked about
            while len(self._by_filter) > self._limit:
                self._by_filter.popitem(last=False)
