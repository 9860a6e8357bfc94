"""Scope isolation through the doors (issue 18), as properties, on both stores.

Hypothesis draws two tenants' memories from one small vocabulary (so every query matches both),
LangGraph items in sibling namespaces (one a label prefix of another), a query and a ``k``. Bound
to tenant ``a``, the retriever, the four tools and the middleware must never return, show or
read a memory of ``b`` (nor a namespace's item), whatever the model passes as arguments; an
``AmemStore`` search, get or listing under a namespace never returns another namespace's item.
Every example works under fresh scope and namespace names, so examples share one database.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from amem_graph import MemoryGraph
from amem_graph.integrations.langgraph_store import AmemStore
from amem_graph.integrations.middleware import AmemMemoryMiddleware
from amem_graph.integrations.retriever import AmemRetriever
from amem_graph.integrations.tools import memory_tools
from amem_graph.stores.base import MemoryFilter

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from scripted_model import ScriptedChatModel

EXAMPLES = int(os.environ.get("AMEM_HYPOTHESIS_EXAMPLES", "10"))
WORDS = ["deploy", "vpn", "invoice", "retry", "cache", "rotation"]
#: namespaces under the example's root; ("t0x",) starts with the label "t0" but is not under it
NAMESPACES = [("t0",), ("t0", "x"), ("t1",), ("t0x",)]

phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
#: each tenant has at least one memory (the first two: a's by bob, b's by ana), the rest drawn
memories = st.lists(st.tuples(st.sampled_from("ab"), phrases), min_size=2, max_size=10).map(
    lambda rows: [("a", rows[0][1]), ("b", rows[1][1]), *rows[2:]]
)
items = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["k1", "k2"]), phrases), max_size=8)


def world(mg: MemoryGraph, rows: list[tuple[str, str]], root: str) -> dict[str, set[str]]:
    """Store the memories; tenant -> its memory ids."""
    out: dict[str, set[str]] = {"a": set(), "b": set()}
    for i, (tenant, text) in enumerate(rows):
        m = mg.remember(f"{text} note {i}", id=f"{root}-{tenant}{i}", scope=f"{root}-{tenant}",
                        agent="ana" if i % 2 else "bob")  # fmt: skip
        out[tenant].add(m.id)
    return out


def check_retriever(
    mg: MemoryGraph, scope: str, mine: set[str], query: str, k: int, author: str
) -> None:
    retriever = AmemRetriever(graph=mg, scope=scope, k=k)
    # ``author`` wrote one of this tenant's memories: an agent filter that admits nothing in
    # the scope can raise on Neo4j (a store bug: test_retriever_tools.py's
    # test_an_agent_filter_that_admits_nothing_in_scope)
    for docs in (retriever.invoke(query), retriever.invoke(query, agent=author, k=k + 1)):
        assert {d.id for d in docs} <= mine
        assert all(d.metadata["scope"] == scope for d in docs)
    with mg.episode(agent="ana", scope=scope) as ep:
        docs = AmemRetriever(graph=mg, episode=ep, k=k).invoke(query)
    assert {d.id for d in docs} <= mine
    assert {e.dst for e in mg.store.edges([ep.id], ["READ"], "out")} <= mine


def check_tools(mg: MemoryGraph, scope: str, mine: set[str], theirs: set[str], query: str) -> None:
    remember, recall, _, trace = memory_tools(mg, scope=scope, agent="bot")
    forged = {"scope": "elsewhere", "agent": "mallory"}
    call = {"type": "tool_call", "id": "c1", "name": "recall",
            "args": {"query": query, "k": 20, **forged}}  # fmt: skip
    message = recall.invoke(call)
    assert isinstance(message, ToolMessage)
    assert {a["memory_id"] for a in message.artifact} <= mine
    assert not any(f"[{t}]" in str(message.content) for t in theirs)
    for other in sorted(theirs)[:3]:
        assert "no memory" in trace.invoke({"memory_id": other})
    said = remember.invoke({"content": f"{query} learned", **forged})
    written = said.removeprefix("Remembered as ").rstrip(".")
    assert mg.get(written).scope == scope
    mine.add(written)


def check_middleware(mg: MemoryGraph, scope: str, mine: set[str], query: str, k: int) -> None:
    ask = AIMessage("", tool_calls=[{"name": "recall", "args": {"query": query, "k": 20},
                                     "id": "c1"}])  # fmt: skip
    model = ScriptedChatModel(script=[ask, "done"])
    middleware = AmemMemoryMiddleware(mg, scope=scope, agent="helper", k=k, include_tools=True,
                                      outcome=lambda s: True)  # fmt: skip
    agent = create_agent(model, tools=middleware.tools, middleware=[middleware])
    result = agent.invoke({"messages": [HumanMessage(query)]})
    shown = "\n".join(str(p[0].content) for p in model.prompts)
    everyone = {m.id for m in mg.store.find_memories(MemoryFilter(statuses=None))}
    assert everyone > mine
    assert {mid for mid in everyone if f"[{mid}]" in shown} <= mine
    episode = result["amem_episode"]
    assert {e.dst for e in mg.store.edges([episode], ["READ"], "out")} <= mine
    assert set(result["amem_used"] or []) <= mine


def check_store(mg: MemoryGraph, root: str, rows: list[tuple[int, str, str]], query: str) -> None:
    store = AmemStore(mg, agent="writer")
    live: dict[tuple[tuple[str, ...], str], str] = {}
    for n, key, text in rows:
        namespace = (root, *NAMESPACES[n])
        store.put(namespace, key, {"text": text})
        live[(namespace, key)] = text
    for prefix in NAMESPACES:
        full = (root, *prefix)
        below = {nk for nk in live if nk[0][: len(full)] == full}
        for q in (None, query):
            got = {(i.namespace, i.key) for i in store.search(full, query=q, limit=50)}
            assert got == below, (full, q)
        for key in ("k1", "k2"):
            item = store.get(full, key)
            assert (item is None) == ((full, key) not in live)
            assert item is None or item.value["text"] == live[(full, key)]
        listed = store.list_namespaces(prefix=full)
        assert set(listed) == {nk[0] for nk in below}, (full, listed)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_the_doors_never_cross_a_scope(mg: MemoryGraph) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(rows=memories, lg_items=items, query=phrases, k=st.integers(1, 8))
    def run(rows: list[tuple[str, str]], lg_items: list[tuple[int, str, str]], query: str,
            k: int) -> None:  # fmt: skip
        root = f"r{uuid.uuid4().hex[:10]}"
        owned = world(mg, rows, root)
        check_store(mg, root, lg_items, query)  # items in lg: scopes, never in a tenant's
        for tenant, other in (("a", "b"), ("b", "a")):
            scope, mine, theirs = f"{root}-{tenant}", owned[tenant], owned[other]
            check_retriever(mg, scope, mine, query, k, "bob" if tenant == "a" else "ana")
            check_tools(mg, scope, mine, theirs, query)
            check_middleware(mg, scope, mine, query, k)

    run()
