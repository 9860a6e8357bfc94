"""The read mirror of the SQLite truth: numpy columns for filtered vector search, the BM25 index,
and a networkx graph of every edge with the task and episode hubs' members."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import networkx as nx
import numpy as np

from amem_graph.core.schema import EDGE_TYPES
from amem_graph.stores.base import SIBLING_EDGES, MemoryFilter
from amem_graph.stores.local.bm25 import BM25Index

#: mirror column -> value of an empty slot
_GROW_FILL: dict[str, float] = {
    "vectors": 0.0,
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
_STATUS_CODES = {"active": 0, "quarantined": 1, "retracted": 2, "superseded": 3}
_STATUS_NAMES = {code: name for name, code in _STATUS_CODES.items()}


class _Mirror:
    """numpy columns for filtered vector search plus a networkx graph of all edges."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.pos: dict[str, int] = {}
        self.ids: list[str] = []
        cap = 1024
        self.vectors = np.zeros((cap, dims), dtype=np.float32)
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
        self.hubs: dict[str, dict[str, set[str]]] = {t: {} for t in SIBLING_EDGES}
        self.codes: dict[str, dict[str, int]] = {"scope": {}, "agent": {}, "task": {}}
        self.graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self.bm25 = BM25Index()
        self._masks: dict[MemoryFilter, np.ndarray] = {}
        self._hub_pos: dict[tuple[str, str], np.ndarray] = {}

    def _code(self, column: str, value: str | None) -> int:
        if value is None:
            return -1
        book = self.codes[column]
        return book.setdefault(value, len(book))

    def _grow(self, needed: int) -> None:
        cap = len(self.alive)
        if needed <= cap:
            return
        new = max(needed, cap * 2)
        for name, fill in _GROW_FILL.items():
            old = getattr(self, name)
            arr = np.full((new, *old.shape[1:]), fill, dtype=old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)

    def upsert(self, row: sqlite3.Row) -> None:
        self._masks.clear()
        mid = row["id"]
        i = self.pos.get(mid)
        if i is None:
            i = len(self.ids)
            self._grow(i + 1)
            self.ids.append(mid)
            self.pos[mid] = i
        self.alive[i] = True
        blob = row["embedding"]
        if blob is not None and len(blob) == 4 * self.dims:
            self.vectors[i] = np.frombuffer(blob, dtype=np.float32)
            self.has_vec[i] = True
        else:
            self.has_vec[i] = False
        self.scope[i] = self._code("scope", row["scope"])
        self.status[i] = _STATUS_CODES[row["status"]]
        self.agent[i] = self._code("agent", row["agent"])
        self.task[i] = self._code("task", row["task"])
        self.valid_from[i] = row["valid_from"]
        self.valid_to[i] = np.inf if row["valid_to"] is None else row["valid_to"]
        self.created_at[i] = row["created_at"]
        self.importance[i] = row["importance"]
        self.successes[i] = row["successes"]
        self.failures[i] = row["failures"]
        if self.bm25.text(i) != row["search_text"]:  # status and credit changes keep the text
            self.bm25.set(i, row["search_text"])

    def drop(self, mid: str) -> None:
        self._masks.clear()
        i = self.pos.get(mid)
        if i is not None:
            self.alive[i] = False
            self.has_vec[i] = False
            self.bm25.remove(i)

    def _codes_for(self, column: str, values: Sequence[str]) -> list[int]:
        book = self.codes[column]
        return [book[v] for v in values if v in book]

    def mask(self, flt: MemoryFilter) -> np.ndarray:
        """Positions the filter admits. The part without ``as_of`` is memoised until the next
        change (a handful of filters are in use at a time); validity is cheap and per call."""
        key = replace(flt, as_of=None)
        cached = self._masks.get(key)
        if cached is None:
            if len(self._masks) > 32:
                self._masks.clear()
            cached = self._masks[key] = self._compute_mask(key)
        if flt.as_of is None:
            return cached
        n = len(self.ids)
        t = flt.as_of.timestamp()
        return cached & (self.valid_from[:n] <= t) & (self.valid_to[:n] > t)

    def _compute_mask(self, flt: MemoryFilter) -> np.ndarray:
        n = len(self.ids)
        m = self.alive[:n].copy()
        if flt.scopes is not None:
            m &= np.isin(self.scope[:n], self._codes_for("scope", flt.scopes))
        if flt.statuses is not None:
            codes = [_STATUS_CODES[s] for s in flt.statuses if s in _STATUS_CODES]
            m &= np.isin(self.status[:n], codes)
        if flt.agents is not None:
            m &= np.isin(self.agent[:n], self._codes_for("agent", flt.agents))
        if flt.tasks is not None:
            m &= np.isin(self.task[:n], self._codes_for("task", flt.tasks))
        return m

    def top_k(self, scores: np.ndarray, mask: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k best admitted positions, by score then id."""
        allowed = np.flatnonzero(mask)
        if not len(allowed):
            return []
        if len(allowed) > k:
            part = np.argpartition(-scores[allowed], k - 1)[:k]
            cutoff = scores[allowed[part]].min()
            allowed = allowed[scores[allowed] >= cutoff]  # keep ties at the cut for id order
        ranked = sorted(allowed.tolist(), key=lambda i: (-float(scores[i]), self.ids[i]))[:k]
        return [(self.ids[i], float(scores[i])) for i in ranked]

    def add_edge(self, etype: str, src: str, dst: str, key: str, props: dict[str, Any]) -> None:
        src_label, dst_label = EDGE_TYPES[etype]
        self.graph.add_edge((src_label, src), (dst_label, dst), key=(etype, key), props=props)
        if etype in self.members:
            self.members[etype].setdefault(dst, set()).add(src)
            self.hubs[etype].setdefault(src, set()).add(dst)
            self._hub_pos.pop((etype, dst), None)

    def remove_edge(self, etype: str, src: str, dst: str, key: str) -> None:
        src_label, dst_label = EDGE_TYPES[etype]
        if self.graph.has_edge((src_label, src), (dst_label, dst), key=(etype, key)):
            self.graph.remove_edge((src_label, src), (dst_label, dst), key=(etype, key))
        if etype in self.members:
            self.members[etype].get(dst, set()).discard(src)
            self.hubs[etype].get(src, set()).discard(dst)
            self._hub_pos.pop((etype, dst), None)

    def siblings(self, mid: str, via: str, mask: np.ndarray, limit: int) -> list[tuple[str, str]]:
        """Admitted memories sharing a ``via`` hub with ``mid``, nearest in time first."""
        i = self.pos.get(mid)
        if i is None:
            return []
        t = self.created_at[i]
        found: list[tuple[float, str, str]] = []
        for hub in sorted(self.hubs[via].get(mid, ())):
            idx = self._hub_pos.get((via, hub))
            if idx is None:
                members = self.members[via].get(hub, set())
                idx = np.fromiter((self.pos[o] for o in members), dtype=np.int64)
                self._hub_pos[(via, hub)] = idx
            idx = idx[mask[idx] & (idx != i)]
            if len(idx) > limit:
                gaps = np.abs(self.created_at[idx] - t)
                cut = np.partition(gaps, limit - 1)[limit - 1]
                idx = idx[gaps <= cut]
            for j in idx.tolist():
                found.append((abs(float(self.created_at[j]) - t), self.ids[j], hub))
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
