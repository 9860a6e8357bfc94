"""BM25 baseline over convbench: a sanity check of the data's difficulty.

Okapi BM25 (k1=1.2, b=0.75) ranks every turn of the question's conversation.
A useful benchmark leaves lexical matching well short of perfect (recall@10
roughly 0.4-0.75): higher means questions copy the evidence wording, lower
means the annotations are probably unreachable. Pure Python, stdlib only.

Run: ``python bench/quality/baselines.py [--data PATH] [--no-speaker]``.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from dataset import DEFAULT_PATH, Dataset, Turn, load  # noqa: E402
from metrics import DEFAULT_KS, evaluate, format_report  # noqa: E402

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "don",
        "didn",
        "doesn",
        "isn",
        "wasn",
    ]
)
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lowercase alphanumeric tokens minus stop words (no stemming, deliberately simple)."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


class BM25:
    """Okapi BM25 over a fixed list of documents, with Lucene's non-negative IDF."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [Counter(d) for d in docs]
        self.lens = [len(d) for d in docs]
        self.avgdl = (sum(self.lens) / len(docs)) if docs else 0.0
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        out = []
        for tf, dl in zip(self.tfs, self.lens, strict=True):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * dl / self.avgdl) if self.avgdl else self.k1
            for t in query:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out


def turn_document(turn: Turn, include_speaker: bool = True) -> str:
    """The text a memory system would index for a turn ("Speaker: text" by default)."""
    return f"{turn.speaker}: {turn.text}" if include_speaker else turn.text


def bm25_rankings(dataset: Dataset, include_speaker: bool = True) -> dict[str, list[str]]:
    """Question id -> all turn ids of its conversation, best first (ties keep chat order)."""
    rankings: dict[str, list[str]] = {}
    for conv in dataset.conversations:
        turns = list(conv.turns())
        index = BM25([tokenize(turn_document(t, include_speaker)) for t in turns])
        for q in dataset.questions_for(conv.id):
            scores = index.scores(tokenize(q.question))
            order = sorted(range(len(turns)), key=lambda i: (-scores[i], i))
            rankings[q.id] = [turns[i].id for i in order]
    return rankings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="BM25 baseline for convbench")
    parser.add_argument("--data", type=Path, default=DEFAULT_PATH)
    parser.add_argument(
        "--no-speaker", action="store_true", help="index turn text without the speaker name"
    )
    args = parser.parse_args(argv)
    ds = load(args.data)
    stats = ds.stats()
    print(", ".join(f"{k}={v}" for k, v in stats.items()))
    report = evaluate(
        ds.questions, bm25_rankings(ds, include_speaker=not args.no_speaker), DEFAULT_KS
    )
    print(format_report(report, DEFAULT_KS))


if __name__ == "__main__":
    main()
