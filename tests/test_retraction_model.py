"""Retract and restore against a model, on random lineage, supersession, episodes that read, write
and end with an outcome, overlapping and scoped retractions, and erasure.

Hypothesis draws a sequence of steps: write a memory derived from some earlier ones, write one
that supersedes an earlier one, run an episode that reads some memories and then writes, record
an episode's outcome, retract some memories (with or without cascade) or what an episode wrote,
consolidate an episode's active memories into an insight (derived from them; a new wording
supersedes the earlier one), restore one of the retractions made so far (again, sometimes),
forget (erase) one. The model: a retraction retracts its targets and, with cascade, everything
derived from them at that moment (transitively, through memories already down too), and
quarantines what an episode wrote after reading any of those; a memory takes the strongest
effect of the unrestored retractions that reach it (retracted over quarantined), else is
superseded while a memory that superseded it is up, else active; only an active memory can be
superseded (else the write is refused and writes nothing); a forgotten memory is gone, with its
lineage, its reads and what it superseded (a restore passes it by); an episode's outcome credits
what it read, once (a repeat with the same values is a no-op, even after a credited memory was
erased; another result is refused). After every step each memory's status and credit counts are
the model's, every report says whether it was restored, and recall returns only active memories.
A retraction limited to one scope refuses targets outside it, and a cascade out of it unless
crossing is allowed, writing nothing. Each example writes under two scopes and ids of its own,
so the examples share one store. It found a restore that brought a memory back as superseded by
an erased one; reading that code found a second way to the same state (both in
``test_retraction.py``, "erasing"). The evolution round trip
(``notes/test_evolution_undo_model.py``) found a restore that left an old version current beside
the new one (``test_retraction.py``, "taken_down"). Those sequences are explicit examples here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest
from hunting import model_settings
from hypothesis import example, given
from hypothesis import strategies as st

from amem_graph import ConflictError, MemoryGraph, NotFoundError
from amem_graph.core.models import Hit
from amem_graph.provenance.retraction import RetractionReport

#: ("write", indices of parents, in the second scope), ("supersede", index), ("retract",
#: indices of targets, cascade, where), ("restore", index of a retraction), ("forget", index),
#: ("episode", indices read, memories then written), ("outcome", index of an episode,
#: success), ("retract_episode", index of an episode, cascade), ("consolidate", index of an
#: episode); an index is taken modulo what exists at that step. ``where``: None (any scope),
#: "first" (only the first scope's memories; a cascade out of it is refused), "first+" (the
#: same, crossing scopes allowed)
_parents = st.lists(st.integers(0, 20), max_size=3)
_write = st.tuples(st.just("write"), _parents, st.booleans())
_derive = st.tuples(
    st.just("write"), st.lists(st.integers(0, 20), min_size=1, max_size=3), st.booleans()
)
_retract = st.tuples(st.just("retract"), st.lists(st.integers(0, 20), min_size=1, max_size=3),
                     st.booleans(), st.sampled_from([None, None, "first", "first+"]))  # fmt: skip
_restore = st.tuples(st.just("restore"), st.integers(0, 20))
_supersede = st.tuples(st.just("supersede"), st.integers(0, 20))
_forget = st.tuples(st.just("forget"), st.integers(0, 20))
_episode = st.tuples(
    st.just("episode"), st.lists(st.integers(0, 20), min_size=1, max_size=3), st.integers(1, 2)
)
_outcome = st.tuples(st.just("outcome"), st.integers(0, 20), st.booleans())
_by_episode = st.tuples(st.just("retract_episode"), st.integers(0, 20), st.booleans())
_consolidate = st.tuples(st.just("consolidate"), st.integers(0, 20))
steps = st.lists(
    st.one_of(
        _write,
        _derive,
        _supersede,
        _retract,
        _restore,
        _forget,
        _episode,
        _outcome,
        _by_episode,
        _consolidate,
    ),
    min_size=1,
    max_size=14,
)


@dataclass
class Model:
    """What statuses and credit counts must be: lineage, supersession, episodes, outcomes, and
    the effect of each retraction on each memory it reaches."""

    parents: dict[str, list[str]] = field(default_factory=dict)
    superseders: dict[str, list[str]] = field(default_factory=dict)
    #: episodes as (what they read, what they wrote after)
    episodes: list[tuple[set[str], list[str]]] = field(default_factory=list)
    #: memory -> (successes, failures) its episodes' outcomes credited
    credit: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: retraction -> memory -> its effect there
    covers: dict[str, dict[str, str]] = field(default_factory=dict)
    restored: set[str] = field(default_factory=set)

    def derived(self, targets: list[str]) -> set[str]:
        out, frontier = set(targets), list(targets)
        while frontier:
            mid = frontier.pop()
            for child, parents in self.parents.items():
                if mid in parents and child not in out:
                    out.add(child)
                    frontier.append(child)
        return out

    def effects(self, targets: list[str], cascade: bool) -> dict[str, str]:
        """What a retraction does: its targets and (cascade) what derives from them are
        retracted; what an episode wrote after reading any of those is quarantined."""
        if not cascade:
            return dict.fromkeys(targets, "retracted")
        tainted = self.derived(targets)
        out = dict.fromkeys(tainted, "retracted")
        for read, wrote in self.episodes:
            if read & tainted:
                out.update({w: "quarantined" for w in wrote if w not in tainted})
        return out

    def forget(self, mid: str) -> None:
        del self.parents[mid]
        for others in (*self.parents.values(), *self.superseders.values()):
            if mid in others:
                others.remove(mid)
        for read, wrote in self.episodes:
            read.discard(mid)
            if mid in wrote:
                wrote.remove(mid)

    def hold(self, mid: str) -> str | None:
        """The strongest effect on ``mid`` of the retractions not restored."""
        effects = {c[mid] for r, c in self.covers.items() if r not in self.restored and mid in c}
        return max(effects, key=_STRENGTH.__getitem__, default=None)

    def status(self, mid: str) -> str:
        held = self.hold(mid)
        if held is not None:
            return held
        up = [s for s in self.superseders.get(mid, []) if self.hold(s) is None]
        return "superseded" if up else "active"


_STRENGTH = {"retracted": 2, "quarantined": 1}


class Run:
    """One example: the graph, the model, and what the example wrote (ids of its own)."""

    def __init__(self, mg: MemoryGraph) -> None:
        self.mg, self.model, self.tag = mg, Model(), uuid.uuid4().hex[:8]
        self.ids: list[str] = []  # written and not forgotten
        self.gone: list[str] = []
        self.rids: list[str] = []
        self.scope: dict[str, str] = {}
        self.first, self.second = f"s{self.tag}a", f"s{self.tag}b"
        self.episodes: list[str] = []
        self.reads: dict[str, list[str]] = {}  # episode -> what it read
        self.wrote: dict[str, list[str]] = {}  # episode -> what it wrote
        self.outcomes: dict[str, tuple[bool, list[str]]] = {}  # episode -> (success, used)

    def pick(self, indices: list[int]) -> list[str]:
        return sorted({self.ids[i % len(self.ids)] for i in indices})

    def step(self, n: int, step: tuple) -> None:
        """Run one step (a no-op when it needs memories or retractions that are not there),
        then check every status and credit count against the model."""
        kind, *args = step
        on_episodes = ("outcome", "retract_episode", "consolidate")
        needs = (
            self.rids if kind == "restore" else self.episodes if kind in on_episodes else self.ids
        )
        if kind in ("write", "episode") or needs:
            getattr(self, kind)(n, f"{self.tag}-m{n}", *args)  # an id never forgotten before
        assert self.mg.store.statuses([*self.ids, *self.gone]) == {
            m: self.model.status(m) for m in self.ids
        }, step
        counts = {m.id: (m.successes, m.failures) for m in self.mg.get_many(self.ids).values()}
        assert counts == {m: self.model.credit.get(m, (0.0, 0.0)) for m in self.ids}, step

    def write(self, n: int, mid: str, parents: list[int], second: bool) -> None:
        lineage = self.pick(parents) if self.ids else []
        scope = self.second if second else self.first
        self.mg.remember(f"fact {n} of {self.tag}", id=mid, scope=scope, derived_from=lineage)
        self.add(mid, scope, lineage)

    def add(self, mid: str, scope: str, lineage: list[str]) -> None:
        self.ids.append(mid)
        self.scope[mid] = scope
        self.model.parents[mid] = lineage

    def supersede(self, n: int, mid: str, index: int) -> None:
        [old] = self.pick([index])
        content, scope = f"fact {n} of {self.tag}, in place of {old}", self.scope[old]
        if self.model.status(old) != "active":
            with pytest.raises(ConflictError, match="not active"):
                self.mg.remember(content, id=mid, scope=scope, supersedes=old)
            assert self.mg.get_many([mid]) == {}
            return
        self.mg.remember(content, id=mid, scope=scope, supersedes=old)
        self.add(mid, scope, [])
        self.model.superseders.setdefault(old, []).append(mid)

    def retract(
        self, n: int, mid: str, targets: list[int], cascade: bool, where: str | None
    ) -> None:
        chosen = self.pick(targets)
        effects = self.model.effects(chosen, cascade)
        scope = None if where is None else self.first
        options = {"scope": scope, "cross_scope": where == "first+", "cascade": cascade}
        if scope is not None and any(self.scope[m] != scope for m in chosen):
            with pytest.raises(NotFoundError, match="in scope"):
                self.mg.retract(chosen, reason="model", **options)
            return
        if where == "first" and any(self.scope[m] != scope for m in effects):
            with pytest.raises(ConflictError, match="outside scope"):
                self.mg.retract(chosen, reason="model", **options)
            return
        self.made(self.mg.retract(chosen, reason="model", **options), effects)

    def retract_episode(self, n: int, mid: str, index: int, cascade: bool) -> None:
        """Retract what an episode wrote (what of it is left)."""
        eid = self.episodes[index % len(self.episodes)]
        wrote = [m for m in self.wrote[eid] if m in self.model.parents]
        report = self.mg.retract(episode=eid, reason="model", cascade=cascade)
        assert report.targets == wrote, report
        self.made(report, self.model.effects(wrote, cascade))

    def made(self, report: RetractionReport, effects: dict[str, str]) -> None:
        got = {**dict.fromkeys(report.retracted, "retracted"),
               **dict.fromkeys(report.quarantined, "quarantined")}  # fmt: skip
        assert got == effects, report
        self.rids.append(report.id)
        self.model.covers[report.id] = effects

    def episode(self, n: int, mid: str, reads: list[int], writes: int) -> None:
        if not self.ids:
            return
        read = set(self.pick(reads))
        scope = self.scope[min(read)]
        with self.mg.episode(agent=f"a{self.tag}", scope=scope, id=f"e{mid}") as ep:
            shown = self.mg.get_many(sorted(read))
            ep.log_reads("model", [Hit(memory=m, score=1.0, rank=1) for m in shown.values()])
            wrote = [f"{mid}-{j}" for j in range(writes)]
            for j, wid in enumerate(wrote):
                ep.remember(f"fact {n}.{j} of {self.tag}", id=wid)
        for wid in wrote:
            self.add(wid, scope, [])
        self.model.episodes.append((read, wrote))
        self.episodes.append(ep.id)
        self.reads[ep.id] = sorted(read)
        self.wrote[ep.id] = wrote

    def outcome(self, n: int, mid: str, index: int, success: bool) -> None:
        """Credit what the episode read (all of it used), once: a repeat with the same values
        (even after a used memory was erased) changes nothing, a different result is refused."""
        eid = self.episodes[index % len(self.episodes)]
        first = self.outcomes.get(eid)
        used = (
            [m for m in self.reads[eid] if m in self.model.parents] if first is None else first[1]
        )
        if first is not None and first[0] != success:
            with pytest.raises(ConflictError, match="already has an outcome"):
                self.mg.record_outcome(eid, success=success, used=used)
            return
        self.mg.record_outcome(eid, success=success, used=used)
        if first is None:
            self.outcomes[eid] = (success, used)
            for m in used:
                wins, losses = self.model.credit.get(m, (0.0, 0.0))
                self.model.credit[m] = (wins + success, losses + (not success))

    def consolidate(self, n: int, mid: str, index: int) -> None:
        """Distil an episode's active memories into an insight derived from them; a new
        wording supersedes the earlier insight of the same episode."""
        eid = self.episodes[index % len(self.episodes)]
        active = [m for m in self.wrote[eid] if m in self.model.parents]
        active = [m for m in active if self.model.status(m) == "active"]
        report = self.mg.consolidate(episode=eid)
        assert sorted(report.sources) == sorted(active), report
        for insight in report.insights if report.written else []:
            lineage = self.mg.store.edges([insight.id], ["DERIVED_FROM"], "out")
            self.add(insight.id, insight.scope, sorted(e.dst for e in lineage))
        for old in report.superseded:
            self.model.superseders.setdefault(old, []).extend(report.written)

    def restore(self, n: int, mid: str, index: int) -> None:
        rid = self.rids[index % len(self.rids)]
        self.mg.restore(rid)
        self.model.restored.add(rid)

    def forget(self, n: int, mid: str, index: int) -> None:
        self.gone.append(self.ids.pop(index % len(self.ids)))
        self.mg.forget(self.gone[-1], reason="erasure")
        self.model.forget(self.gone[-1])

    def finish(self) -> None:
        """Every report knows whether it was restored; recall shows only active memories."""
        for rid in self.rids:
            assert (self.mg.retraction(rid).restored_at is not None) == (rid in self.model.restored)
        for scope in (self.first, self.second):
            up = {
                m for m in self.ids if self.scope[m] == scope and self.model.status(m) == "active"
            }
            found = {h.memory.id for h in self.mg.recall(f"fact of {self.tag}", k=50, scope=scope)}
            assert found <= up and (found or not up)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_retract_and_restore_agree_with_the_model(mg: MemoryGraph) -> None:
    @model_settings(60)
    @given(steps)
    @example([("write", [], False), ("supersede", 0), ("retract", [1], False, None),
              ("forget", 1), ("restore", 0)])  # fmt: skip
    @example([("write", [], False), ("supersede", 0), ("retract", [1], False, None),
              ("retract", [0, 1], False, None), ("restore", 0), ("restore", 1)])  # fmt: skip
    @example([("write", [], False), ("episode", [0], 2), ("consolidate", 0),
              ("retract", [1], False, None), ("consolidate", 0), ("restore", 0),
              ("consolidate", 0), ("retract", [2], True, None), ("restore", 1)])  # fmt: skip
    def run(sequence: list[tuple]) -> None:
        example = Run(mg)
        for n, step in enumerate(sequence):
            example.step(n, step)
        example.finish()

    run()
