"""The mirror's vectors and BM25 documents in rows sorted by scope, and what scores them.

A memory's vector lives in a row of one float32 array, and its text is the BM25 document of
the same number. Rows are in position order until a selective search finds its scope
scattered among other scopes' rows (tenants writing at once): the rows are then sorted by
scope (``cluster``), so each tenant is one stretch of vectors and of every posting list,
scored in place. A whole build that finds a scope so (``scattered_scopes``) places its rows
in that order as it loads them.
Positions, and everything else keyed by them, never move; ``vec_row`` says where each
position's row is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from amem_graph.stores.local.blocks import SPAN_SHARE, ScopeBlocks, padded
from amem_graph.stores.local.bm25 import BM25Index
from amem_graph.stores.local.heap import release_freed

#: rows scored in one BLAS call are padded to a multiple of this: the kernel scores a short tail
#: of rows differently (in the last bit), and padding keeps a memory's cosine the same whether
#: the whole store or only the rows a filter admits are scored
ROW_BLOCK = 16
#: a scattered selective search sorts the vectors by scope again (``cluster``) once at least
#: this share of the rows came after the last sort: each row is moved about eight times over
#: a store's growth, and a row's write costs far more than its move
_RESORT_SHARE = 0.125


class ScopeSortedRows:
    """The mirror's scoring of vectors and text by row (``_Mirror`` holds what these read)."""

    ids: list[str]
    scope: np.ndarray
    vectors: np.ndarray
    #: position -> its row of ``vectors``: the position itself until the rows are sorted by
    #: scope (``cluster``); rows added since are their own
    vec_row: np.ndarray
    #: positions below this had their vectors sorted by scope by the last ``cluster``
    sorted_upto: int
    #: whether any row is not its position's own (a store in scope order already is not)
    permuted: bool
    #: BM25 over documents numbered by row
    bm25: BM25Index
    _blocks: ScopeBlocks

    def selective(self, admitted: int) -> bool:
        """Whether a filter admitting this many rows is searched on its own rows."""
        raise NotImplementedError

    def rows_of(self, pos: np.ndarray) -> np.ndarray:
        """The rows of ``vectors`` that hold positions ``pos``."""
        return self.vec_row[pos] if self.permuted else pos

    def vectors_at(self, pos: np.ndarray) -> np.ndarray:
        """The vectors of positions ``pos`` (a copy)."""
        return self.vectors[self.rows_of(pos)]  # type: ignore[no-any-return]

    def cosines(self, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``vectors[pos] @ q``: the admitted rows gathered when they are few, else the whole
        store scored; both padded to ``ROW_BLOCK`` rows, so the values are the same."""
        n = len(self.ids)
        if self.selective(len(pos)):
            return self.gathered(q, pos)
        rows = -(-n // ROW_BLOCK) * ROW_BLOCK  # within capacity: it is a multiple too
        scores: np.ndarray = (self.vectors[:rows] @ q)[self.rows_of(pos)]
        return scores

    def scope_cosines(self, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``cosines`` over the rows a filter admits (``pos``, from ``admitted``). A selective
        set whose vectors lie close together (a tenant's memories written together, or sorted
        by scope since) is scored in place, over the stretch from its first row to its last:
        no copy at all. A scope whose rows are scattered among other tenants' sorts the
        vectors by scope (``cluster``) when enough rows came since they were last sorted;
        a set still scattered after that (a filter on agents or tasks) has its gathered rows
        kept between recalls (``ScopeBlocks``) until the next change. The values are
        ``cosines``'s: every row is scored in a padded block of ``ROW_BLOCK`` rows."""
        if not self.selective(len(pos)):
            return self.cosines(q, pos)
        if len(pos) == 0:
            return np.zeros(0, dtype=np.float32)
        rows, order = self._ascending(pos)
        scores = self._in_place(q, rows)
        if scores is None and self._resort_due():
            self.cluster()
            return self.scope_cosines(q, pos)
        if scores is None:
            scores = self._blocks.cosines(self.vectors, q, rows)
        return _unsorted(scores, order)

    def text_scores(self, query: str) -> np.ndarray:
        """BM25 of every position (0 where no term matches)."""
        n = len(self.ids)
        scores = self.bm25.scores(query, n)
        return scores[self.vec_row[:n]] if self.permuted else scores

    def text_scores_at(self, query: str, pos: np.ndarray) -> np.ndarray:
        """BM25 of the positions ``pos`` (sorted, few), the same values as ``text_scores``:
        the rows sorted by scope and those added since are each scored on their own
        (``BM25Index.scores_at``), so a tenant's stretch is scored in place."""
        if not self.sorted_upto or not len(pos):
            return self.bm25.scores_at(query, pos)
        rows, order = self._ascending(pos)
        split = int(np.searchsorted(rows, self.sorted_upto))
        parts = [rows[:split], rows[split:]]
        scores = [self.bm25.scores_at(query, part) for part in parts if len(part)]
        return _unsorted(scores[0] if len(scores) == 1 else np.concatenate(scores), order)

    def _ascending(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The rows of ``pos`` ascending, and the order that sorted them (None: they were)."""
        rows = self.rows_of(pos)
        if self.permuted and len(rows) > 1 and not (rows[1:] > rows[:-1]).all():
            order = np.argsort(rows)  # several scopes, or a row moved to another scope
            return rows[order], order
        return rows, None

    def _in_place(self, q: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
        """The cosines of ``rows`` (ascending) scored where they lie, or None when they are
        scattered: the rows sorted by scope, then those added since (when they are few, as
        after a handful of writes, they are gathered)."""
        split = int(np.searchsorted(rows, self.sorted_upto))
        if split == 0:
            return self._stretch(q, rows)
        head = self._stretch(q, rows[:split])
        if head is None or split == len(rows):
            return head
        tail = rows[split:]
        rest = self._stretch(q, tail)
        if rest is None and len(tail) * 4 <= len(rows):
            rest = self._gather(q, tail)
        return None if rest is None else np.concatenate([head, rest])

    def _stretch(self, q: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
        """The cosines of ``rows`` (ascending) by a product over the padded stretch they span,
        or None when it is over ``SPAN_SHARE`` times their number."""
        lo = int(rows[0]) // ROW_BLOCK * ROW_BLOCK
        hi = -(-(int(rows[-1]) + 1) // ROW_BLOCK) * ROW_BLOCK  # within capacity: a multiple
        if hi - lo > SPAN_SHARE * len(rows):
            return None
        scores: np.ndarray = (self.vectors[lo:hi] @ q)[rows - lo]
        return scores

    def _gather(self, q: np.ndarray, rows: np.ndarray) -> np.ndarray:
        scores: np.ndarray = (self.vectors[padded(rows, ROW_BLOCK)] @ q)[: len(rows)]
        return scores

    def _resort_due(self) -> bool:
        n = len(self.ids)
        return n > self.sorted_upto and n - self.sorted_upto >= _RESORT_SHARE * n

    def cluster(self) -> None:
        """Sort the rows by scope, each scope's in position order, so a tenant whose
        memories were written among other tenants' is scored in place: its vectors (10
        tenants of 10k dealt round-robin cost ~3 ms a recall to gather and 15 MB each to
        keep) and its postings (masked whole otherwise). At 100k rows a copy of the vectors
        and one sort of every posting, once. Positions, and all keyed by them, stay."""
        n = len(self.ids)
        order = np.argsort(self.scope[:n], kind="stable")  # the position for each new row
        at = self.vec_row[order]  # where each lies now
        if (at != np.arange(n)).any():  # else the vectors are in that order already
            moved = np.empty_like(self.vectors)
            np.take(self.vectors, at, axis=0, out=moved[:n], mode="clip")
            moved[n:] = self.vectors[n:]
            self.vectors = moved
            self.vec_row[order] = np.arange(n)
            new_of_old = np.empty(n, dtype=np.int64)
            new_of_old[at] = np.arange(n)
            self.bm25.renumber(new_of_old)
            release_freed()  # the old postings' many small arrays
            self.permuted = True
        self.sorted_upto = n
        self._blocks.clear()

    def gathered(self, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``cosines`` of a few rows: they are gathered (padded) and scored alone."""
        return self._gather(q, self.rows_of(pos))

    def cosines_many(self, queries: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """``vectors[pos] @ queries.T`` in one matrix product: close to ``cosines`` of each
        query (not bit for bit), for shortlisting."""
        if self.selective(len(pos)):
            return self.vectors_at(pos) @ queries.T  # type: ignore[no-any-return]
        n = len(self.ids)
        return (self.vectors[:n] @ queries.T)[self.rows_of(pos)]  # type: ignore[no-any-return]


def scattered_scopes(codes: np.ndarray, rows: np.ndarray, selective: Callable[[int], bool]) -> bool:
    """Whether some scope few enough to be searched on its own rows (``selective`` of its
    size) lies spread over more than ``SPAN_SHARE`` times its number of rows: ``codes``
    sorted, ``rows`` each one's row. The first search in such a scope sorts the rows by
    scope (``cluster``); a whole build asks first, to place the rows sorted as it loads."""
    if not len(codes):
        return False
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    sizes = np.diff(np.r_[starts, len(codes)])
    spans = np.maximum.reduceat(rows, starts) - np.minimum.reduceat(rows, starts) + 1
    spread = (spans > SPAN_SHARE * sizes).tolist()
    return any(s and selective(size) for s, size in zip(spread, sizes.tolist(), strict=True))


def _unsorted(scores: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """``scores`` of rows sorted by ``order``, put back in the order they were asked."""
    if order is None:
        return scores
    out = np.empty_like(scores)
    out[order] = scores
    return out
