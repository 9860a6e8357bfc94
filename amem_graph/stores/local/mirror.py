"""The read mirror of the SQLite truth: numpy columns for filtered vector search, the BM25 index,
and the task and episode hubs' members (for siblings).

Edges themselves are not mirrored: ``edges`` reads them from SQLite through its indexes (a
recall's hop asks for a few seeds' edges). A networkx graph of every edge was a third of the
mirror's memory and of its build time at 100k memories, for lookups SQLite answers in
well under a millisecond."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np

from amem_graph.stores.base import SIBLING_EDGES, MemoryFilter
from amem_graph.stores.local.blocks import SCOPE_BLOCKS_BYTES, ScopeBlocks
from amem_graph.stores.local.bm25 import BM25Index
from amem_graph.stores.local.heap import release_freed
from amem_graph.stores.local.recent import Recent
from amem_graph.stores.local.row_order import ROW_BLOCK, ScopeSortedRows, scattered_scopes

#: mirror column -> value of an empty slot
_GROW_FILL: dict[str, float] = {
    "vectors": 0.0,
    "rid": -1,
    "alive": 0.0,
    "has_vec": 0.0,
    "scope": -1,
    "status": -1,
    "agent": -1,
    "task": -1,
    "valid_from": 0.0,
    "valid_to": np.inf,
    "created_at": 0.0,
    "importance": 0.0,
    "successes": 0.0,
    "failures": 0.0,
}
#: a filter admitting under this share of the rows is searched on its own rows (vectors
#: gathered, postings cut to them): the selective-scope fast path
SELECTIVE_SHARE = 0.25
#: bytes of filter masks and positions each of the mirror's filter caches may hold
_MASKS_BYTES = 64 << 20
_STATUS_CODES = {"active": 0, "quarantined": 1, "retracted": 2, "superseded": 3, "archived": 4}
_STATUS_NAMES = {code: name for name, code in _STATUS_CODES.items()}


#: what a filter admits: (mask over the rows, sorted positions)
_Admitted = tuple[np.ndarray, np.ndarray]


def _among(column: np.ndarray, codes: Sequence[int]) -> np.ndarray:
    """Where ``column`` holds one of ``codes``: one code (a recall's scope, its status) is a
    plain comparison, which costs a tenth of ``np.isin``'s (at 100k rows: 6 against 57 us,
    and 250 us against the int8 status column). A first recall in each scope pays it."""
    if len(codes) == 1:
        return column == codes[0]  # type: ignore[no-any-return]
    return np.isin(column, codes)


class _Placed:
    """A hub's member positions, in a buffer grown by doubling: a member joining a task hub
    of thousands is one store, not a copy of them all, and no recall pays for placing a hub
    on its first walk (a hub of 2,000 memories took 2 ms)."""

    __slots__ = ("buf", "n")

    def __init__(self, rows: np.ndarray) -> None:
        self.buf, self.n = rows, len(rows)

    def add(self, i: int) -> None:
        if self.n == len(self.buf):
            self.buf = np.resize(self.buf, max(4, 2 * self.n))
        self.buf[self.n] = i
        self.n += 1

    def extend(self, rows: np.ndarray) -> None:
        end = self.n + len(rows)
        if end > len(self.buf):
            self.buf = np.resize(self.buf, max(4, 2 * end))
        self.buf[self.n : end] = rows
        self.n = end

    @property
    def rows(self) -> np.ndarray:
        return self.buf[: self.n]


def _nbytes(admitted: _Admitted) -> int:
    return int(admitted[0].nbytes + admitted[1].nbytes)


class _Mirror(ScopeSortedRows):
    """numpy columns for filtered vector search, BM25, and the sibling hubs' members."""

    def __init__(self, dims: int, blocks_bytes: int = SCOPE_BLOCKS_BYTES) -> None:
        self.dims = dims
        self.pos: dict[str, int] = {}
        self.ids: list[str] = []
        cap = 1024
        self.vectors = np.zeros((cap, dims), dtype=np.float32)
        self.vec_row = np.arange(cap, dtype=np.int64)
        self.sorted_upto = 0
        self.permuted = False
        #: each row's SQLite rid: the ANN index's key, the same in every process
        self.rid = np.full(cap, -1, dtype=np.int64)
        #: rows touched since the ANN index last looked (None: no index is kept)
        self.dirty: set[int] | None = None
        self.alive = np.zeros(cap, dtype=bool)
        self.has_vec = np.zeros(cap, dtype=bool)
        self.scope = np.full(cap, -1, dtype=np.int32)
        self.status = np.full(cap, -1, dtype=np.int8)
        self.agent = np.full(cap, -1, dtype=np.int32)
        self.task = np.full(cap, -1, dtype=np.int32)
        self.valid_from = np.zeros(cap, dtype=np.float64)
        self.valid_to = np.full(cap, np.inf, dtype=np.float64)
        self.created_at = np.zeros(cap, dtype=np.float64)
        #: what recall's priors read (``RankFields``), so ranking needs no document
        self.importance = np.zeros(cap, dtype=np.float64)
        self.successes = np.zeros(cap, dtype=np.float64)
        self.failures = np.zeros(cap, dtype=np.float64)
        #: via edge type -> hub id -> member memory ids, and memory id -> its hubs
        self.members: dict[str, dict[str, set[str]]] = {t: {} for t in SIBLING_EDGES}
        self.hubs: dict[str, dict[str, tuple[str, ...]]] = {t: {} for t in SIBLING_EDGES}
        self.codes: dict[str, dict[str, int]] = {"scope": {}, "agent": {}, "task": {}}
        self.bm25 = BM25Index()  # documents numbered by row (``vec_row``)
        #: filter without as_of -> (mask, sorted positions) it admits
        self._masks: Recent[MemoryFilter, _Admitted] = Recent(_MASKS_BYTES, _nbytes)
        #: filter (with as_of) -> (mask, sorted positions) it admits
        self._admitted: Recent[MemoryFilter, _Admitted] = Recent(_MASKS_BYTES // 8, _nbytes)
        #: filter without as_of -> (from, until, (mask, positions)): what it admits at any
        #: time in [from, until), where no row's validity starts or ends
        self._valid: Recent[MemoryFilter, tuple[float, float, _Admitted]] = Recent(
            _MASKS_BYTES, lambda memo: _nbytes(memo[2])
        )
        #: selective filters' gathered vectors
        self._blocks = ScopeBlocks(blocks_bytes, ROW_BLOCK)
        #: (via, hub) -> its members' positions, kept as members join (a hub a member left
        #: is placed again when next walked)
        self._hub_pos: dict[tuple[str, str], _Placed] = {}
        #: scope code -> its rows in order, kept as rows join, so a selective scope's first
        #: mask costs its own size (a scope a row left is placed again when next asked)
        self._scope_rows: dict[int, _Placed] = {}
        #: while a whole build runs (``load_edges``): each id string once, and each hub's
        #: member positions as its edges come (None: a member has no row)
        self._build_keys: dict[str, str] = {}
        self._placing: dict[tuple[str, str], list[int] | None] = {}

    def _code(self, column: str, value: str | None) -> int:
        if value is None:
            return -1
        book = self.codes[column]
        code = book.get(value)
        if code is None:
            code = book[value] = len(book)
            if column == "scope":  # no rows yet: placed from its first one on
                self._scope_rows[code] = _Placed(np.zeros(0, dtype=np.int64))
        return code

    def _grow(self, needed: int) -> None:
        """Room for ``needed`` rows: a quarter more each time (still amortised O(1) per
        row), not double, so a million rows carry 1.5 GB of vectors, not up to 3 GB."""
        cap = len(self.alive)
        if needed <= cap:
            return
        new = -(-max(needed, cap + cap // 4) // ROW_BLOCK) * ROW_BLOCK
        for name, fill in _GROW_FILL.items():
            old = getattr(self, name)
            arr = np.full((new, *old.shape[1:]), fill, dtype=old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)
        self.vec_row = np.concatenate([self.vec_row[:cap], np.arange(cap, new, dtype=np.int64)])

    def _changed(self) -> None:
        self._masks.clear()
        self._admitted.clear()
        self._valid.clear()
        self._blocks.clear()

    def upsert(self, row: sqlite3.Row) -> None:
        self._changed()
        mid = row["id"]
        i = self.pos.get(mid)
        scope = self._code("scope", row["scope"])
        if i is None:
            i = len(self.ids)
            self._grow(i + 1)
            self.ids.append(mid)
            self.pos[mid] = i
            if (placed := self._scope_rows.get(scope)) is not None:
                placed.add(i)  # one row: no array made for it
        elif self.scope[i] != scope:  # both are placed again when next asked
            self._scope_rows.pop(int(self.scope[i]), None)
            self._scope_rows.pop(scope, None)
        self.alive[i] = True
        self.rid[i] = row["rid"]
        if self.dirty is not None:
            self.dirty.add(i)
        blob = row["embedding"]
        if blob is not None and len(blob) == 4 * self.dims:
            self.vectors[self.vec_row[i]] = np.frombuffer(blob, dtype=np.float32)
            self.has_vec[i] = True
        else:
            self.has_vec[i] = False
        self.scope[i] = scope
        self.status[i] = _STATUS_CODES[row["status"]]
        self.agent[i] = self._code("agent", row["agent"])
        self.task[i] = self._code("task", row["task"])
        self.valid_from[i] = row["valid_from"]
        self.valid_to[i] = np.inf if row["valid_to"] is None else row["valid_to"]
        self.created_at[i] = row["created_at"]
        self.importance[i] = row["importance"]
        self.successes[i] = row["successes"]
        self.failures[i] = row["failures"]
        doc = int(self.vec_row[i])
        if not self.bm25.indexed_as(doc, row["search_text"]):  # status, credit keep the text
            self.bm25.set(doc, row["search_text"])

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` rows at once (a whole build knows its count)."""
        self._grow(rows)

    def sort_before_load(self, scopes: Sequence[str]) -> None:
        """A whole build, before any row is loaded: ``scopes`` are the rows' scopes in load
        order. When a scope few enough to be searched on its own rows lies scattered (tenants
        writing at once), each position's row is set in scope order now, so the load writes
        every vector to its sorted row: no copy of the vectors later (``cluster``: at 1M
        memories 3.5 s and 1.5 GB more for a moment)."""
        n = len(scopes)
        codes = np.fromiter((self._code("scope", s) for s in scopes), np.int32, n)
        order = np.argsort(codes, kind="stable")
        if scattered_scopes(codes[order], order, lambda size: size < n * SELECTIVE_SHARE):
            self.vec_row[order] = np.arange(n)
            self.sorted_upto, self.permuted = n, True

    def loaded(self) -> None:
        """A whole build is over: place the hubs its edges listed, forget its table of node
        keys, return what it freed."""
        for key, listed in self._placing.items():
            if listed is not None:
                self._hub_pos[key] = _Placed(np.asarray(listed, dtype=np.int64))
        self._placing.clear()
        self._build_keys.clear()
        release_freed()

    def _hub_positions(self, members: set[str]) -> _Placed:
        """The positions of a hub's members, any order (``siblings`` sorts what it finds);
        a member with no row (an orphan edge) is skipped."""
        try:
            rows = np.fromiter(map(self.pos.__getitem__, members), np.int64, len(members))
        except KeyError:
            rows = np.asarray([self.pos[o] for o in members if o in self.pos], dtype=np.int64)
        return _Placed(rows)

    def load(self, rows: Sequence[sqlite3.Row], text: bool = True) -> None:
        """Append rows not yet mirrored, column by column (a whole build's path; the state is
        the one ``upsert`` of each row in turn leaves). ``text=False``: the rows carry no
        ``search_text`` and are not indexed (the build restores a saved BM25 index)."""
        if not rows:
            return
        self._changed()
        start = len(self.ids)
        end = start + len(rows)
        self._grow(end)
        ids = [r["id"] for r in rows]
        # the hub member sets will share these id strings (``load_edges``)
        self._build_keys.update(zip(ids, ids, strict=True))
        self.ids.extend(ids)
        self.pos.update(zip(ids, range(start, end), strict=True))
        at = slice(start, end)
        self.alive[at] = True
        self.rid[at] = [r["rid"] for r in rows]
        if self.dirty is not None:
            self.dirty.update(range(start, end))
        width = 4 * self.dims
        blobs = [r["embedding"] for r in rows]
        has = np.fromiter((b is not None and len(b) == width for b in blobs), bool, len(rows))
        self.has_vec[at] = has
        if has.any():
            joined = b"".join(b for b, h in zip(blobs, has.tolist(), strict=True) if h)
            block = np.frombuffer(joined, dtype=np.float32).reshape(-1, self.dims)
            self.vectors[self.vec_row[start + np.flatnonzero(has)]] = block
        for column in ("scope", "agent", "task"):
            getattr(self, column)[at] = [self._code(column, r[column]) for r in rows]
        codes = self.scope[at]
        order = np.argsort(codes, kind="stable")  # each scope's rows, in row order
        found, first = np.unique(codes[order], return_index=True)
        for code, rows_of in zip(found.tolist(), np.split(order, first[1:]), strict=True):
            self._place_scope(code, start + rows_of)
        self.status[at] = [_STATUS_CODES[r["status"]] for r in rows]
        for column in ("valid_from", "created_at", "importance", "successes", "failures"):
            getattr(self, column)[at] = [r[column] for r in rows]
        self.valid_to[at] = [np.inf if r["valid_to"] is None else r["valid_to"] for r in rows]
        if text:
            self.bm25.set_many(self.vec_row[at].tolist(), [r["search_text"] for r in rows])

    def load_edges(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Add ``(type, src, dst)`` of sibling edges read back from SQLite (a whole build's
        path; once ``loaded``, the state ``add_edge`` of each leaves). Each hub's member
        positions are listed as its edges come and placed in arrays at the end (``loaded``):
        one store into a numpy buffer per edge was a third of this loop at 1M edges."""
        keys = self._build_keys  # one id string per memory and hub, not one per edge end
        pos, placing = self.pos, self._placing
        for etype, src, dst in rows:
            src, dst = keys.setdefault(src, src), keys.setdefault(dst, dst)
            if self._record(etype, src, dst):
                listed = placing.setdefault((etype, dst), [])
                i = pos.get(src)
                if listed is not None and i is not None:
                    listed.append(i)
                else:  # an orphan edge: the hub is placed from its members when walked
                    placing[(etype, dst)] = None

    def drop(self, mid: str) -> None:
        self._changed()
        i = self.pos.get(mid)
        if i is not None:
            if self.dirty is not None:
                self.dirty.add(i)
            self.alive[i] = False
            self.has_vec[i] = False
            self.bm25.remove(int(self.vec_row[i]))

    def _codes_for(self, column: str, values: Sequence[str]) -> list[int]:
        book = self.codes[column]
        return [book[v] for v in values if v in book]

    def _place_scope(self, code: int, rows: np.ndarray) -> None:
        """New rows ``rows`` (ascending, after every row placed before) joined scope ``code``."""
        placed = self._scope_rows.get(code)
        if placed is not None:
            placed.extend(rows.astype(np.int64, copy=False))

    def _scope_members(self, codes: Sequence[int]) -> np.ndarray | None:
        """The rows of these scopes, ascending, dead ones included; None when they are too
        many to filter on their own (``selective``), before any is copied or sorted."""
        parts = []
        for code in codes:
            placed = self._scope_rows.get(code)
            if placed is None:  # a row left it since it was placed
                n = len(self.ids)
                placed = self._scope_rows[code] = _Placed(np.flatnonzero(self.scope[:n] == code))
            parts.append(placed.rows)
        if not self.selective(sum(len(rows) for rows in parts)):
            return None
        if len(parts) == 1:
            return parts[0]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def authors(self, agent_ids: Sequence[str], flt: MemoryFilter) -> set[str]:
        """Those of ``agent_ids`` with a row the filter admits (``GraphStore.authors``)."""
        known = {a: code for a in agent_ids if (code := self.codes["agent"].get(a)) is not None}
        if not known:
            return set()
        admitted = self.admitted(flt)[1]  # its positions: a selective filter costs its size
        present = np.isin(np.fromiter(known.values(), np.int32), self.agent[admitted])
        return {a for a, hit in zip(known, present.tolist(), strict=True) if hit}

    def one_per_scope(self, flt: MemoryFilter) -> dict[str, str]:
        """Scope -> the first row of it the filter admits (``GraphStore.one_per_scope``)."""
        positions = self.admitted(flt)[1]
        codes, first = np.unique(self.scope[positions], return_index=True)
        names = {code: name for name, code in self.codes["scope"].items()}
        at = positions[first].tolist()
        return {names[c]: self.ids[i] for c, i in zip(codes.tolist(), at, strict=True)}

    def mask(self, flt: MemoryFilter) -> np.ndarray:
        """Positions the filter admits, as a mask over the rows (see ``admitted``)."""
        return self.admitted(flt)[0]

    def admitted(self, flt: MemoryFilter) -> tuple[np.ndarray, np.ndarray]:
        """(mask, sorted positions) the filter admits, memoised until the next change.

        The part without ``as_of`` is memoised too (a handful of filters are in use at a
        time); validity is applied to its positions, so a selective filter costs its own size,
        not the store's (one recall asks several times with the same ``as_of``).
        """
        hit = self._admitted.get(flt)
        if hit is not None:
            return hit
        key = replace(flt, as_of=None)
        base = self._masks.get(key)
        if base is None:
            base = self._compute(key)
            self._masks.put(key, base)
        hit = base if flt.as_of is None else self._valid_at(key, base, flt.as_of.timestamp())
        self._admitted.put(flt, hit)
        return hit

    def _valid_at(
        self, key: MemoryFilter, base: tuple[np.ndarray, np.ndarray], t: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(mask, positions) of ``base`` (the filter ``key`` without as_of) valid at time
        ``t``. Recall asks at "now", a new time each call: the answer is kept until the next
        time a row's validity starts or ends, so a store whose validity does not change
        between recalls is not scanned for it each time."""
        memo = self._valid.get(key)
        if memo is not None and memo[0] <= t < memo[1]:
            return memo[2]
        mask, pos = base
        starts, ends = self.valid_from[pos], self.valid_to[pos]
        valid = (starts <= t) & (ends > t)
        if not valid.all():  # else ``base`` itself, shared: nothing changes either
            pos = pos[valid]
            mask = np.zeros(len(self.ids), dtype=bool)
            mask[pos] = True
        later = np.concatenate([starts[starts > t], ends[ends > t]])
        until = float(later.min()) if len(later) else math.inf
        self._valid.put(key, (t, until, (mask, pos)))
        return mask, pos

    def selective(self, admitted: int) -> bool:
        """Whether a filter admitting this many rows is searched on its own rows."""
        return admitted < len(self.ids) * SELECTIVE_SHARE

    def _compute(self, flt: MemoryFilter) -> _Admitted:
        """(mask, sorted positions) of a filter without as_of. Scopes whose rows are few are
        filtered on those rows alone: a tenant's first recall costs its own rows and one
        zeroed mask, not a scan of every column (caches cold: 0.04 against 0.08 ms at 100k
        rows, 0.11 against 0.53 ms at 1M)."""
        n = len(self.ids)
        if flt.scopes is not None:
            rows = self._scope_members(self._codes_for("scope", flt.scopes))
            if rows is not None:
                pos = rows[self._admits(flt, rows)]
                mask = np.zeros(n, dtype=bool)
                mask[pos] = True
                return mask, pos
        mask = self._admits(flt, slice(0, n))
        return mask, np.flatnonzero(mask)

    def _admits(self, flt: MemoryFilter, at: np.ndarray | slice) -> np.ndarray:
        """Whether each row ``at`` is alive and in the filter's scopes, statuses, agents and
        tasks (as_of aside)."""
        m = self.alive[at].copy()
        if flt.scopes is not None:
            m &= _among(self.scope[at], self._codes_for("scope", flt.scopes))
        if flt.statuses is not None:
            codes = [_STATUS_CODES[s] for s in flt.statuses if s in _STATUS_CODES]
            m &= _among(self.status[at], codes)
        if flt.agents is not None:
            m &= _among(self.agent[at], self._codes_for("agent", flt.agents))
        if flt.tasks is not None:
            m &= _among(self.task[at], self._codes_for("task", flt.tasks))
        return m

    def top_at(self, pos: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k best of positions ``pos`` scored ``scores`` (aligned), by score then id."""
        if not len(pos):
            return []
        if len(pos) > k:
            part = np.argpartition(-scores, k - 1)[:k]
            keep = scores >= scores[part].min()  # keep ties at the cut for id order
            pos, scores = pos[keep], scores[keep]
        ranked = sorted(zip(pos.tolist(), scores.tolist(), strict=True),
                        key=lambda p: (-p[1], self.ids[p[0]]))[:k]  # fmt: skip
        return [(self.ids[i], s) for i, s in ranked]

    def top_of(
        self, scores: np.ndarray, k: int, pos: np.ndarray | None = None
    ) -> list[tuple[str, float]]:
        """The k best positive ``scores`` (one per position, or per position of ``pos`` when
        given), by score then id: the cut is found before anything is gathered beyond the
        positions at or above it.

        The cut is selected among the positive scores when they are under half the array,
        else as the k-th smallest negated score: numpy's selection of a high rank is ~30x
        slower on an array that is mostly its smallest value, as BM25's is (0 for every
        document no query term matched: 8 ms against 0.25 ms at 100k positions, 1% matched)."""
        at = np.flatnonzero(scores > 0)
        if at.size > k and at.size > len(scores) // 2:  # the k-th best is positive
            at = np.flatnonzero(scores >= -np.partition(-scores, k - 1)[k - 1])
        elif at.size > k:
            matched = scores[at]
            at = at[matched >= np.partition(matched, at.size - k)[at.size - k]]
        return self.top_at(at if pos is None else pos[at], scores[at], k)

    def add_edge(self, etype: str, src: str, dst: str) -> None:
        """A written edge: a sibling edge joins its hub (other types are not mirrored)."""
        if etype in self.members:
            self._join(etype, src, dst)

    def _join(self, etype: str, src: str, dst: str) -> None:
        """Memory ``src`` is a member of hub ``dst``, its position placed with the hub's."""
        if self._record(etype, src, dst):
            key, i = (etype, dst), self.pos.get(src)
            placed = self._hub_pos.get(key)
            if i is None:  # an orphan edge: placed again from its members when walked
                self._hub_pos.pop(key, None)
            elif placed is not None:
                placed.add(i)
            elif len(self.members[etype][dst]) == 1:  # a new hub: placed from its first member
                self._hub_pos[key] = _Placed(np.array([i], dtype=np.int64))

    def _record(self, etype: str, src: str, dst: str) -> bool:
        """Record memory ``src`` among hub ``dst``'s members and the hub among its hubs;
        whether it was not a member before. A memory's hubs are a tuple (nearly always of
        one): a set per memory was a tenth of the mirror at 100k memories."""
        hub_members = self.members[etype]
        members = hub_members.get(dst)
        if members is None:
            members = hub_members[dst] = set()
        joined = src not in members
        if joined:
            members.add(src)
        hubs = self.hubs[etype]
        known = hubs.get(src, ())
        if dst not in known:
            hubs[src] = (*known, dst)
        return joined

    def remove_edge(self, etype: str, src: str, dst: str) -> None:
        """A deleted edge: a sibling edge leaves its hub (an edge's key does not matter here:
        the hub edges are written with the empty key only)."""
        if etype in self.members:
            self.members[etype].get(dst, set()).discard(src)
            hubs = self.hubs[etype]
            left = tuple(hub for hub in hubs.get(src, ()) if hub != dst)
            if left:
                hubs[src] = left
            else:
                hubs.pop(src, None)
            self._hub_pos.pop((etype, dst), None)

    def remove_memory(self, mid: str) -> None:
        """A deleted memory leaves every hub (its edges went with it)."""
        for via, hubs in self.hubs.items():
            for hub in hubs.pop(mid, ()):
                self.members[via].get(hub, set()).discard(mid)
                self._hub_pos.pop((via, hub), None)

    def _hub_rows(self, via: str, hub: str) -> np.ndarray:
        """The positions of a hub's members (placed again if a member left since)."""
        placed = self._hub_pos.get((via, hub))
        if placed is None:
            placed = self._hub_positions(self.members[via].get(hub, set()))
            self._hub_pos[(via, hub)] = placed
        return placed.rows

    def newest_members(self, via: str, hub: str, scope: str, t: float) -> Iterator[str]:
        """Ids of the hub's members in ``scope`` written at or before ``t``, newest first, ties
        by the greater id: a few numpy passes over the hub, however large, not a sort of it."""
        code = self.codes["scope"].get(scope)
        if code is None or hub not in self.members[via]:
            return
        idx = self._hub_rows(via, hub)
        idx = idx[self.alive[idx] & (self.scope[idx] == code) & (self.created_at[idx] <= t)]
        while len(idx):
            times = self.created_at[idx]
            top = times.max()
            yield from sorted((self.ids[i] for i in idx[times == top].tolist()), reverse=True)
            idx = idx[times < top]

    def siblings(self, mid: str, via: str, mask: np.ndarray, limit: int) -> list[tuple[str, str]]:
        """Admitted memories sharing a ``via`` hub with ``mid``, nearest in time first."""
        i = self.pos.get(mid)
        if i is None:
            return []
        t = self.created_at[i]
        found: list[tuple[float, str, str]] = []
        for hub in sorted(self.hubs[via].get(mid, ())):
            idx = self._hub_rows(via, hub)
            idx = idx[mask[idx] & (idx != i)]
            gaps = np.abs(self.created_at[idx] - t)
            if len(idx) > limit:
                keep = gaps <= np.partition(gaps, limit - 1)[limit - 1]
                idx, gaps = idx[keep], gaps[keep]
            pairs = zip(gaps.tolist(), idx.tolist(), strict=True)
            found.extend((gap, self.ids[j], hub) for gap, j in pairs)
        found.sort()
        seen: set[str] = set()
        out: list[tuple[str, str]] = []
        for _, other, hub in found:
            if other not in seen:
                seen.add(other)
                out.append((other, hub))
                if len(out) == limit:
                    break
        return out
