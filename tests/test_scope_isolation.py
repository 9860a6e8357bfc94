"""Scope isolation on every public read and write path (issue 18.8), as properties.

Two tenants, ``a`` and ``b``, share agents, sources and derivations across the boundary (a
memory of ``a`` derived from one of ``b``, an episode of ``b`` writing into ``a``). An operator
of ``a`` who passes ``scope="a"`` must never list, score or take back anything of ``b``:
recall, agent trust, impact, trace, training data, every retraction selector, and (on Neo4j)
every pack query that lists memories. Worlds are drawn by hypothesis on the embedded store; one
fixed world runs on both stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amem_graph import ConflictError, HashingEmbedder, MemoryGraph, NotFoundError
from amem_graph.stores.base import GraphStore, MemoryFilter
from amem_graph.stores.local.store import LocalStore

SCOPES = ("a", "b")
AGENTS = ("ana", "bob")
SOURCES = ("https://one.example", "https://two.example", None)


@dataclass(frozen=True)
class Spec:
    """One memory: its scope and agent, a parent (index of an earlier memory), a source."""

    scope: str
    agent: str
    parent: int | None
    source: str | None


@dataclass(frozen=True)
class Run:
    """One episode: its scope and agent, a recall, an optional write (maybe into the other
    scope), and an outcome."""

    scope: str
    agent: str
    write_into: str | None
    success: bool


specs = st.lists(
    st.tuples(
        st.sampled_from(SCOPES),
        st.sampled_from(AGENTS),
        st.one_of(st.none(), st.integers(0, 20)),
        st.sampled_from(SOURCES),
    ),
    min_size=2,
    max_size=8,
).map(
    lambda rows: [
        Spec(s, a, None if p is None or i == 0 else p % i, src)
        for i, (s, a, p, src) in enumerate(rows)
    ]
)
runs = st.lists(
    st.builds(
        Run,
        st.sampled_from(SCOPES),
        st.sampled_from(AGENTS),
        st.sampled_from((None, "a", "b")),
        st.booleans(),
    ),
    max_size=4,
)


def build(mg: MemoryGraph, memories: list[Spec], episodes: list[Run]) -> None:
    for i, spec in enumerate(memories):
        mg.remember(
            f"note {i} about the shared rotation topic",
            id=f"m{i}",
            scope=spec.scope,
            agent=spec.agent,
            derived_from=[] if spec.parent is None else [f"m{spec.parent}"],
            source=spec.source,
        )
    for j, run in enumerate(episodes):
        with mg.episode(agent=run.agent, scope=run.scope, id=f"ep{j}-{run.scope}") as ep:
            ep.recall("shared rotation topic", k=3)
            if run.write_into is not None:
                ep.remember(f"episode {j} wrote this", id=f"w{j}", scope=run.write_into)
            ep.outcome(success=run.success)


def scope_of(store: GraphStore) -> dict[str, str]:
    return {m.id: m.scope for m in store.find_memories(MemoryFilter(statuses=None))}


def statuses(store: GraphStore) -> dict[str, str]:
    return {m.id: m.status for m in store.find_memories(MemoryFilter(statuses=None))}


def check_isolation(mg: MemoryGraph, scope: str) -> None:
    """Every read and write path, as an operator of ``scope``."""
    where = scope_of(mg.store)
    mine = {m for m, s in where.items() if s == scope}
    theirs = set(where) - mine
    every = ("active", "quarantined", "retracted", "superseded")
    hits = mg.recall("shared rotation topic", k=50, scope=scope, include=every)
    assert {h.memory.id for h in hits} <= mine
    for agent in AGENTS:
        try:
            info = mg.agent(agent, scope=scope)
        except NotFoundError:
            continue
        own = [m for m in mg.store.find_memories(MemoryFilter(scopes=(scope,), statuses=None))]
        assert info.memory_count == sum(1 for m in own if m.agent == agent)
        assert set(info.trust_by_scope) <= {scope}
    for mid in sorted(mine):
        for view in (mg.impact(mid, scope=scope), mg.trace(mid, scope=scope).downstream):
            assert set(view.memory_ids) <= mine
            shown = {n.id for n in view.nodes if n.label == "Memory"}
            assert shown <= mine
            assert all(n.props.get("scope") == scope for n in view.nodes if n.label == "Episode")
        up = mg.trace(mid, scope=scope)
        assert set(up.upstream.ancestor_ids) <= mine
        assert {n.id for n in up.nodes if n.label == "Memory"} <= mine
    for mid in sorted(theirs):
        with pytest.raises(NotFoundError):
            mg.impact(mid, scope=scope)
        with pytest.raises(NotFoundError):
            mg.retract(mid, scope=scope, reason="not mine", dry_run=True)
    for row in mg.training_data(scope=scope):
        assert {r.memory_id for r in row.retrieved} <= mine
    selectors: list[dict[str, Any]] = [{"agent": a} for a in AGENTS]
    selectors += [{"source": s} for s in SOURCES if s is not None]
    for selector in selectors:
        check_retraction(mg, scope, selector, mine)


def check_retraction(mg: MemoryGraph, scope: str, selector: dict[str, Any], mine: set[str]) -> None:
    """A scoped retraction targets only ``scope``; a cascade out of it is refused unless
    ``cross_scope``; restoring puts every status back."""
    before = statuses(mg.store)
    try:
        report = mg.retract(scope=scope, reason="scoped", **selector)
    except NotFoundError:  # the agent or source is unknown in this world
        return
    except ConflictError as exc:
        assert "outside scope" in exc.message
        assert not any(m in exc.message for m in before if m not in mine)  # counted, not named
        assert statuses(mg.store) == before
        report = mg.retract(scope=scope, reason="scoped", cross_scope=True, **selector)
        assert report.cross_scope and set(report.cross_scope).isdisjoint(mine)
    else:
        assert set(report.memory_ids) <= mine and report.cross_scope == []
        after = statuses(mg.store)
        assert {m: s for m, s in after.items() if m not in mine} == {
            m: s for m, s in before.items() if m not in mine
        }
    assert set(report.targets) <= mine
    mg.restore(report.id)
    assert statuses(mg.store) == before


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(memories=specs, episodes=runs)
def test_an_operator_of_one_scope_never_reaches_another(
    memories: list[Spec], episodes: list[Run]
) -> None:
    with MemoryGraph(LocalStore(":memory:"), HashingEmbedder()) as mg:
        build(mg, memories, episodes)
        for scope in SCOPES:
            check_isolation(mg, scope)


FIXED = [
    Spec("a", "ana", None, SOURCES[0]),
    Spec("b", "ana", 0, SOURCES[0]),  # b derives from a: a's cascade reaches b
    Spec("a", "bob", 1, None),  # and a derives from b again
    Spec("b", "bob", None, SOURCES[1]),
]
FIXED_RUNS = [Run("a", "ana", "b", False), Run("b", "bob", "a", True), Run("a", "bob", None, True)]


@pytest.fixture
def fixed(mg: MemoryGraph) -> Iterator[MemoryGraph]:
    build(mg, FIXED, FIXED_RUNS)
    yield mg


def test_a_fixed_world_is_isolated_on_both_stores(fixed: MemoryGraph) -> None:
    for scope in SCOPES:
        check_isolation(fixed, scope)


def test_a_cascade_across_scopes_is_refused_then_allowed(fixed: MemoryGraph) -> None:
    with pytest.raises(ConflictError, match="reaches 2 memories outside scope 'a'") as info:
        fixed.retract("m0", scope="a", reason="poisoned")
    assert "cross_scope=True" in (info.value.hint or "")
    report = fixed.retract("m0", scope="a", reason="poisoned", cross_scope=True)
    assert report.cross_scope == ["m1", "w0"] and report.scope == "a"
    assert fixed.retraction(report.id).cross_scope == ["m1", "w0"]
    assert fixed.get("m1").status == "retracted"


def test_trust_is_per_scope_and_overall(fixed: MemoryGraph) -> None:
    overall = fixed.agent("ana")
    assert set(overall.trust_by_scope) == {"a", "b"}
    for scope in SCOPES:
        scoped = fixed.agent("ana", scope=scope)
        assert scoped.trust == pytest.approx(overall.trust_by_scope[scope])
        assert list(scoped.trust_by_scope) == [scope]
    assert (
        fixed.agent("ana", scope="a").memory_count + fixed.agent("ana", scope="b").memory_count
        == overall.memory_count
    )


def test_episode_and_id_selectors_stay_in_scope(fixed: MemoryGraph) -> None:
    with pytest.raises(NotFoundError, match="in scope 'a'"):
        fixed.retract(episode="ep1-b", scope="a", reason="not mine")
    report = fixed.retract(episode="ep1-b", scope="b", reason="mine", cascade=False)
    assert report.targets == []  # ep1-b wrote w1 into scope a: not b's to take back
    with pytest.raises(NotFoundError, match="in scope 'b'"):
        fixed.retract("m0", scope="b", reason="not mine")


#: the schema is not a query
UNSCOPED_PACK = {"schema"}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@pytest.mark.neo4j
def test_every_pack_query_that_lists_memories_takes_a_scope() -> None:
    from conftest import open_neo4j_store

    from amem_graph.analyst.pack import load_query, query_names, run_query

    store = open_neo4j_store()
    with MemoryGraph(store, HashingEmbedder()) as mg:
        build(mg, FIXED, FIXED_RUNS)
        mg.retract("m3", scope="b", reason="b's own call", cascade=False)
        mg.retract("m0", scope="a", reason="a's call", cross_scope=True)
        where = scope_of(store)
        mg.remember("erased soon", id="gone-b", scope="b", agent="bob")
        mg.forget("gone-b", reason="erasure request")
        where["gone-b"] = "b"  # the audit log still names it
        for name in sorted(set(query_names()) - UNSCOPED_PACK):
            query = load_query(name)
            assert query.param("scope") is not None, f"{name} has no $scope"
            needed = {p.name: "m0" for p in query.params if p.required and p.name == "memory_id"}
            needed |= {p.name: "ana" for p in query.params if p.required and p.name == "agent"}
            needed |= {p.name: True for p in query.params if p.name == "withdrawn"}
            for scope in SCOPES:
                rows = run_query(store, name, {**needed, "scope": scope}).records()
                seen = {s for row in rows for s in _strings(row) if s in where}
                leaked = {s for s in seen if where[s] != scope}
                assert leaked == set(), (name, scope, leaked)


def _charged_world(mg: MemoryGraph) -> None:
    """ana writes in both scopes; b's failures are heavy, a's are one; bob only in a."""
    mg.remember("a: rotate the keys weekly", id="a1", scope="a", agent="ana")
    mg.remember("a: bob's rotation note", id="a2", scope="a", agent="bob")
    mg.remember("b: rotate the keys never", id="b1", scope="b", agent="ana")
    mg.remember("b: another rotation note", id="b2", scope="b", agent="ana")
    with mg.episode(agent="ana", scope="a", id="ep-a") as ep:
        ep.recall("rotate the keys", k=2)
        ep.outcome(success=False)
    for i in range(3):
        with mg.episode(agent="bob", scope="b", id=f"ep-b{i}") as ep:
            ep.recall("rotate the keys", k=2)
            ep.outcome(success=False)


def test_failure_suspects_count_nothing_of_another_scope(mg: MemoryGraph) -> None:
    from amem_graph.core.beta import bound

    _charged_world(mg)
    z = mg.config.retrieval.confidence_bound
    for scope in SCOPES:
        own = mg.store.find_memories(MemoryFilter(scopes=(scope,), statuses=None))
        found = mg.failure_suspects(scope=scope)
        assert found and {s.id for s in found} <= {m.id for m in own}
        for suspect in found:
            assert all(e.startswith(f"ep-{scope}") for e in suspect.failed_episodes)
            mine = [m for m in own if m.agent == suspect.agent]
            s = sum(m.successes for m in mine)
            f = sum(m.failures for m in mine)
            assert suspect.author_suspicion == pytest.approx(1.0 - bound(s, f, z))
        agents = mg.failure_suspects(by="agent", scope=scope)
        for agent in agents:
            assert set(agent.memory_ids) <= {m.id for m in own}
            assert all(e.startswith(f"ep-{scope}") for e in agent.failed_episodes)
    # unscoped, ana's author figures include b's heavier failures
    everywhere = {s.id: s for s in mg.failure_suspects()}
    in_a = {s.id: s for s in mg.failure_suspects(scope="a")}
    assert everywhere["a1"].author_suspicion > in_a["a1"].author_suspicion  # type: ignore[operator]


def test_a_scoped_audit_shows_only_that_scopes_memories(fixed: MemoryGraph) -> None:
    report = fixed.retract("m0", scope="a", reason="poisoned", cross_scope=True)
    fixed.remember("b's secret", id="gone-b", scope="b", agent="bob")
    fixed.forget("gone-b", reason="erasure request")
    where = scope_of(fixed.store)
    where["gone-b"] = "b"
    whole = fixed.audit()
    assert {e.kind for e in whole} == {"retract", "forget"}
    for scope in SCOPES:
        events = fixed.audit(scope=scope)
        assert events, scope
        for event in events:
            assert event.memory_ids and all(where[m] == scope for m in event.memory_ids)
            if event.memory_scopes:
                assert set(event.memory_scopes) == {scope}
    (a_retract,) = fixed.audit(scope="a", kind="retract")
    (b_retract,) = fixed.audit(scope="b", kind="retract")
    assert a_retract.retraction_id == b_retract.retraction_id == report.id
    assert set(a_retract.memory_ids) | set(b_retract.memory_ids) == set(whole[0].memory_ids)
    assert [e.kind for e in fixed.audit(scope="a")] == ["retract"]  # b's forget is b's
    (forgotten,) = fixed.audit(scope="b", kind="forget")
    assert forgotten.memory_ids == ["gone-b"] and len(forgotten.content_hashes) == 1
    assert fixed.audit(scope="a", memory="gone-b") == []
    assert fixed.audit(scope="a", agent="bob", kind="forget") == []
    assert fixed.audit(scope="nobody") == []


@pytest.mark.neo4j
def test_the_audit_trail_query_narrows_like_the_api() -> None:
    from conftest import open_neo4j_store

    from amem_graph.analyst.pack import run_query

    store = open_neo4j_store()
    with MemoryGraph(store, HashingEmbedder()) as mg:
        build(mg, FIXED, FIXED_RUNS)
        mg.retract("m0", scope="a", reason="poisoned", cross_scope=True)
        mg.remember("b's secret", id="gone-b", scope="b", agent="bob")
        mg.forget("gone-b", reason="erasure request")
        for scope in (None, *SCOPES):
            rows = run_query(store, "audit_trail", {"scope": scope}).records()
            api = mg.audit(scope=scope)
            assert [(r["event_id"], r["memory_ids"], r["agent_ids"]) for r in rows] == [
                (e.id, e.memory_ids, e.agent_ids) for e in api
            ], scope
