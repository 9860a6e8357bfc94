"""AmemStore's own promises, beyond what InMemoryStore does: versions, retraction, isolation,
provenance and read tracking, checked on both stores."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError, Item, PutOp
from typing_extensions import TypedDict

from amem_graph import MemoryGraph, ValidationError
from amem_graph.integrations.langgraph_store import AmemItem, AmemStore, NamespaceError
from amem_graph.integrations.namespaces import decode, encode, namespace_scope, scope_namespace

ALICE = ("users", "alice")


@pytest.fixture
def store(mg: MemoryGraph) -> AmemStore:
    return AmemStore(mg, agent="writer")


def test_a_put_over_a_key_supersedes_and_keeps_the_old_version(
    store: AmemStore, mg: MemoryGraph
) -> None:
    store.put(ALICE, "food", {"likes": "pizza"})
    first = store.get(ALICE, "food")
    store.put(ALICE, "food", {"likes": "sushi"})
    store.put(ALICE, "food", {"likes": "sushi"})  # same value: no new version
    item = store.get(ALICE, "food")
    assert isinstance(item, AmemItem) and item.value == {"likes": "sushi"}
    assert first is not None and item.created_at == first.created_at
    assert item.updated_at > first.updated_at
    history = store.history(ALICE, "food")
    assert [(h.value, h.provenance.status) for h in history] == [
        ({"likes": "pizza"}, "superseded"),
        ({"likes": "sushi"}, "active"),
    ]
    old, new = (h.provenance.memory_id for h in history)
    edges = mg.store.edges([new], ["SUPERSEDES"], "out")
    assert [(e.src, e.dst) for e in edges] == [(new, old)]
    assert [e.memory_ids for e in mg.audit(kind="supersede")] == [[old, new]]
    assert [h.memory.id for h in mg.recall("pizza sushi", k=5, scope=namespace_scope(ALICE))] == [
        new
    ]


def test_a_delete_retracts_reversibly(store: AmemStore, mg: MemoryGraph) -> None:
    store.put(ALICE, "food", {"likes": "pizza"})
    store.delete(ALICE, "food")
    assert store.get(ALICE, "food") is None
    assert store.search(ALICE) == [] and store.list_namespaces() == []
    [event] = mg.audit(kind="retract")
    assert event.retraction_id is not None
    mg.restore(event.retraction_id)
    restored = store.get(ALICE, "food")
    assert restored is not None and restored.value == {"likes": "pizza"}
    store.delete(ALICE, "food")
    store.put(ALICE, "food", {"likes": "tea"})  # a new run of versions after a delete
    again = store.get(ALICE, "food")
    assert again is not None and again.provenance.version == 2
    assert again.created_at > restored.created_at


def test_a_delete_takes_every_version_and_brings_none_back(
    store: AmemStore, mg: MemoryGraph
) -> None:
    """Retracting only the live version would put the one it superseded back in its place."""
    store.put(ALICE, "food", {"likes": "pizza"})
    store.put(ALICE, "food", {"likes": "sushi"})
    store.delete(ALICE, "food")
    assert store.get(ALICE, "food") is None
    assert store.search(ALICE) == [] and store.search(ALICE, query="pizza") == []
    assert [h.provenance.status for h in store.history(ALICE, "food")] == ["retracted"] * 2
    [event] = mg.audit(kind="retract")
    assert event.retraction_id is not None
    mg.restore(event.retraction_id)  # the key as it was: sushi live, pizza behind it
    assert [(h.value, h.provenance.status) for h in store.history(ALICE, "food")] == [
        ({"likes": "pizza"}, "superseded"),
        ({"likes": "sushi"}, "active"),
    ]


def test_the_same_value_with_its_keys_in_another_order_writes_nothing(store: AmemStore) -> None:
    store.put(ALICE, "food", {"likes": "pizza", "n": 1})
    store.put(ALICE, "food", {"n": 1, "likes": "pizza"})
    assert len(store.history(ALICE, "food")) == 1
    store.put(ALICE, "food", {"likes": "pizza", "n": 1.0})  # another JSON value: a version
    assert len(store.history(ALICE, "food")) == 2


def test_namespaces_never_read_each_other(store: AmemStore, mg: MemoryGraph) -> None:
    store.put(ALICE, "secret", {"text": "alice's vpn password rotates on mondays"})
    store.put(("users", "alice2"), "secret", {"text": "alice2's vpn password is long"})
    store.put(("users", "bob"), "note", {"text": "bob likes vpn tunnels"})
    mg.remember("vpn notes outside any namespace", scope="default")
    for prefix, keys in [
        (ALICE, {(ALICE, "secret")}),
        (("users", "al"), set()),  # a label prefix is not a namespace prefix
        (("users", "alice2"), {(("users", "alice2"), "secret")}),
    ]:
        for query in (None, "vpn password"):
            got = {(i.namespace, i.key) for i in store.search(prefix, query=query)}
            assert got == keys, (prefix, query)
    everyone = store.search(("users",), query="vpn", limit=10)
    assert len(everyone) == 3


def test_odd_labels_round_trip() -> None:
    for namespace in [("ü", "x y", "@:/"), ("a-b_c",), ("1", "*")]:
        scope = namespace_scope(namespace)
        assert scope.startswith("lg:") and scope_namespace(scope) == namespace
        assert decode(encode(namespace)) == namespace
    assert scope_namespace("default") is None


def test_listing_and_prefix_searches_on_a_fresh_store(store: AmemStore) -> None:
    store.put(("a", "b", "c"), "k", {"n": 1})
    store.put(("a", "x y"), "k", {"n": 2})
    store.put(("z",), "k", {"n": 3})
    assert store.list_namespaces() == [("a", "b", "c"), ("a", "x y"), ("z",)]
    assert store.list_namespaces(max_depth=1) == [("a",), ("z",)]
    assert store.list_namespaces(prefix=("a", "*"), max_depth=2) == [("a", "b"), ("a", "x y")]
    assert [i.value["n"] for i in store.search(())] == [3, 2, 1]  # a listing: newest first
    assert [i.value for i in store.search((), filter={"n": {"$gt": 1}}, limit=1, offset=1)] in (
        [{"n": 2}],
        [{"n": 3}],
    )


def test_provenance_and_reads_in_an_episode(store: AmemStore, mg: MemoryGraph) -> None:
    store.put(ALICE, "tip", {"text": "use the ops-eu vpn for eu deploys"})
    with mg.episode(agent="deployer", task="deploy") as ep:
        bound = store.bind(episode=ep)
        hits = bound.search(ALICE, query="how do I deploy to eu?")
        got = bound.get(ALICE, "tip")
        bound.put(ALICE, "done", {"text": "deployed build 812"})
        ep.outcome(success=True)
    assert got is not None and got == Item(
        namespace=got.namespace, key="tip", value=got.value, created_at=got.created_at,
        updated_at=got.updated_at,
    )  # fmt: skip
    assert got.provenance.author == "writer" and got.provenance.episode is None
    assert [h.key for h in hits] == ["tip"]
    reads = mg.store.edges([ep.id], ["READ"], "out")
    assert {e.dst for e in reads} == {got.provenance.memory_id}
    assert len(reads) == 2
    tip = store.get(ALICE, "tip")
    assert tip is not None and tip.provenance.confidence > 0.5
    done = store.get(ALICE, "done")
    assert done is not None and done.provenance.author == "deployer"
    assert done.provenance.episode == ep.id and done.provenance.task == "deploy"


def test_bad_input_fails_the_whole_batch(store: AmemStore, mg: MemoryGraph) -> None:
    before = mg.stats()["counts"]
    bad: list[Any] = [
        [PutOp(ALICE, "ok", {"n": 1}), PutOp(ALICE, "bad", {"when": object()})],
        [PutOp(ALICE, "ok", {"n": 1}), PutOp(ALICE, "nan", {"n": float("nan")})],
        [PutOp(("langgraph", "x"), "k", {"n": 1})],
        [PutOp(("a.b",), "k", {"n": 1})],
        [PutOp(("x" * 300,), "k", {"n": 1})],
    ]
    for ops in bad:
        with pytest.raises((ValidationError, InvalidNamespaceError)):
            store.batch(ops)
    assert mg.stats()["counts"] == before
    with pytest.raises(NamespaceError) as caught:
        store.put(("x" * 300,), "k", {"n": 1})
    assert isinstance(caught.value, ValidationError | InvalidNamespaceError)
    with pytest.raises(ValidationError, match="operator"):
        store.search(ALICE, filter={"n": {"$near": 1}})


def test_a_retraction_of_the_live_version_brings_back_the_one_it_replaced(
    store: AmemStore, mg: MemoryGraph
) -> None:
    store.put(ALICE, "tip", {"text": "v1"})
    store.put(ALICE, "tip", {"text": "poisoned v2"})
    live = store.get(ALICE, "tip")
    assert live is not None
    report = mg.retract(live.provenance.memory_id, reason="poisoned")
    back = store.get(ALICE, "tip")  # retracting a replacement un-supersedes what it replaced
    assert back is not None and back.value == {"text": "v1"}
    assert report.unsuperseded == [back.provenance.memory_id]
    assert [h.provenance.status for h in store.history(ALICE, "tip")] == ["active", "retracted"]
    mg.retract(back.provenance.memory_id, reason="also wrong")
    assert store.get(ALICE, "tip") is None


def test_abatch_runs_off_the_event_loop(store: AmemStore) -> None:
    async def main() -> list[Any]:
        await store.aput(ALICE, "k", {"n": 1})
        return await asyncio.gather(*(store.aget(ALICE, "k") for _ in range(5)))

    got = asyncio.run(main())
    assert all(item is not None and item.value == {"n": 1} for item in got)


class State(TypedDict):
    user: str
    fact: str
    known: list[str]


def test_a_langgraph_graph_uses_it_as_its_store(store: AmemStore) -> None:
    def learn(state: State, *, store: BaseStore) -> dict[str, Any]:
        store.put(("facts", state["user"]), state["fact"][:12], {"text": state["fact"]})
        return {}

    def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
        found = store.search(("facts", state["user"]), query="which vpn?")
        return {"known": [item.value["text"] for item in found]}

    builder = StateGraph(State)
    builder.add_node("learn", learn)
    builder.add_node("recall", recall)
    builder.add_edge(START, "learn")
    builder.add_edge("learn", "recall")
    graph = builder.compile(store=store)
    graph.invoke({"user": "alice", "fact": "alice uses the ops-eu vpn", "known": []})
    out = graph.invoke({"user": "bob", "fact": "bob uses the us vpn", "known": []})
    assert out["known"] == ["bob uses the us vpn"]


def test_another_writers_new_namespace_is_searched_at_once(
    store: AmemStore, mg: MemoryGraph
) -> None:
    """The namespace cache is keyed by the store's source count: a second writer (another
    MemoryGraph over the same store, as another process would be) is seen on the next call."""
    store.put(ALICE, "tip", {"text": "alice uses the ops-eu vpn"})
    assert [i.key for i in store.search(("users",), query="vpn")] == ["tip"]  # cached now
    other = AmemStore(MemoryGraph(mg.store, mg.embedder), agent="other")
    other.put(("users", "carol"), "tip", {"text": "carol uses the ops-us vpn"})
    found = {(i.namespace, i.key) for i in store.search(("users",), query="vpn")}
    assert found == {(ALICE, "tip"), (("users", "carol"), "tip")}
    assert store.list_namespaces() == [ALICE, ("users", "carol")]
    other.delete(("users", "carol"), "tip")  # retracted: no live item, the namespace goes
    assert store.list_namespaces() == [ALICE]
    mg.forget(scope=namespace_scope(ALICE), reason="erasure")  # and erased items too
    assert store.list_namespaces() == [] and store.search(("users",), query="vpn") == []
    mg.remember("not an item", scope=namespace_scope(("users", "dave")))
    other.put(("users", "dave"), "k", {"text": "dave's item after a plain memory"})
    assert store.list_namespaces() == [("users", "dave")]  # an item behind a non-item


def _count_store_calls(mg: MemoryGraph, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of a public method of the graph's store from now on, by name."""
    calls: list[str] = []
    for name in dir(type(mg.store)):
        method = getattr(mg.store, name)
        if name.startswith("_") or not callable(method):
            continue

        def counted(*args: Any, _name: str = name, _method: Any = method, **kw: Any) -> Any:
            calls.append(_name)
            return _method(*args, **kw)

        monkeypatch.setattr(mg.store, name, counted)
    return calls


