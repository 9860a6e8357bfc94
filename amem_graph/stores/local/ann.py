"""An HNSW index (usearch) over the mirror's vectors, for stores past the size where an exact
numpy top-k stops being cheap; persisted beside the SQLite file and never trusted for hits.

The index only proposes candidates: every hit is re-checked against the mirror's filter mask
and re-scored exactly from the mirror's vectors, so a stale or damaged index can cost recall,
never a wrong hit. Keys are the memories' SQLite ``rid`` (the same in every process); each
indexed row also has a 64-bit hash of its vector bytes, so an index loaded from disk (or kept
across a mirror rebuild) is reconciled with the mirror row by row: rows gone or changed are
removed, rows missing are added, and past ``_REBUILD_SHARE`` of the store it is built anew.
Within a process the mirror marks the rows it touches (``_Mirror.dirty``) and the next search
applies them first. bench/bench_ann.py chose the library and the parameters below.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import json
import logging
import os
import time
import uuid
import weakref
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from amem_graph.stores.local.mirror import _Mirror

log = logging.getLogger(__name__)

#: stores with fewer memories than this are searched exactly (bench/RESULTS.md, "ANN index")
ANN_THRESHOLD = 100_000
#: HNSW graph degree and build/search beams: at 1M (bench_ann.py) the store's recall@10 was
#: 0.990 at search beam 128 and 1.000 at 256
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 256
#: vectors are kept as int8 in the index (a quarter of float32): hits are re-scored exactly
#: from the mirror's float32 rows, which mends int8's near-tie errors
DTYPE = "i8"
#: a reconcile touching more than this share of the rows builds the index anew
_REBUILD_SHARE = 0.2
_FORMAT = 1
_HASH_CHUNK = 8192
_MULT = np.random.default_rng(0x5EED).integers(1, 2**62, size=4096, dtype=np.uint64) * 2 + 1
_warned = False


def ann_available() -> bool:
    """Whether usearch is installed (the ``[ann]`` extra)."""
    return importlib.util.find_spec("usearch") is not None


def warn_missing() -> None:
    """Say once per process that a big store is searched exactly for want of usearch."""
    global _warned
    if not _warned:
        _warned = True
        log.warning(
            "usearch is not installed: vector search stays exact on this large store "
            "(pip install 'amem-graph[ann]' for the ANN index)"
        )


def row_hashes(vectors: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's bytes (integer arithmetic: the same in every process)."""
    out = np.empty(len(vectors), dtype=np.uint64)
    mult = _MULT[: vectors.shape[1]]
    for start in range(0, len(vectors), _HASH_CHUNK):
        part = vectors[start : start + _HASH_CHUNK].view(np.uint32).astype(np.uint64)
        out[start : start + len(part)] = (part * mult).sum(axis=1, dtype=np.uint64)
    return out


