"""Hybrid recall: vector, BM25 and graph-expansion candidates, fused with recency, importance
and confidence, every hit able to explain itself.

The filter (scope, status, validity, agent, task) is passed into each candidate path, so a
retracted or out-of-scope memory can never enter through any of them, and a selective filter
cannot starve the result the way a post-filter would.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from amem_graph.core.config import RetrievalConfig
from amem_graph.core.models import Explanation, Hit, Memory, PathStep, Signal
from amem_graph.core.seeding import (
    Priors,
    SeedPlan,
    boosted_text_weight,
    prior_ranks,
    settled,
    text_confidence,
)
from amem_graph.core.text import analyze
from amem_graph.embeddings import Embedder
from amem_graph.recall import answers, confidence, names, when
from amem_graph.stores.base import (
    Expansion,
    Gist,
    GraphStore,
    MemoryFilter,
    Neighbourhood,
    RankFields,
)

RELEVANCE_SIGNALS = ("vector", "text", "graph")
#: what re-scores the likely hits after fusion (``HybridRetriever._rescore``), each by its
#: ``<signal>_weight``
RESCORE_SIGNALS = ("speaker", "terse", "time", "dated", "name")
#: confidence is not a fused prior: it scales relevance before fusion (``confidence.py``)
PRIOR_SIGNALS = ("recency", "importance")
#: the likely hits: the top PREFETCH x k of the fusion, re-scored on their agent and length
#: (on convbench 3k gave recall@10 +0.03 over 2k, and 4k nothing more)
PREFETCH = 3
#: the expansion reads the top READ_AHEAD x k direct hits whole, to hold the likely hits
#: without another round trip: on the dev sets in Neo4j it missed some in 1-6% of questions,
#: at 4 x k in 9-11% (``bench/quality/neo4j_reads.py``)
READ_AHEAD = 5
_WORD = re.compile(r"\w+")

#: memory -> shared hub -> memory (same episode, same task), with the score kept per hop;
#: lineage edges (``LINEAGE_EDGES``, both ways) keep the score (LINKED times its weight)
_SIBLING_DECAY = {"GENERATED_IN": 0.5, "FOR_TASK": 0.25}

#: a path step as (source, edge, target): the expansion offers hundreds of paths a recall and
#: keeps few, so ``PathStep`` models are made only for the explanations shown
_Step = tuple[str, str, str]
_Path = tuple[_Step, ...]


@dataclass(slots=True)
class _Candidate:
    """A memory under consideration: signal name -> (raw value, rank), and its graph path."""

    id: str
    signals: dict[str, tuple[float, int]] = field(default_factory=dict)
    path: _Path = ()
    #: re-scoring signal -> (its value, what it added): speaker 1 when named, terse the word
    #: count
    rescored: dict[str, tuple[float, float]] = field(default_factory=dict)

    def explanation(self, fused: float, fusion: _Fusion, searched: str | None) -> Explanation:
        signals = {
            name: Signal(value=v, rank=r, contribution=fusion.part(name, v, r))
            for name, (v, r) in self.signals.items()
        }
        signals.update(
            {name: Signal(value=v, contribution=c) for name, (v, c) in self.rescored.items()}
        )
        path = [PathStep(source=src, edge=edge, target=dst) for src, edge, dst in self.path]
        return Explanation(
            signals=signals,
            fused=fused,
            path=path,
            searched=searched,
        )


def _candidate(cands: dict[str, _Candidate], mid: str) -> _Candidate:
    """``cands[mid]``, made only when new (``setdefault`` would make one per id it is given:
    ~250 a recall, each bringing the next garbage collection nearer)."""
    cand = cands.get(mid)
    if cand is None:
        cand = cands[mid] = _Candidate(mid)
    return cand


@dataclass(frozen=True, slots=True)
class _Fusion:
    """How a signal's value and rank become its part of the fused score, for explanations
    (the fusion itself inlines this arithmetic: it runs over every candidate)."""

    mode: str
    weights: dict[str, float]
    rrf_k: int
    bounds: dict[str, tuple[float, float]]

    def part(self, signal: str, value: float, rank: int) -> float:
        weight = self.weights[signal]
        if self.mode == "rrf":
            return weight / (self.rrf_k + rank)
        lo, hi = self.bounds[signal]
        return weight * (1.0 if hi == lo else (value - lo) / (hi - lo))


def vector_depth(cfg: RetrievalConfig, k: int) -> int:
    """How many vector candidates recall asks for (0 when the vector signal is off)."""
    return max(cfg.vector_candidates, 3 * k) if cfg.vector_weight > 0 else 0


def seed_plan(
    cfg: RetrievalConfig, k: int, read_ahead: bool = True, now: datetime | None = None
) -> SeedPlan | None:
    """How recall starts its graph expansion; None when the expansion is off. With
    ``read_ahead`` the hop also reads the top ``READ_AHEAD`` x k whole (see ``reads_ahead``),
    ranked with the priors at ``now`` when given."""
    if cfg.graph_weight <= 0 or cfg.expand_seeds <= 0 or cfg.expand_hops <= 0:
        return None
    priors = None
    if read_ahead and now is not None:
        priors = Priors(
            float(cfg.recency_weight),
            float(cfg.importance_weight),
            cfg.half_life_days * 86_400.0,
            now.timestamp(),
        )
    return SeedPlan(
        vector_weight=float(cfg.vector_weight),
        text_weight=float(cfg.text_weight),
        rrf_k=cfg.rrf_k,
        seeds=cfg.expand_seeds,
        fetch=READ_AHEAD * k if read_ahead else 0,
        limit=cfg.expand_fanout,
        text_boost=float(cfg.text_boost),
        priors=priors,
    )


def _weights(cfg: RetrievalConfig, text_peak: float = 0.0) -> dict[str, float]:
    """Signal name -> its weight in the fusion; BM25's rises by ``text_boost`` x
    ``text_peak`` (0-1: how much its best hit stands out, ``text_confidence``)."""
    out = {s: float(getattr(cfg, f"{s}_weight")) for s in RELEVANCE_SIGNALS + PRIOR_SIGNALS}
    out["text"] = boosted_text_weight(out["text"], cfg.text_boost, text_peak)
    return out


def reads_ahead(store: GraphStore) -> bool:
    """Whether recall reads its likely hits whole within the expansion's round trip (a
    server store: one round trip saved) or only those it re-scores and shows, after ranking
    (a store whose ``READS_AHEAD`` is False: a read costs no round trip, so fewer memories
    are parsed; on the embedded store at 100k, 50 against 30 a recall, ~0.3 ms)."""
    return bool(getattr(store, "READS_AHEAD", True))


def _authors_read(start: Expansion) -> set[str]:
    """The agents of the memories the expansion read whole: hits the filter admitted."""
    return {m.agent for m in start.hood.memories.values() if m.agent}


def named_agents(query: str) -> frozenset[str]:
    """The query's analysed terms: an agent is named when all of its terms are among them."""
    return frozenset(analyze(query))


