"""The note layer on the remember path: notes for new memories, then where each one goes.

``NoteLayer.notes`` builds the notes before the memories are embedded (notes may feed the
embedding). ``NoteLayer.place`` then, for the embedded memories of one write, in order:

1. finds candidates (nearest active notes in scope, stored or earlier in the batch) and merges
   duplicates into what is stored;
2. asks the model, ``llm_concurrency`` at a time, for links with neighbour evolution and, for
   close neighbours, for a conflict verdict (with no model: the offline steps, no verdicts);
3. adds to the write batch the LINKED edges, the versioned neighbour rewrites, CONTRADICTS
   edges and supersessions, and the model usage of this graph so far.

Everything lands in the caller's one batch: a write with its links, evolutions and merges is
all or nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from amem_graph.core.config import NotesConfig
from amem_graph.core.models import Memory
from amem_graph.core.schema import LLM_USAGE
from amem_graph.core.versions import NoteState
from amem_graph.notes import conflicts, evolution, links, supersession
from amem_graph.notes.enrich import Draft, Vocabulary, build_notes
from amem_graph.notes.llm import NoteLLM, Usage
from amem_graph.notes.prompts import (
    ADJUDICATE_SYSTEM,
    LINK_SYSTEM,
    AdjudicationAnswer,
    LinkAnswer,
    adjudicate_prompt,
    link_prompt,
)
from amem_graph.stores.base import (
    EdgeWrite,
    GraphStore,
    MemoryFilter,
    NodeWrite,
    WriteBatch,
    vector_search_many,
)

if TYPE_CHECKING:  # only a caller with a chat model has imported langchain-core
    from langchain_core.language_models import BaseChatModel


@dataclass
class Placement:
    """What ``place`` decided beyond the edges and versions it added to the batch."""

    #: new memory id -> the memory it was merged into
    merged: dict[str, Memory] = field(default_factory=dict)
    #: (superseded memory, new memory id, reason) from the adjudicator
    superseded: list[tuple[Memory, str, str]] = field(default_factory=list)


@dataclass
class _Plan:
    memory: Memory
    candidates: list[links.Candidate]
    link: LinkAnswer | None = None
    verdicts: AdjudicationAnswer | None = None


def _unit_rows(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    """Vectors as unit rows (zero rows stay zero), so a product of two rows is their cosine."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2:
        return np.zeros((len(vectors), 0))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


