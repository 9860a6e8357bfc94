"""AmemStore against LangGraph's InMemoryStore: the same random op sequences, the same answers.

Hypothesis draws batches of puts, deletes, gets, searches (filters, limits, offsets, queries)
and namespace listings; both stores run each batch, on each of our backends. Every namespace of
an example sits under a fresh root label, so the examples share one database and never see each
other. Where the two stores may legitimately differ, the comparison says so:

* order: a search returns the same number of items, drawn from the same matching set, but
  orders them its own way (InMemoryStore by insertion, or ignoring the query; ours newest first,
  or by recall score);
* InMemoryStore lists a namespace that a get merely looked at, or whose items were all deleted
  (its defaultdict keeps the empty entry); the reference below runs each read on its own and
  prunes those, so the listing compared is the one its docs describe.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from amem_graph import MemoryGraph
from amem_graph.integrations.langgraph_store import AmemStore

EXAMPLES = int(os.environ.get("AMEM_HYPOTHESIS_EXAMPLES", "25"))
NAMESPACES = [("a",), ("a", "b"), ("a", "x y"), ("a", "b", "c"), ("b",), ("ü", "@:")]
PREFIXES = [(), ("a",), ("a", "b"), ("a", "x y"), ("b",), ("ü",), ("c",)]
LABELS = ["a", "b", "c", "x y", "ü", "@:"]
KEYS = ["k1", "k2", "k/3", "", "key with space"]
WORDS = ["deploy", "cache", "vpn", "invoice", "retry"]
FILTERS: list[dict[str, Any] | None] = [
    None,
    {"tag": "red"},
    {"n": {"$gte": 2}},
    {"n": {"$lt": 3}, "tag": "blue"},
    {"meta": {"color": "red"}},
    {"tag": {"$ne": "red"}},
]


class Reference(InMemoryStore):
    """InMemoryStore whose listing holds only namespaces with items (see the module doc)."""

    def batch(self, ops: Any) -> list[Any]:
        ops = list(ops)
        results = []
        for op in ops:
            results.append(None if isinstance(op, PutOp) else super().batch([op])[0])
            self._prune()
        super().batch([op for op in ops if isinstance(op, PutOp)])
        self._prune()
        return results

    def _prune(self) -> None:
        for namespace in [n for n, items in self._data.items() if not items]:
            del self._data[namespace]


namespaces = st.sampled_from(NAMESPACES)
values = st.fixed_dictionaries(
    {
        "text": st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
        "n": st.integers(0, 5),
        "tag": st.sampled_from(["red", "blue"]),
    },
    optional={"meta": st.fixed_dictionaries({"color": st.sampled_from(["red", "blue"])})},
)
puts = st.builds(PutOp, namespaces, st.sampled_from(KEYS), st.one_of(st.none(), values, values))
gets = st.builds(GetOp, namespaces, st.sampled_from(KEYS))
searches = st.builds(
    SearchOp,
    st.sampled_from(PREFIXES),
    st.sampled_from(FILTERS),
    st.integers(0, 6),
    st.integers(0, 4),
    st.one_of(st.none(), st.sampled_from(WORDS)),
)
conditions = st.one_of(
    st.none(),
    st.builds(
        lambda kind, path: (MatchCondition(kind, tuple(path)),),
        st.sampled_from(["prefix", "suffix"]),
        st.lists(st.sampled_from([*LABELS, "*"]), min_size=1, max_size=2),
    ),
)
listings = st.builds(
    ListNamespacesOp, conditions, st.one_of(st.none(), st.integers(1, 3)), st.integers(1, 8),
    st.integers(0, 3),
)  # fmt: skip
batches = st.lists(
    st.lists(st.one_of(puts, puts, gets, searches, listings), min_size=1, max_size=4),
    min_size=1,
    max_size=10,
)


def rooted(op: Op, root: str) -> Op:
    """The op with every namespace under ``root`` (listings keep to it with a prefix)."""
    if isinstance(op, PutOp | GetOp):
        return op._replace(namespace=(root, *op.namespace))
    if isinstance(op, SearchOp):
        return op._replace(namespace_prefix=(root, *op.namespace_prefix))
    assert isinstance(op, ListNamespacesOp)
    keep = MatchCondition("prefix", (root,))
    rest = []
    for c in op.match_conditions or ():
        rest.append(c._replace(path=(root, *c.path)) if c.match_type == "prefix" else c)
    depth = None if op.max_depth is None else op.max_depth + 1
    return op._replace(match_conditions=(keep, *rest), max_depth=depth)


def everything(op: SearchOp) -> SearchOp:
    return op._replace(limit=10_000, offset=0)


def triple(item: Item) -> tuple[tuple[str, ...], str, str]:
    return (tuple(item.namespace), item.key, json.dumps(item.value, sort_keys=True))


def check_batch(ours: AmemStore, ref: Reference, ops: list[Op]) -> None:
    full = {
        i: ref.batch([everything(op)])[0] for i, op in enumerate(ops) if isinstance(op, SearchOp)
    }
    got, want = ours.batch(ops), ref.batch(ops)
    for i, (op, a, b) in enumerate(zip(ops, got, want, strict=True)):
        if isinstance(op, PutOp):
            assert a is None and b is None
        elif isinstance(op, GetOp):
            assert (a is None) == (b is None), op
            if a is not None:
                assert triple(a) == triple(b), op
        elif isinstance(op, SearchOp):
            assert len(a) == len(b), (op, [triple(x) for x in a], [triple(x) for x in b])
            matching = {triple(x) for x in full[i]}
            assert {triple(x) for x in a} <= matching, op
            assert len({(x.namespace, x.key) for x in a}) == len(a), op
            assert all((x.score is None) == (op.query is None) for x in a), op
        else:
            assert a == b, op


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_amem_store_answers_like_in_memory_store(mg: MemoryGraph) -> None:
    ours = AmemStore(mg, agent="differential")

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(batches)
    def run(sequence: list[list[Op]]) -> None:
        root = f"r{uuid.uuid4().hex[:10]}"
        ref = Reference()
        for ops in sequence:
            check_batch(ours, ref, [rooted(op, root) for op in ops])
        final = SearchOp((root,), None, 10_000, 0)
        assert {triple(x) for x in ours.batch([final])[0]} == {
            triple(x) for x in ref.batch([final])[0]
        }

    run()