class HybridRetriever:
    """Gathers candidates from the store's three paths and fuses them."""

    def __init__(self, store: GraphStore, embedder: Embedder, config: RetrievalConfig) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self._known = names.KnownAuthors()

    def search(
        self,
        query: str,
        k: int,
        flt: MemoryFilter,
        now: datetime,
        config: RetrievalConfig | None = None,
        query_vector: Sequence[float] | None = None,
        *,
        explain: bool = True,
    ) -> list[Hit]:
        """The top-k hits for ``query`` among memories ``flt`` admits, each with its
        ``Explanation`` if ``explain``."""
        cfg = config or self.config
        n_vector = vector_depth(cfg, k)
        n_text = max(cfg.candidates, k) if cfg.text_weight > 0 else 0
        plan = seed_plan(cfg, k, reads_ahead(self.store), now)
        start: Expansion | None = None
        if plan is None:
            searched = self.search_text(query, flt, cfg)
            vector = self._vector(searched, n_vector, query_vector)
            found = self.store.search(vector, searched, n_vector, n_text, flt)
        else:  # the search and the first hop at once: one round trip on a server store
            searched, start = self._search_expand(
                query, flt, cfg, plan, (n_vector, n_text), query_vector
            )
            found = start.found
        cands: dict[str, _Candidate] = {}
        for name, pairs, n in (("vector", found.vector, n_vector), ("text", found.text, n_text)):
            for mid, ranked in settled(pairs, n):
                _candidate(cands, mid).signals[name] = ranked
        if not cands:
            return []  # expansion starts from seeds, so nothing more can come
        fields = dict(found.fields)
        memories: dict[str, Memory | Gist] = {}
        if plan is not None and start is not None:
            reached, read = self._expand(cands, flt, cfg, plan, start)
            fields.update(reached)
            memories.update(read)
        cands = {mid: c for mid, c in cands.items() if mid in fields}
        self._priors(cands, fields, now, cfg)
        peak = text_confidence([score for _, score in found.text]) if found.text else 0.0
        before, fusion = self._fuse(cands, cfg, peak)  # relevance alone, for explanations
        moved = confidence.rescale({mid: c.signals for mid, c in cands.items()}, fields, cfg)
        fused, fusion = self._fuse(cands, cfg, peak) if moved.factors else (dict(before), fusion)
        if fused and any(getattr(cfg, f"{s}_weight") > 0 for s in RESCORE_SIGNALS):
            # the likely hits by this ranking, not the ones the store happened to read whole
            # (its pick rests on its own float noise): reading any the expansion did not
            head = sorted(cands, key=lambda mid: (-fused[mid], mid))[: PREFETCH * k]
            top = max(fused.values())  # amounts are shares of the best score before any
            done: set[str] = set()
            while head:
                unread = [mid for mid in head if mid not in memories]
                if unread:
                    memories.update(self._likely(unread))
                self._rescore(head, cands, fused, memories, query, cfg, top)
                for mid in head:  # the same re-scoring, as it would be without confidence
                    before[mid] += sum(c for _, c in cands[mid].rescored.values())
                done.update(head)
                # a penalty can drop a likely hit below one that was not re-scored: that one
                # is re-scored too before it may be shown
                head = [m for m in sorted(cands, key=lambda m: (-fused[m], m))[:k] if m not in done]
        order = sorted(cands, key=lambda mid: (-fused[mid], mid))[:k]
        # only the k shown are read whole (a server store's came with the expansion); one
        # deleted meanwhile is left out
        whole = {mid: m for mid in order if isinstance(m := memories.get(mid), Memory)}
        missing = [mid for mid in order if mid not in whole]
        if missing:
            whole.update(self.store.get_memories(missing, embeddings=False))
        shown = [mid for mid in order if mid in whole]
        cut = searched if searched != query else None  # the same for every hit explained
        return [
            Hit(
                memory=whole[mid],
                score=fused[mid],
                rank=i + 1,
                explanation=(
                    moved.explain(
                        mid,
                        cands[mid].explanation(fused[mid], fusion, cut),
                        fields[mid],
                        before,
                        cfg,
                    )
                    if explain
                    else None
                ),
            )
            for i, mid in enumerate(shown)
        ]

    def _likely(self, ids: list[str]) -> Mapping[str, Memory | Gist]:
        """The likely hits as re-scoring reads them: whole from a store whose reads cost a
        round trip (the k shown are among them: no second trip), else their gists (only
        the k shown are parsed whole; ``Gist``)."""
        if reads_ahead(self.store):
            return self.store.get_memories(ids, embeddings=False)
        return self.store.gists(ids)

    def search_text(
        self, query: str, flt: MemoryFilter, config: RetrievalConfig | None = None
    ) -> str:
        """What recall searches for (and embeds): ``query`` without the agents it names that
        wrote a memory ``flt`` admits, when the re-scoring uses them (``names.py``). A caller
        passing its own ``query_vector`` to ``search`` should embed this text."""
        return self._cut(query, self._name_words(query, config or self.config), flt)[0]

    def _cut(self, query: str, words: list[str], flt: MemoryFilter) -> tuple[str, set[str]]:
        """(``query`` without those of ``words`` that wrote a memory ``flt`` admits, asked of
        the store; those agents)."""
        authors = self.store.authors(words, flt) if words else set()
        return names.without(query, authors), authors

    @staticmethod
    def _name_words(query: str, cfg: RetrievalConfig) -> list[str]:
        """The words of ``query`` that could name agents, when recall searches without them."""
        if not cfg.unnamed_search or cfg.speaker_weight <= 0:
            return []
        return names.candidates(query)

    def _vector(
        self, searched: str, n_vector: int, given: Sequence[float] | None
    ) -> Sequence[float] | None:
        """The query vector: the caller's, else ``searched`` embedded; None with no vector
        search."""
        if not n_vector:
            return None
        return given if given is not None else self.embedder.embed_query(searched)

    def _search_expand(
        self,
        query: str,
        flt: MemoryFilter,
        cfg: RetrievalConfig,
        plan: SeedPlan,
        depths: tuple[int, int],
        given: Sequence[float] | None,
    ) -> tuple[str, Expansion]:
        """(the text searched, ``search_expand`` for it): the search and the first hop, the
        query's agent names cut (``search_text``).

        A store whose reads cost a round trip (``reads_ahead``) is asked ``authors`` first
        only under a filter this retriever has not recalled under yet. Otherwise the names
        are guessed from the agents it saw write under the filter (``names.KnownAuthors``)
        and the store checks the guess in the search's own query; when its answer cuts other
        words (an agent first named), the search is run again for them (the vector embedded
        again unless the caller gave it). Another store always answers ``authors`` first: it
        has no round trip to save, and a wrong guess would cost a search.
        """
        n_vector, n_text = depths
        words = self._name_words(query, cfg)
        speculates = bool(words) and reads_ahead(self.store)
        # recall's as_of is its own time: not part of the key
        key = replace(flt, as_of=None) if speculates else None
        guess = self._known.guess(key, words) if speculates else None
        if guess is None:
            searched, authors = self._cut(query, words, flt)
            vector = self._vector(searched, n_vector, given)
            start = self.store.search_expand(vector, searched, n_vector, n_text, flt, plan)
            if speculates:
                self._known.learn(key, words, authors, _authors_read(start))
            return searched, start
        guessed = names.without(query, guess)
        vector = self._vector(guessed, n_vector, given)
        start = self.store.search_expand(vector, guessed, n_vector, n_text, flt, plan, words)
        self._known.learn(key, words, start.authors, _authors_read(start))
        searched = names.without(query, set(start.authors))
        if searched != guessed:
            vector = self._vector(searched, n_vector, given)
            start = self.store.search_expand(vector, searched, n_vector, n_text, flt, plan)
        return searched, start

    # -- expansion ------------------------------------------------------------------------

    def _rrf(self, cands: dict[str, _Candidate], fusion: _Fusion) -> dict[str, float]:
        """Weighted reciprocal rank fusion over whatever signals each candidate has."""
        weights, rrf_k = fusion.weights, fusion.rrf_k
        out: dict[str, float] = {}
        for mid, c in cands.items():  # a plain loop: this runs over every candidate
            total = 0.0
            for signal, (_, rank) in c.signals.items():
                total += weights[signal] / (rrf_k + rank)
            out[mid] = total
        return out

    def _expand(
        self,
        cands: dict[str, _Candidate],
        flt: MemoryFilter,
        cfg: RetrievalConfig,
        plan: SeedPlan,
        start: Expansion,
    ) -> tuple[dict[str, RankFields], dict[str, Memory]]:
        """Walk 1-2 hops from the best seeds; only admitted memories become candidates.

        The first hop came with the search (``start``). Returns the ranking fields of the
        memories reached (read with the filter, in the same round trip that admits them), and
        the memories that hop read whole: the top ``READ_AHEAD`` x k candidates before
        expansion, to hold the likely hits, saving recall a round trip.
        """
        seed_scores = plan.scores(start.found.vector, start.found.text)
        seeds = start.seeds
        frontier: dict[str, tuple[float, _Path]] = {s: (seed_scores[s], ()) for s in seeds}
        reached: dict[str, tuple[float, _Path]] = {}
        fields: dict[str, RankFields] = {}
        hood = start.hood
        for hop in range(cfg.expand_hops):
            if hop:
                hood = self.store.neighbourhood(sorted(frontier), flt, cfg.expand_fanout)
            found = self._neighbours(frontier, hood, cfg)
            fields.update(hood.fields)
            next_frontier = {}
            for mid in sorted(found.keys() & hood.fields.keys()):
                score, path = found[mid]
                if mid in reached:
                    continue
                reached[mid] = (score, path)  # a seed reached from a better seed counts too
                if mid not in seeds:
                    next_frontier[mid] = (score, path)
            frontier = next_frontier
            if not frontier:
                break
        ranked = sorted(reached, key=lambda m: (-reached[m][0], m))
        for i, mid in enumerate(ranked):
            score, path = reached[mid]
            cand = _candidate(cands, mid)
            cand.signals["graph"] = (score, i + 1)
            cand.path = path
        return fields, dict(start.hood.memories)

    def _neighbours(
        self,
        frontier: dict[str, tuple[float, _Path]],
        hood: Neighbourhood,
        cfg: RetrievalConfig,
    ) -> dict[str, tuple[float, _Path]]:
        """One hop from the frontier over the store's reads of it: lineage and links, then
        same-episode/task siblings; each neighbour's best (score, path)."""
        found: dict[str, tuple[float, _Path]] = {}

        def offer(seed: str, mid: str, score: float, path: _Path) -> None:
            if mid != seed and (mid not in found or found[mid][0] < score):
                found[mid] = (score, path)

        per_seed: dict[str, int] = {}
        # in an order that does not depend on the store, so fan-out cuts the same edges
        for e in sorted(hood.edges, key=lambda e: (e.type, e.src, e.dst, e.key)):
            for seed, other in ((e.src, e.dst), (e.dst, e.src)):
                if seed not in frontier or per_seed.get(seed, 0) >= cfg.expand_fanout:
                    continue
                per_seed[seed] = per_seed.get(seed, 0) + 1
                score, path = frontier[seed]
                weight = float(e.props.get("weight", 1.0)) if e.type == "LINKED" else 1.0
                offer(seed, other, score * weight, (*path, (e.src, e.type, e.dst)))
        for via, by_seed in hood.siblings.items():
            decay = _SIBLING_DECAY[via]
            for seed, pairs in by_seed.items():
                score, path = frontier[seed]
                for other, hub in pairs:
                    steps = ((seed, via, hub), (other, via, hub))
                    offer(seed, other, score * decay, (*path, *steps))
        return found

    # -- fusion ---------------------------------------------------------------------------

    def _priors(
        self,
        cands: dict[str, _Candidate],
        fields: dict[str, RankFields],
        now: datetime,
        cfg: RetrievalConfig,
    ) -> None:
        known = {mid: (fields[mid].created_at, fields[mid].importance) for mid in cands}
        ranked = prior_ranks(known, now.timestamp(), cfg.half_life_days * 86_400.0)
        for signal, pairs in ranked.items():
            for mid, value_rank in pairs:
                cands[mid].signals[signal] = value_rank

    def _fuse(
        self, cands: dict[str, _Candidate], cfg: RetrievalConfig, text_peak: float
    ) -> tuple[dict[str, float], _Fusion]:
        weights = _weights(cfg, text_peak)
        bounds: dict[str, tuple[float, float]] = {}
        if cfg.mode == "rrf":
            fusion = _Fusion(cfg.mode, weights, cfg.rrf_k, bounds)
            return self._rrf(cands, fusion), fusion
        for signal in RELEVANCE_SIGNALS + PRIOR_SIGNALS:
            vals = [c.signals[signal][0] for c in cands.values() if signal in c.signals]
            if vals:
                bounds[signal] = (min(vals), max(vals))
        fused: dict[str, float] = {}
        for mid, c in cands.items():
            total = 0.0
            for signal, (value, _) in c.signals.items():
                lo, hi = bounds[signal]
                norm = 1.0 if hi == lo else (value - lo) / (hi - lo)
                total += weights[signal] * norm
            fused[mid] = total
        return fused, _Fusion(cfg.mode, weights, cfg.rrf_k, bounds)

    def _rescore(
        self,
        head: Sequence[str],
        cands: dict[str, _Candidate],
        fused: dict[str, float],
        memories: Mapping[str, Memory | Gist],
        query: str,
        cfg: RetrievalConfig,
        top: float,
    ) -> None:
        """Re-score the likely hits (``head``, read whole) on what the graph knows of
        them, in place: their agent named in the query (questions about a person are mostly
        answered by what that person said), few words (a reaction or a greeting seldom
        carries a fact, yet BM25's length normalisation and short vectors favour it),
        their time in a period the query names ("in May 2023", ``when.py``), a time told in
        them when the query asks when (``when.py``), and a name told in them when it asks where
        or who (``answers.py``).

        Amounts are shares of ``top``, the best fused score, so they mean the same in either
        mode.
        """
        terms = named_agents(query)
        months = when.named_months(query) if cfg.time_weight > 0 else frozenset()
        asks_when = cfg.dated_weight > 0 and when.asks_when(query)
        given = answers.asked_name(query) if cfg.name_weight > 0 else None
        named: dict[str, bool] = {}  # per agent: the head is mostly a few agents' memories
        for mid in head:
            memory, cand = memories.get(mid), cands[mid]
            if memory is None:  # deleted meanwhile
                continue
            agent = memory.agent
            if agent and agent not in named:
                named[agent] = cfg.speaker_weight > 0 and names.named(agent, terms)
            gains: dict[str, tuple[float, float]] = {}  # signal -> (its value, what it adds)
            if agent and named[agent]:
                gains["speaker"] = (1.0, cfg.speaker_weight * top)
            n_words = len(_WORD.findall(memory.content)) if cfg.terse_weight > 0 else 0
            if cfg.terse_weight > 0 and n_words < cfg.terse_words:
                gains["terse"] = (float(n_words), -cfg.terse_weight * top)
            if months and when.in_period(memory.created_at, months):
                gains["time"] = (1.0, cfg.time_weight * top)
            if asks_when and when.dated(memory.content):
                gains["dated"] = (1.0, cfg.dated_weight * top)
            if given is not None and answers.names_other(memory.content, given):
                gains["name"] = (1.0, cfg.name_weight * top)
            for signal, (value, amount) in gains.items():
                cand.rescored[signal] = (value, amount)
                fused[mid] += amount
