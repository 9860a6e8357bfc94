"""An in-memory BM25 inverted index over numpy posting arrays.

SQLite's FTS5 ``bm25()`` scores every matching row in SQL and measured ~28 ms per query at
100k memories; scoring posting arrays with numpy takes a few milliseconds, which keeps hybrid
recall within a small factor of a bare vector top-k. The index is a cache: the embedded store
rebuilds it from SQLite and patches it on its own writes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import cache

import numpy as np

from amem_graph.core.text import BM25_B as B
from amem_graph.core.text import BM25_K1 as K1
from amem_graph.core.text import analyze
from amem_graph.stores.local.blocks import SPAN_SHARE

#: a term's postings are searched for a few admitted documents, rather than masked whole,
#: when they hold over this many times as many documents
_SEARCH_SHARE = 8


class _Postings:
    """Growable (document position, term frequency) arrays for one term. ``ordered`` while
    the positions ascend, as they do when documents are only added (new memories take the
    next position); a re-indexed document goes to the end and clears it."""

    __slots__ = ("docs", "n", "ordered", "term", "tfs")

    def __init__(self) -> None:
        self.term = ""
        self.docs = np.zeros(4, dtype=np.int64)
        self.tfs = np.zeros(4, dtype=np.float32)
        self.n = 0
        self.ordered = True

    def add(self, doc: int, tf: int) -> None:
        if self.n == len(self.docs):
            self.docs = np.resize(self.docs, self.n * 2)
            self.tfs = np.resize(self.tfs, self.n * 2)
        if self.n and doc < self.docs[self.n - 1]:
            self.ordered = False
        self.docs[self.n] = doc
        self.tfs[self.n] = tf
        self.n += 1

    def extend(self, docs: list[int], tfs: list[int]) -> None:
        """``add`` of each pair in turn, in one copy."""
        end = self.n + len(docs)
        if end > len(self.docs):
            size = max(end, len(self.docs) * 2)
            self.docs = np.resize(self.docs, size)
            self.tfs = np.resize(self.tfs, size)
        start = self.n
        self.docs[start:end] = docs
        self.tfs[start:end] = tfs
        self.n = end
        if self.ordered and end > start:
            run = self.docs[max(start - 1, 0) : end]
            self.ordered = bool(np.all(run[1:] > run[:-1]))

    def within(
        self, positions: np.ndarray, only: Callable[[], np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indices into ``positions``, their documents, term frequencies) of the documents
        among ``positions`` (sorted) that hold this term. Only the entries from the first
        position to the last are read (``between``); a few positions are searched for among
        them in ordered postings (each a binary search), else they are masked: ``only()`` is
        the positions' mask over that stretch (made once per search, when first needed)."""
        first = int(positions[0])
        docs, tfs = self.between(first, int(positions[-1]) + 1)
        if self.ordered and len(positions) * _SEARCH_SHARE < len(docs):
            at = np.searchsorted(docs, positions)
            found = np.flatnonzero(docs[np.minimum(at, len(docs) - 1)] == positions)
            return found, positions[found], tfs[at[found]]
        keep = only()[docs - first]
        docs, tfs = docs[keep], tfs[keep]
        return np.searchsorted(positions, docs), docs, tfs

    def between(self, first: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, term frequencies) of the entries for documents ``first`` to ``end``
        (exclusive): a slice of ordered postings (a tenant's memories written together are a
        short stretch of a long list), else masked."""
        docs, tfs = self.docs[: self.n], self.tfs[: self.n]
        if self.ordered:
            lo, hi = np.searchsorted(docs, (first, end)).tolist()
            return docs[lo:hi], tfs[lo:hi]
        keep = (docs >= first) & (docs < end)
        return docs[keep], tfs[keep]

    def remove(self, doc: int) -> None:
        keep = self.docs[: self.n] != doc
        kept = int(keep.sum())
        self.docs[:kept] = self.docs[: self.n][keep]
        self.tfs[:kept] = self.tfs[: self.n][keep]
        self.n = kept


class BM25Index:
    """Okapi BM25 (k1=1.2, b=0.75, Lucene's idf) over documents addressed by position."""

    def __init__(self) -> None:
        self.postings: dict[str, _Postings] = {}
        #: each document's distinct terms (what ``remove`` visits) by position, None where
        #: none is indexed, as the postings' own key strings in a tuple: a Counter per
        #: document cost ~4x the memory, and a dict by position ~70 bytes a document more
        self.doc_terms: list[tuple[str, ...] | None] = []
        #: each indexed document's text hash by position: enough to tell a changed text, in
        #: 8 bytes a document (a dict of ints held ~100)
        self.digests = np.zeros(1024, dtype=np.int64)
        self.lengths = np.zeros(1024, dtype=np.float32)
        self.total_length = 0.0
        self.documents = 0

    def set(self, doc: int, text: str) -> None:
        """Index (or re-index) the text of document ``doc``."""
        self.remove(doc)
        for post, tf in self._counted(doc, text):
            post.add(doc, tf)

    def set_many(self, docs: Sequence[int], texts: Sequence[str]) -> None:
        """``set`` of each (doc, text) in turn, each term's postings extended once (a whole
        mirror build: one numpy store per posting was most of the index's build time)."""
        grouped: dict[str, tuple[_Postings, list[int], list[int]]] = {}
        for doc, text in zip(docs, texts, strict=True):
            if self.has(doc):
                self.remove(doc)
            for post, tf in self._counted(doc, text):
                group = grouped.get(post.term)
                if group is None:
                    group = grouped[post.term] = (post, [], [])
                group[1].append(doc)
                group[2].append(tf)
        for post, added, tfs in grouped.values():
            post.extend(added, tfs)

    def _counted(self, doc: int, text: str) -> list[tuple[_Postings, int]]:
        """Record ``doc``'s text, length and terms; each term's postings (created when new)
        with its frequency, for the caller to add ``doc`` to."""
        terms = Counter(analyze(text))
        if doc >= len(self.lengths):
            size = max(doc + 1, len(self.lengths) * 2)
            self.lengths = np.resize(self.lengths, size)
            self.digests = np.resize(self.digests, size)
        if doc >= len(self.doc_terms):
            self.doc_terms.extend([None] * (doc + 1 - len(self.doc_terms)))
        self.lengths[doc] = sum(terms.values())
        self.total_length += float(self.lengths[doc])
        self.documents += 1 if terms else 0
        out = []
        for term, tf in terms.items():
            post = self.postings.get(term)
            if post is None:
                post = self.postings[term] = _Postings()
                post.term = term
            out.append((post, tf))
        self.doc_terms[doc] = tuple(post.term for post, _ in out)
        self.digests[doc] = hash(text)
        return out

    def has(self, doc: int) -> bool:
        """Whether document ``doc`` is indexed."""
        return doc < len(self.doc_terms) and self.doc_terms[doc] is not None

    def __len__(self) -> int:
        """How many documents are indexed."""
        return len(self.doc_terms) - self.doc_terms.count(None)

    def indexed_as(self, doc: int, text: str) -> bool:
        """Whether document ``doc`` is indexed with this text."""
        return self.has(doc) and int(self.digests[doc]) == hash(text)

    def remove(self, doc: int) -> None:
        """Forget document ``doc``."""
        terms = self.doc_terms[doc] if doc < len(self.doc_terms) else None
        if terms is None:
            return
        self.doc_terms[doc] = None
        self.total_length -= float(self.lengths[doc])
        self.documents -= 1 if terms else 0
        self.lengths[doc] = 0
        for term in terms:
            self.postings[term].remove(doc)

    def renumber(self, new_of_old: np.ndarray) -> None:
        """Document ``d`` becomes document ``new_of_old[d]`` (a permutation of the documents
        below its length; the mirror sorting its rows by scope), every posting ordered by
        the new numbers: one sort of all postings together, not one per term."""
        n = len(new_of_old)
        posts = [post for post in self.postings.values() if post.n]
        if posts:
            sizes = np.fromiter((post.n for post in posts), np.int64, len(posts))
            docs = new_of_old[np.concatenate([post.docs[: post.n] for post in posts])]
            tfs = np.concatenate([post.tfs[: post.n] for post in posts])
            order = np.lexsort((docs, np.repeat(np.arange(len(posts)), sizes)))
            docs, tfs = docs[order], tfs[order]
            ends = np.cumsum(sizes).tolist()
            for post, end, size in zip(posts, ends, sizes.tolist(), strict=True):
                post.docs, post.tfs = docs[end - size : end], tfs[end - size : end]
                post.ordered = True
        old_of_new = np.empty(n, dtype=np.int64)
        old_of_new[new_of_old] = np.arange(n)
        for name in ("lengths", "digests"):
            column = getattr(self, name)
            kept = min(len(column), n)
            moved = np.zeros(max(len(column), n), dtype=column.dtype)
            moved[new_of_old[:kept]] = column[:kept]  # documents past the column: none
            moved[n:] = column[n:]
            setattr(self, name, moved)
        terms = self.doc_terms + [None] * (n - len(self.doc_terms))
        self.doc_terms = [terms[d] for d in old_of_new.tolist()] + terms[n:]

    def scores(self, query: str, size: int) -> np.ndarray:
        """BM25 of every document position below ``size`` (0 where no term matches)."""
        out = np.zeros(size, dtype=np.float32)
        for post, avg in self._matched(query):
            docs, tfs = post.docs[: post.n], post.tfs[: post.n]
            out[docs] += self._weights(post, docs, tfs, avg)
        return out

    def scores_at(self, query: str, positions: np.ndarray) -> np.ndarray:
        """``scores(query, size)[positions]`` for the sorted ``positions``, at a
        cost that follows them rather than the postings: a selective scope of a large store
        (a tenant's 1k memories among 100k) reads a few entries of each long posting list
        instead of masking all of it, and positions lying together (a tenant written at once)
        are scored over their stretch alone. The values are ``scores``'s, bit for bit."""
        if not len(positions):
            return np.zeros(0, dtype=np.float32)
        first, end = int(positions[0]), int(positions[-1]) + 1
        if end - first <= SPAN_SHARE * len(positions):
            # positions lying together: their stretch is scored whole as ``scores`` scores
            # the store (no mask, no search), then cut to them
            span = np.zeros(end - first, dtype=np.float32)
            for post, avg in self._matched(query):
                docs, tfs = post.between(first, end)
                span[docs - first] += self._weights(post, docs, tfs, avg)
            cut: np.ndarray = span[positions - first]
            return cut
        out = np.zeros(len(positions), dtype=np.float32)

        @cache
        def only() -> np.ndarray:
            mask = np.zeros(end - first, dtype=bool)
            mask[positions - first] = True
            return mask

        for post, avg in self._matched(query):
            at, docs, tfs = post.within(positions, only)
            out[at] += self._weights(post, docs, tfs, avg)
        return out

    def _matched(self, query: str) -> Iterator[tuple[_Postings, float]]:
        """The postings of each distinct query term that some document holds, with the
        average document length (none when nothing is indexed)."""
        count = self.documents  # Lucene's docCount: documents with at least one term
        if count == 0:
            return
        avg = self.total_length / count
        for term in dict.fromkeys(analyze(query)):
            post = self.postings.get(term)
            if post is not None and post.n:
                yield post, avg

    def _weights(
        self, post: _Postings, docs: np.ndarray, tfs: np.ndarray, avg: float
    ) -> np.ndarray:
        """One term's BM25 in each of ``docs`` (holding it ``tfs`` times)."""
        count = self.documents
        idf = np.log1p((count - post.n + 0.5) / (post.n + 0.5))
        norm = K1 * (1 - B + B * self.lengths[docs] / avg)
        return idf * tfs * (K1 + 1) / (tfs + norm)  # type: ignore[no-any-return]