def test_listing_reads_the_store_as_often_for_many_namespaces_as_for_few(
    store: AmemStore, mg: MemoryGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One read per namespace made 2,000 namespaces take 2 s on Neo4j; the listing now reads
    the same few times whatever their number (the sources are read again only after a
    write, when the store's count of them moved)."""
    few = [("team", f"t{i}") for i in range(3)]
    many = few + [("team", f"t{i}") for i in range(3, 40)]
    store.batch([PutOp(n, "k", {"i": i}) for i, n in enumerate(few)])
    calls = _count_store_calls(mg, monkeypatch)
    assert store.list_namespaces(limit=100) == sorted(few)
    reads_few = list(calls)
    store.batch([PutOp(n, "k", {"i": i}) for i, n in enumerate(many)])
    del calls[:]
    assert store.list_namespaces(limit=100) == sorted(many)
    assert calls == reads_few and len(calls) <= 5
    store.delete(("team", "t7"), "k")
    assert ("team", "t7") not in store.list_namespaces(limit=100)


def test_search_shows_the_value_get_shows_after_a_restore_branched_the_key(
    store: AmemStore, mg: MemoryGraph
) -> None:
    """An analyst retracts v2 (v1 is current again), a put writes v3 over v1, then the
    retraction is restored: v2 and v3 are both active. ``get`` shows the latest put; search
    showed v2 when the query matched it better."""
    store.put(ALICE, "vpn", {"text": "alice uses the ops-eu vpn"})
    store.put(ALICE, "vpn", {"text": "alice uses the ops-us vpn"})
    v2 = store.history(ALICE, "vpn")[-1].provenance.memory_id
    report = mg.retract(v2, reason="wrong region")
    store.put(ALICE, "vpn", {"text": "alice uses the ops-asia vpn"})
    mg.restore(report.id)
    assert mg.get(v2).status == "active"  # the branch the restore brought back
    current = {"text": "alice uses the ops-asia vpn"}
    item = store.get(ALICE, "vpn")
    assert item is not None and item.value == current
    for query in ("ops-us vpn", "vpn", "alice"):
        assert [(i.key, i.value) for i in store.search(ALICE, query=query)] == [("vpn", current)]
    assert [i.value for i in store.search(ALICE)] == [current]
