"""Scattered selective filters' vectors, gathered once and kept between recalls.

A scoped recall scores only the rows its filter admits. A scope scattered among other
scopes' rows has its vectors sorted by scope instead (``row_order.py``); what is left here
is a filter the scope order does not gather (agents, tasks, several scopes), and a scattered
scope until enough rows came since the last sort. Gathering 10k scattered rows costs
several times the product itself, and recall scans the same scope query after query, so the
gathered block is kept until the store next changes. Keeping is not free: a new block lands on
fresh pages, and faulting them in costs ~4x a plain gather (1k rows: ~1.3 ms against 0.25 ms).
So the buffers of blocks forgotten or cleared by a change are reused for the next ones (a
keep into one costs what a gather does), and a scope is given fresh pages only from its fourth
sight on, once it has been asked often enough to pay for them (a fleet of 100 tenants asking
each once or twice would otherwise pay that on nearly every recall).
"""

from __future__ import annotations

import numpy as np

from amem_graph.stores.local.recent import Recent

#: a selective scope whose rows span at most this many times their number is read over its
#: span in place (its vectors by the mirror, its postings by BM25: a product or a scoring of
#: twice the rows costs less than gathering them); a more scattered one is gathered
SPAN_SHARE = 2
#: (how many positions, a hash of them)
_KeepKey = tuple[int, int]
#: (the positions, their padded vectors)
_Block = tuple[np.ndarray, np.ndarray]
#: the default budget of kept blocks and spare buffers together (``LocalStore``'s
#: ``scope_blocks_bytes``): 8 scattered scopes of 10k 384-d rows, or ~80 of 1k; ten of 10k
#: need ~155 MB
SCOPE_BLOCKS_BYTES = 128 << 20
#: a scope is kept in a new buffer on this sight of it (at once in a spare that fits)
ADMIT_ON_SIGHT = 4
#: scopes whose sightings are counted (least recently seen forgotten first)
_SIGHTS = 4096


def padded(pos: np.ndarray, row_block: int) -> np.ndarray:
    """``pos`` followed by row 0 up to a multiple of ``row_block``: scored in whole blocks of
    rows, a row's cosine is the same in every matrix it is part of."""
    out = np.zeros(-(-len(pos) // row_block) * row_block, dtype=np.int64)
    out[: len(pos)] = pos
    return out


def _owner(block: np.ndarray) -> np.ndarray:
    """The buffer a block is a view of (a reused spare may be longer than the block)."""
    base = block.base
    return base if isinstance(base, np.ndarray) else block


def _bytes(kept: _Block) -> int:
    return int(kept[0].nbytes + _owner(kept[1]).nbytes)


class ScopeBlocks:
    """``vectors[padded] @ q`` for selective scopes, their blocks kept within ``budget``
    bytes (kept blocks and spare buffers together). Not thread-safe: the store calls it under
    its lock, and a spare is written over while no recall reads it."""

    def __init__(self, budget: int, row_block: int) -> None:
        self.budget = budget
        self.row_block = row_block
        self._kept: Recent[_KeepKey, _Block] = Recent(budget, _bytes, self._spare)
        self._sights: Recent[_KeepKey, int] = Recent(_SIGHTS, lambda _: 1)
        #: buffers of blocks that left, oldest first
        self._spares: list[np.ndarray] = []
        self._spare_bytes = 0

    def __len__(self) -> int:
        return len(self._kept)

    def cosines(self, vectors: np.ndarray, q: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """The cosines of rows ``pos`` (sorted): the same values whether kept or not, since
        both score the same padded matrix."""
        key = (len(pos), hash(pos.tobytes()))
        kept = self._kept.get(key)
        if kept is not None and np.array_equal(kept[0], pos):
            return (kept[1] @ q)[: len(pos)]  # type: ignore[no-any-return]
        rows = padded(pos, self.row_block)
        sights = (self._sights.get(key) or 0) + 1
        self._sights.put(key, sights)
        block = self._buffer(len(rows), vectors, fresh=sights >= ADMIT_ON_SIGHT)
        if block is None:
            return (vectors[rows] @ q)[: len(pos)]  # type: ignore[no-any-return]
        np.take(vectors, rows, axis=0, out=block, mode="clip")  # "raise" buffers `out`
        self._kept.put(key, (pos.copy(), block))
        self._trim()
        return (block @ q)[: len(pos)]  # type: ignore[no-any-return]

    def clear(self) -> None:
        """Forget every block (the store changed); their buffers stay as spares."""
        self._kept.clear()
        self._trim()

    def _buffer(self, rows: int, vectors: np.ndarray, fresh: bool) -> np.ndarray | None:
        """A ``rows`` x dims buffer: the smallest spare that holds it without wasting over
        half, else a new one if ``fresh``, else None."""
        nbytes = rows * int(np.prod(vectors.shape[1:])) * vectors.itemsize
        if fresh:  # what must go to fit it leaves its buffer, perhaps one to reuse
            self._kept.make_room(nbytes)
        fits = [
            i
            for i, spare in enumerate(self._spares)
            if rows <= len(spare) <= 2 * rows and spare.shape[1:] == vectors.shape[1:]
        ]
        if fits:
            spare = self._spares.pop(min(fits, key=lambda i: len(self._spares[i])))
            self._spare_bytes -= spare.nbytes
            return spare[:rows]
        if not fresh:
            return None
        return np.empty((rows, *vectors.shape[1:]), dtype=vectors.dtype)

    def _spare(self, kept: _Block) -> None:
        buffer = _owner(kept[1])
        self._spares.append(buffer)
        self._spare_bytes += buffer.nbytes

    def _trim(self) -> None:
        while self._spares and self._kept.used + self._spare_bytes > self.budget:
            self._spare_bytes -= self._spares.pop(0).nbytes
