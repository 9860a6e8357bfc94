"""The text analyzer behind BM25: the same words are ignored and stemmed everywhere.

Modelled on Lucene's EnglishAnalyzer (what Neo4j's 'english' full-text analyzer runs): words
split on non-word characters, lower-cased, possessive 's dropped, Lucene's English stop words
removed, Porter-stemmed.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

_TOKEN = re.compile(r"\w+", re.UNICODE)

#: Lucene's EnglishAnalyzer stop words
STOP_WORDS = frozenset(
    [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into",
        "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then",
        "there", "these", "they", "this", "to", "was", "will", "with",
    ]
)  # fmt: skip

_STEMMER = snowballstemmer.stemmer("porter")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem of one lower-cased word (cached: vocabularies are small)."""
    return str(_STEMMER.stemWord(word))


def words(text: str) -> list[str]:
    """Lower-cased words without stop words, before stemming."""
    out = []
    for token in _TOKEN.findall(text.replace("’", "'")):
        word = token.lower()
        if word not in STOP_WORDS:
            out.append(word)
    return out


def analyze(text: str) -> list[str]:
    """The terms BM25 indexes and queries: words, stop words dropped, stemmed."""
    text = re.sub(r"'s\b", "", text.replace("’", "'"))
    return [stem(w) for w in words(text)]
