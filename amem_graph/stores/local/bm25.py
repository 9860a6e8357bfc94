"""An in-memory BM25 inverted index over numpy posting arrays.

SQLite's FTS5 ``bm25()`` scores every matching row in SQL and measured ~28 ms per query at
100k memories; scoring posting arrays with numpy takes a few milliseconds, which keeps hybrid
recall within a small factor of a bare vector top-k. The index is a cache: the embedded store
rebuilds it from SQLite and patches it on its own writes.
"""

from __future__ import annotations

import hashlib
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
#: the arrays ``BM25Index.export`` gives and ``BM25Index.restore`` takes (``bm25_file.py``)
ARRAY_NAMES = (
    "vocab", "term_starts", "post_rids", "post_tfs",
    "doc_rids", "doc_lengths", "doc_digests", "doc_starts", "doc_term_ids",
)  # fmt: skip


#: the per-document columns of ``BM25Index`` and the value of a document not indexed
_DOC_COLUMNS = (("lengths", 0), ("digests", 0), ("saved_slot", -1))


class _Saved:
    """``doc_terms`` of a document restored from saved arrays: its terms are read from them
    (``BM25Index._saved_terms``) when it is removed, not held as a tuple per document."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SAVED"


SAVED = _Saved()


def text_digest(text: str) -> int:
    """A 64-bit digest of ``text``, the same in every process (``hash`` of a str is salted
    per process), so a restored index still tells an unchanged text from a changed one."""
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def _index_finder(rids: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """A function giving the index in ``rids`` (ascending) of each rid asked, -1 where it is
    not one: a table indexed by rid when rids are not much sparser than their number (SQLite
    numbers rows from 1 up, so a store that deleted few is dense), else a binary search."""
    if not len(rids):
        return lambda wanted: np.full(len(wanted), -1, dtype=np.int64)
    top = int(rids[-1])
    if int(rids[0]) >= 0 and top < 4 * len(rids) + 1024:
        table = np.full(top + 2, -1, dtype=np.int64)  # the last slot: every rid past ``top``
        table[rids] = np.arange(len(rids))
        return lambda wanted: table[np.clip(wanted, 0, top + 1)]

    def search(wanted: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(rids, wanted), len(rids) - 1)
        return np.where(rids[at] == wanted, at, -1)

    return search


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

    @classmethod
    def of(cls, term: str, docs: np.ndarray, tfs: np.ndarray) -> _Postings:
        """The postings of ``term``: ``docs`` (ascending) holding it ``tfs`` times."""
        post = cls.__new__(cls)
        post.term, post.docs, post.tfs, post.n, post.ordered = term, docs, tfs, len(docs), True
        return post

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
        #: document cost ~4x the memory, and a dict by position ~70 bytes a document more.
        #: ``SAVED``: restored, its terms in ``_saved_term_ids``
        self.doc_terms: list[tuple[str, ...] | _Saved | None] = []
        #: each indexed document's text digest (``text_digest``) by position: enough to
        #: tell a changed text, in 8 bytes a document (a dict of ints held ~100)
        self.digests = np.zeros(1024, dtype=np.int64)
        self.lengths = np.zeros(1024, dtype=np.float32)
        #: a restored document's entry in the saved doc-major arrays (-1: none)
        self.saved_slot = np.full(1024, -1, dtype=np.int64)
        self._saved_starts = np.zeros(1, dtype=np.int64)
        self._saved_term_ids = np.zeros(0, dtype=np.int32)
        self._saved_vocab: list[str] = []
        self.total_length = 0.0
        self.documents = 0
        #: documents indexed from their text since the index was restored or saved
        self.unsaved = 0

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
        self.unsaved += 1
        if doc >= len(self.lengths):
            self._grow_docs(max(doc + 1, len(self.lengths) * 2))
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
        self.digests[doc] = text_digest(text)
        return out

    def _grow_docs(self, size: int) -> None:
        """Room in the per-document columns for documents below ``size``."""
        for name, fill in _DOC_COLUMNS:
            column = getattr(self, name)
            grown = np.full(size, fill, dtype=column.dtype)
            grown[: len(column)] = column
            setattr(self, name, grown)

    def has(self, doc: int) -> bool:
        """Whether document ``doc`` is indexed."""
        return doc < len(self.doc_terms) and self.doc_terms[doc] is not None

    def __len__(self) -> int:
        """How many documents are indexed."""
        return len(self.doc_terms) - self.doc_terms.count(None)

    def indexed_as(self, doc: int, text: str) -> bool:
        """Whether document ``doc`` is indexed with this text."""
        return self.has(doc) and int(self.digests[doc]) == text_digest(text)

    def remove(self, doc: int) -> None:
        """Forget document ``doc``."""
        terms = self.doc_terms[doc] if doc < len(self.doc_terms) else None
        if terms is None:
            return
        if isinstance(terms, _Saved):
            terms = self._saved_terms(doc)
        self.doc_terms[doc] = None
        self.total_length -= float(self.lengths[doc])
        self.documents -= 1 if terms else 0
        self.lengths[doc] = 0
        for term in terms:
            self.postings[term].remove(doc)

    def _saved_terms(self, doc: int) -> tuple[str, ...]:
        """The terms of a restored document (it is then no longer a saved one)."""
        slot = int(self.saved_slot[doc])
        self.saved_slot[doc] = -1
        ids = self._saved_term_ids[self._saved_starts[slot] : self._saved_starts[slot + 1]]
        return tuple(self._saved_vocab[i] for i in ids.tolist())

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
        for name, fill in _DOC_COLUMNS:
            column = getattr(self, name)
            kept = min(len(column), n)
            moved = np.full(max(len(column), n), fill, dtype=column.dtype)
            moved[new_of_old[:kept]] = column[:kept]  # documents past the column: none
            moved[n:] = column[n:]
            setattr(self, name, moved)
        terms = self.doc_terms + [None] * (n - len(self.doc_terms))
        self.doc_terms = [terms[d] for d in old_of_new.tolist()] + terms[n:]

    def order_postings(self) -> None:
        """Every term's postings ascending by document (a build that indexed documents out of
        order): one sort of them all, none when they are in order already."""
        if not all(post.ordered for post in self.postings.values()):
            self.renumber(np.arange(len(self.doc_terms)))

    def export(self, rid_of_doc: np.ndarray) -> dict[str, np.ndarray]:
        """The index as flat arrays (``ARRAY_NAMES``), each document named by its SQLite rid
        (``rid_of_doc[doc]``), for ``restore`` in another process: the vocabulary, each
        term's postings in document order (a store whose rows are sorted by scope the same
        way when it is read back needs no sort), and each document's length, digest and
        term ids."""
        posts = [post for post in self.postings.values() if post.n]
        sizes = np.fromiter((post.n for post in posts), np.int64, len(posts))
        empty = np.zeros(0, dtype=np.int64)
        docs = np.concatenate([post.docs[: post.n] for post in posts]) if posts else empty
        tfs = (
            np.concatenate([post.tfs[: post.n] for post in posts]).astype(np.float32)
            if posts
            else np.zeros(0, np.float32)
        )
        term_ids = np.repeat(np.arange(len(posts), dtype=np.int32), sizes)
        if not all(post.ordered for post in posts):  # a re-indexed document went to the end
            order = np.lexsort((docs, term_ids))
            docs, tfs = docs[order], tfs[order]
        rids = rid_of_doc[docs]
        indexed = [d for d, t in enumerate(self.doc_terms) if t is not None]
        held = np.asarray(indexed, dtype=np.int64)  # the documents, in rid order
        doc_rids = rid_of_doc[held]
        order = np.argsort(doc_rids)
        held, doc_rids = held[order], doc_rids[order]
        by_doc = np.argsort(rids, kind="stable")  # each document's terms in term order
        counts = np.bincount(np.searchsorted(doc_rids, rids[by_doc]), minlength=len(held))
        vocab = "\n".join(post.term for post in posts).encode()
        return {
            "vocab": np.frombuffer(vocab, dtype=np.uint8),
            "term_starts": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            "post_rids": rids.astype(np.int64),
            "post_tfs": tfs,
            "doc_rids": doc_rids.astype(np.int64),
            "doc_lengths": self.lengths[held],
            "doc_digests": self.digests[held],
            "doc_starts": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            "doc_term_ids": term_ids[by_doc],
        }

    @classmethod
    def restore(
        cls, arrays: dict[str, np.ndarray], rids: np.ndarray, rows: np.ndarray
    ) -> BM25Index:
        """The index ``export`` gave, its documents numbered by row: position ``i`` holds rid
        ``rids[i]`` (ascending) in row ``rows[i]``. A saved document whose rid is not among
        them is left out (with its postings); a row none of the saved documents names is
        left unindexed. Each term's postings are sorted by row only if they are not already
        (rows sorted by scope since they were saved, or differently)."""
        index = cls()
        n = len(rids)
        rows = rows.astype(np.int64, copy=False)
        index._grow_docs(max(n, 1024))
        index.doc_terms = [None] * n
        raw = arrays["vocab"].tobytes()
        vocab = raw.decode().split("\n") if raw else []
        term_starts = arrays["term_starts"]
        position_of = _index_finder(rids)
        post_at = position_of(arrays["post_rids"])
        keep = post_at >= 0
        term_of = np.repeat(np.arange(len(vocab)), np.diff(term_starts))[keep]
        docs, tfs = rows[post_at[keep]], arrays["post_tfs"][keep]
        if ((term_of[1:] == term_of[:-1]) & (docs[1:] <= docs[:-1])).any():
            order = np.lexsort((docs, term_of))
            docs, tfs = docs[order], tfs[order]
        ends = np.cumsum(np.bincount(term_of, minlength=len(vocab)))
        starts = np.concatenate([[0], ends[:-1]])
        held = np.flatnonzero(ends > starts)  # terms some kept document still holds
        postings = index.postings
        spans = zip(held.tolist(), starts[held].tolist(), ends[held].tolist(), strict=True)
        for t, start, end in spans:
            term = vocab[t]
            postings[term] = _Postings.of(term, docs[start:end], tfs[start:end])
        doc_at = position_of(arrays["doc_rids"])
        found = np.flatnonzero(doc_at >= 0)
        at = rows[doc_at[found]]
        for row in at.tolist():
            index.doc_terms[row] = SAVED
        index.lengths[at] = arrays["doc_lengths"][found]
        index.digests[at] = arrays["doc_digests"][found]
        index.saved_slot[at] = found
        starts = arrays["doc_starts"]
        index._saved_starts, index._saved_term_ids = starts, arrays["doc_term_ids"]
        index._saved_vocab = vocab
        index.total_length = float(index.lengths[at].sum(dtype=np.float64))
        index.documents = int((np.diff(starts)[found] > 0).sum())
        return index

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