class NoteLayer:
    """Notes, links, evolution and conflicts for one MemoryGraph (and its model, if any)."""

    def __init__(
        self, store: GraphStore, config: NotesConfig, llm: BaseChatModel | None = None
    ) -> None:
        self.store = store
        self.config = config
        self.usage = Usage()
        self.llm = (
            None if llm is None else NoteLLM(llm, retries=config.llm_retries, usage=self.usage)
        )
        self.vocabulary = Vocabulary(store)
        #: this graph's usage node: its running totals, rewritten with each write that used
        #: the model (one node per graph, so concurrent graphs never overwrite each other)
        self.usage_id = f"llm-usage-{uuid.uuid4().hex}"

    def notes(self, drafts: Sequence[Draft]) -> list[NoteState]:
        """Notes for memories about to be written, in order."""
        return build_notes(drafts, self.vocabulary, self.config, self.llm)

    def place(
        self,
        memories: Sequence[Memory],
        batch: WriteBatch,
        at: datetime,
        *,
        fixed: frozenset[str] = frozenset(),
        exclude: frozenset[str] = frozenset(),
    ) -> Placement:
        """Merge, link, evolve and adjudicate ``memories`` (embedded, in write order) into
        ``batch``. Ids in ``fixed`` were asked for by the caller and never merge away;
        memories in ``exclude`` are no candidates."""
        result = Placement()
        plans = self._plans(memories, fixed, exclude, result)
        if self.llm is not None:
            self._ask(plans)
        book = evolution.Notebook()
        taken: set[str] = set()
        for plan in plans:
            self._link(plan, book, batch, at)
            self._adjudicate(plan, batch, at, result, taken)
        if self.llm is not None:
            batch.nodes.append(NodeWrite(LLM_USAGE, self.usage_id, self.usage.props()))
        return result

    # -- 1. candidates and duplicates ---------------------------------------------------

    def _plans(
        self,
        memories: Sequence[Memory],
        fixed: frozenset[str],
        exclude: frozenset[str],
        result: Placement,
    ) -> list[_Plan]:
        k = max(self.config.link_candidates, 1)
        searches = [
            (m.embedding or [], MemoryFilter(scopes=(m.scope,), statuses=("active",)))
            for m in memories
        ]
        found = [
            [(i, s) for i, s in hits if i not in exclude][:k]
            for hits in vector_search_many(self.store, searches, k + len(exclude))
        ]
        stored = self.store.get_memories(
            sorted({i for hits in found for i, _ in hits}), embeddings=False
        )
        unit = _unit_rows([m.embedding or [] for m in memories])
        plans: list[_Plan] = []
        #: positions of the batch memories already planned, by scope
        kept: dict[str, list[int]] = {}
        for pos, (m, hits) in enumerate(zip(memories, found, strict=True)):
            near = [links.Candidate(stored[i], s) for i, s in hits if i in stored]
            same = kept.setdefault(m.scope, [])
            if same:
                sims = unit[same] @ unit[pos]
                near += [
                    links.Candidate(memories[j], float(x)) for j, x in zip(same, sims, strict=True)
                ]
            near.sort(key=lambda c: (-c.score, c.memory.id))
            near = near[:k]
            dup = None if m.id in fixed else conflicts.duplicate_of(m, near, self.config)
            if dup is not None:
                result.merged[m.id] = dup.memory
                continue
            same.append(pos)
            plans.append(_Plan(m, near if self.config.link_candidates else []))
        return plans

    # -- 2. the model's answers ---------------------------------------------------------

    def _ask(self, plans: Sequence[_Plan]) -> None:
        llm = self.llm
        assert llm is not None

        def ask(plan: _Plan) -> None:
            if plan.candidates:
                plan.link = llm.ask(
                    "link",
                    LinkAnswer,
                    LINK_SYSTEM,
                    link_prompt(plan.memory, [c.memory for c in plan.candidates]),
                )
            close = conflicts.close_neighbours(plan.candidates, self.config)
            if self.config.adjudicate and close:
                plan.verdicts = llm.ask(
                    "adjudicate",
                    AdjudicationAnswer,
                    ADJUDICATE_SYSTEM,
                    adjudicate_prompt(plan.memory, [c.memory for c in close]),
                )

        with ThreadPoolExecutor(max_workers=self.config.llm_concurrency) as pool:
            list(pool.map(ask, plans))

    # -- 3. writes ----------------------------------------------------------------------

    def _link(self, plan: _Plan, book: evolution.Notebook, batch: WriteBatch, at: datetime) -> None:
        new, candidates = plan.memory, plan.candidates
        by_id = {c.memory.id: c.memory for c in candidates}
        if plan.link is not None:
            chosen = links.checked_links(plan.link, candidates, self.config, self.usage)
        else:
            chosen = links.offline_links(new, candidates, self.config)
        for link in chosen:
            props = {"reason": link.reason, "weight": link.weight, "at": at, "by": link.chosen_by}
            batch.edges.append(EdgeWrite("LINKED", new.id, link.target, props))
        if not self.config.evolve:
            return
        if plan.link is None:
            for link in chosen:
                neighbour = by_id[link.target]
                after = evolution.offline_evolution(new, neighbour, book.state(neighbour))
                book.change(
                    batch,
                    neighbour,
                    after,
                    kind="evolve",
                    at=at,
                    caused_by=new.id,
                    reason=f"linked from {new.id}: gained shared keywords",
                )
            return
        for update in plan.link.evolve:
            rewritten = by_id.get(update.id)
            if rewritten is None:
                self.usage.add("link", "dropped_ids")
                continue
            after = evolution.llm_evolution(update, rewritten, book.state(rewritten))
            book.change(
                batch,
                rewritten,
                after,
                kind="evolve",
                at=at,
                caused_by=new.id,
                reason=f"rewritten by the model after {new.id} arrived",
            )

    def _adjudicate(
        self, plan: _Plan, batch: WriteBatch, at: datetime, result: Placement, taken: set[str]
    ) -> None:
        if plan.verdicts is None:
            return
        close = conflicts.close_neighbours(plan.candidates, self.config)
        by_id = {c.memory.id: c.memory for c in close}
        for verdict in conflicts.checked_verdicts(plan.verdicts, close, self.usage):
            old = by_id[verdict.id]
            props = {"reason": verdict.reason, "at": at, "by": "llm"}
            if verdict.relation == "contradicts":
                batch.edges.append(EdgeWrite("CONTRADICTS", plan.memory.id, old.id, props))
            elif old.id not in taken and old.status in supersession.SUPERSEDABLE:
                taken.add(old.id)
                supersession.supersede_into(
                    batch, old, plan.memory.id, reason=verdict.reason, by=None, at=at
                )
                result.superseded.append((old, plan.memory.id, verdict.reason))