def _new_index(dims: int) -> Any:
    from usearch.index import Index

    return Index(
        ndim=dims,
        metric="ip",
        dtype=DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def _crc(path: str) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


class AnnIndex:
    """The usearch index of one store, kept in step with its mirror (see the module doc)."""

    def __init__(self, dims: int, path: str | None) -> None:
        self.dims = dims
        #: ``<db>.ann``: keys, hashes, checksum and the name of the data file beside it
        self.path = path
        self._index = _new_index(dims)
        self._synced: weakref.ref[_Mirror] | None = None
        #: per mirror position: the rid indexed for it (-1: none) and its vector's hash
        self._key_of_pos = np.full(0, -1, dtype=np.int64)
        self._hash_of_pos = np.zeros(0, dtype=np.uint64)
        #: per rid: the mirror position it was indexed from (-1: none)
        self._pos_of_key = np.full(0, -1, dtype=np.int64)
        self._unsaved = False
        #: (keys, hashes) read from the file, until the first sync reconciles them
        self._loaded: tuple[np.ndarray, np.ndarray] | None = None
        #: what the last sync did, for tests and benches: "loaded", "reconciled", "built"
        self.last_sync = ""
        if path is not None:
            self._load(path)

    def __len__(self) -> int:
        return len(self._index)

    # -- persistence ----------------------------------------------------------------------

    def _load(self, path: str) -> None:
        """Read the index ``path`` names if it agrees with it (size, checksum, dims, count);
        else start empty (the first sync builds it)."""
        if not os.path.exists(path):
            return
        try:
            with np.load(path, allow_pickle=False) as meta:
                head = json.loads(str(meta["head"]))
                keys = np.asarray(meta["keys"], dtype=np.int64)
                hashes = np.asarray(meta["hashes"], dtype=np.uint64)
            data = os.path.join(os.path.dirname(path), str(head.get("data")))
            ok = (
                head.get("format") == _FORMAT
                and head.get("dims") == self.dims
                and head.get("dtype") == DTYPE
                and head.get("size") == os.path.getsize(data)
                and head.get("crc") == _crc(data)
                and len(keys) == len(hashes)
            )
            if ok:
                index = _new_index(self.dims)
                index.load(data)
                ok = len(index) == len(keys)
        except (OSError, ValueError, KeyError, RuntimeError, TypeError, EOFError) as exc:
            log.warning("the ANN index at %s is unreadable (%s): rebuilding it", path, exc)
            return
        if not ok:
            log.warning("the ANN index at %s does not match its data: rebuilding it", path)
            return
        self._index = index
        index.expansion_search = EXPANSION_SEARCH
        self._loaded = (keys, hashes)
        self.last_sync = "loaded"

    def save(self) -> None:
        """Write the graph to a new data file, then atomically replace ``<db>.ann`` (keys,
        hashes, checksum and the data file's name): a reader sees the old pair or the new one,
        however many processes save at once. Data files finished before this one began are
        no longer named by anyone and are removed."""
        if self.path is None or not self._unsaved:
            return
        valid = self._key_of_pos >= 0
        started = time.time()
        data = f"{self.path}.{os.getpid()}-{uuid.uuid4().hex[:12]}"
        tmp = data + ".tmp"
        try:
            self._index.save(data)
            head = {
                "format": _FORMAT,
                "dims": self.dims,
                "dtype": DTYPE,
                "data": os.path.basename(data),
                "size": os.path.getsize(data),
                "crc": _crc(data),
            }
            with open(tmp, "wb") as f:
                np.savez(
                    f,
                    head=np.asarray(json.dumps(head)),
                    keys=self._key_of_pos[valid],
                    hashes=self._hash_of_pos[valid],
                )
            os.replace(tmp, self.path)
            self._unsaved = False
        except OSError as exc:  # a read-only directory: the index still works in memory
            log.warning("cannot save the ANN index at %s: %s", self.path, exc)
            for leftover in (data, tmp):
                with contextlib.suppress(OSError):
                    os.remove(leftover)
            return
        for old in glob.glob(glob.escape(self.path) + ".*-*"):
            with contextlib.suppress(OSError):
                if old != data and os.path.getmtime(old) < started:
                    os.remove(old)

    # -- keeping in step with the mirror --------------------------------------------------

    def sync(self, mirror: _Mirror) -> None:
        """Bring the index to the mirror's rows: the dirty ones, or all after a rebuild."""
        if self._synced is not None and self._synced() is mirror:
            dirty = mirror.dirty
            if dirty:
                mirror.dirty = set()
                self._apply(mirror, np.fromiter(dirty, dtype=np.int64, count=len(dirty)))
            return
        if self._synced is not None:  # the mirror was rebuilt: what the index holds now
            valid = self._key_of_pos >= 0
            held = (self._key_of_pos[valid], self._hash_of_pos[valid])
        else:
            held = self._loaded or (np.zeros(0, np.int64), np.zeros(0, np.uint64))
            self._loaded = None
        mirror.dirty = set()
        self._reconcile(mirror, *held)
        self._synced = weakref.ref(mirror)

    def _wanted(self, mirror: _Mirror, pos: np.ndarray) -> np.ndarray:
        kept: np.ndarray = pos[mirror.alive[pos] & mirror.has_vec[pos]]
        return kept

    def _reconcile(self, mirror: _Mirror, keys: np.ndarray, hashes: np.ndarray) -> None:
        """Keep the held rows whose rid and vector the mirror still has; add the others."""
        n = len(mirror.ids)
        want = self._wanted(mirror, np.arange(n, dtype=np.int64))
        rids = mirror.rid[want]
        want_hash = row_hashes(mirror.vectors_at(want))
        top = int(max(rids.max(initial=-1), keys.max(initial=-1))) + 1
        pos_by_rid = np.full(top, -1, dtype=np.int64)
        pos_by_rid[rids] = np.arange(len(want))
        slot = pos_by_rid[keys] if len(keys) else np.zeros(0, dtype=np.int64)
        keep = slot >= 0
        keep[keep] = want_hash[slot[keep]] == hashes[keep]
        stale = keys[~keep]
        fresh = np.ones(len(want), dtype=bool)
        fresh[slot[keep]] = False
        self._key_of_pos = np.full(n, -1, dtype=np.int64)
        self._hash_of_pos = np.zeros(n, dtype=np.uint64)
        self._pos_of_key = np.full(top, -1, dtype=np.int64)
        if len(stale) + int(fresh.sum()) > _REBUILD_SHARE * max(len(want), 1) or not keep.any():
            self._index = _new_index(self.dims)
            fresh[:] = True
            self.last_sync = "built"
            if len(want):
                log.info("building the ANN index over %d vectors", len(want))
        else:
            if len(stale):
                self._index.remove(stale.astype(np.uint64))
            self.last_sync = "reconciled" if len(stale) or fresh.any() else self.last_sync
            kept = want[slot[keep]]
            self._index_rows(kept, mirror.rid[kept], want_hash[slot[keep]], add=False)
        adds = want[fresh]
        self._index_rows(adds, mirror.rid[adds], want_hash[fresh], add=True, mirror=mirror)
        if len(stale) or fresh.any():
            self._unsaved = True
            self.save()

    def _apply(self, mirror: _Mirror, pos: np.ndarray) -> None:
        """Re-index these mirror positions as they are now (changed, dropped or new)."""
        self._grow(len(mirror.ids), int(mirror.rid[pos].max(initial=-1)) + 1)
        old = self._key_of_pos[pos]
        wants = mirror.alive[pos] & mirror.has_vec[pos]
        hashes = row_hashes(mirror.vectors_at(pos))
        same = (old == mirror.rid[pos]) & (self._hash_of_pos[pos] == hashes) & wants
        drop = (old >= 0) & ~same
        if drop.any():
            self._index.remove(old[drop].astype(np.uint64))
            self._pos_of_key[old[drop]] = -1
            self._key_of_pos[pos[drop]] = -1
        add = wants & ~same
        if add.any():
            adds = pos[add]
            self._index_rows(adds, mirror.rid[adds], hashes[add], add=True, mirror=mirror)
        if drop.any() or add.any():
            self._unsaved = True

    def _grow(self, n: int, top: int) -> None:
        if n > len(self._key_of_pos):
            grow = max(n, 2 * len(self._key_of_pos)) - len(self._key_of_pos)
            self._key_of_pos = np.concatenate([self._key_of_pos, np.full(grow, -1, np.int64)])
            self._hash_of_pos = np.concatenate([self._hash_of_pos, np.zeros(grow, np.uint64)])
        if top > len(self._pos_of_key):
            grow = max(top, 2 * len(self._pos_of_key)) - len(self._pos_of_key)
            self._pos_of_key = np.concatenate([self._pos_of_key, np.full(grow, -1, np.int64)])

    def _index_rows(
        self,
        pos: np.ndarray,
        rids: np.ndarray,
        hashes: np.ndarray,
        *,
        add: bool,
        mirror: _Mirror | None = None,
    ) -> None:
        """Record rows as indexed; with ``add``, also put their vectors in the index."""
        if not len(pos):
            return
        self._grow(int(pos.max()) + 1, int(rids.max()) + 1)
        if add and mirror is not None:
            self._index.add(rids.astype(np.uint64), mirror.vectors_at(pos), threads=0)
        self._key_of_pos[pos] = rids
        self._hash_of_pos[pos] = hashes
        self._pos_of_key[rids] = pos

    # -- search ---------------------------------------------------------------------------

    def candidates(self, q: np.ndarray, count: int) -> np.ndarray:
        """Mirror positions of the ``count`` nearest indexed vectors to ``q`` (approximate)."""
        count = min(count, len(self._index))
        if count <= 0:
            return np.zeros(0, dtype=np.int64)
        found = self._index.search(q, count, threads=1)
        keys = np.asarray(found.keys, dtype=np.int64)
        keys = keys[(keys >= 0) & (keys < len(self._pos_of_key))]
        pos: np.ndarray = self._pos_of_key[keys]
        return pos[pos >= 0]


#: over-fetch grows by this factor while too few candidates pass the filter
_GROW = 4
#: past this many candidates (or a quarter of the index) the admitted rows are searched exactly
_FETCH_LIMIT = 4096


def fetch_for(k: int, share: float) -> int:
    """Candidates first asked of the index for k hits when the filter admits ``share`` of it:
    enough that about k pass the filter, with room for the exact re-scoring to reorder."""
    return max(2 * k, int(k / max(share, 1e-9) * 1.5) + 10)


def ann_top(
    mirror: _Mirror, index: AnnIndex, q: np.ndarray, k: int, mask: np.ndarray, pos: np.ndarray
) -> list[tuple[str, float]]:
    """The k best admitted rows (``mask``; ``pos`` its vector-bearing positions) by exact
    cosine, from the index's candidates: over-fetched in proportion to the share the filter
    admits, grown while fewer than k pass it, and searched exactly over ``pos`` when even a
    wide fetch does not find k (a filter the index cannot serve loses no hits)."""
    total = len(index)
    fetch = fetch_for(k, len(pos) / max(total, 1))
    while fetch <= max(_FETCH_LIMIT, 2 * k) and fetch < total // 4:
        cand = index.candidates(q, fetch)
        cand = np.unique(cand[mask[cand] & mirror.has_vec[cand]])
        if len(cand) >= k:
            return mirror.top_at(cand, mirror.cosines(q, cand), k)
        fetch *= _GROW
    return mirror.top_at(pos, mirror.scope_cosines(q, pos), k)
