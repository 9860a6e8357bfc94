"""The selective-scope fast path gives what the slow path gives, on both stores.

A recall in a scope that holds a small share of the store is searched over that scope alone
(embedded: its rows gathered and its postings; Neo4j: an exact scan of its vectors, or an ANN
fetch scaled to its share, and a scope clause inside the full-text query). Each path is forced
here in turn over the same data, and every recall must return the same hits in the same order
with the same signal values.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.memory.graph import Hit
from amem_graph.stores.base import GraphStore
from amem_graph.stores.local import mirror
from amem_graph.stores.neo4j import cypher as neo4j_cypher
from amem_graph.stores.neo4j import plan as neo4j_plan

#: enough words that a query matches fewer memories than the text path's depth, and a word of
#: its own in each memory (so no two share a vector): an index never cuts a group of equal
#: scores, which it would cut in its own order, not by id
WORDS = [f"word{j}" for j in range(60)]
T0 = datetime(2026, 1, 1, tzinfo=UTC)
#: (scope, memories): one big tenant and several small ones
TENANTS = [("big", 300)] + [(f"small-{j}", 40) for j in range(6)]

#: store kind -> path name -> module attributes to set
PATHS: dict[str, dict[str, list[tuple[object, str, object]]]] = {
    "local": {
        "whole store": [(mirror, "SELECTIVE_SHARE", 0.0)],
        "own rows": [(mirror, "SELECTIVE_SHARE", 2.0)],
    },
    "neo4j": {
        "index, unscoped text": [
            (neo4j_plan, "SELECTIVE_SHARE", 0.0),
            (neo4j_cypher, "_MAX_SCOPE_TERMS", 0),
        ],
        "exact scan, scoped text": [
            (neo4j_plan, "SELECTIVE_SHARE", 2.0),
            (neo4j_plan, "EXACT_SMALL", 10**9),
        ],
        "scaled index fetch": [
            (neo4j_plan, "SELECTIVE_SHARE", 2.0),
            (neo4j_plan, "EXACT_SMALL", 0),
            (neo4j_plan, "SCAN_PER_HIT", 0),
        ],
    },
}


def _load(mg: MemoryGraph) -> None:
    rng = random.Random(7)
    rows = []
    n = 0
    for scope, size in TENANTS:
        for i in range(size):
            words = [*rng.sample(WORDS, 4), f"own{n}"]
            rows.append(
                {
                    "content": " ".join(words),
                    "scope": scope,
                    "agent": f"agent-{n % 3}",
                    "episode": f"{scope}-ep-{i // 8}",
                    "timestamp": T0 + timedelta(minutes=n),
                }
            )
            n += 1
    mg.remember_many(rows)


def _view(hits: list[Hit]) -> list[tuple[str, str, dict[str, float]]]:
    out = []
    for h in hits:
        assert h.explanation is not None
        signals = {k: s.value for k, s in h.explanation.signals.items()}
        out.append((h.memory.id, h.memory.scope, signals))
    return out


@pytest.mark.parametrize("store_kind", ["local", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_every_search_path_gives_the_same_recall(
    store_kind: str, make_store: Callable[[], GraphStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    mg = MemoryGraph(make_store(), HashingEmbedder())
    _load(mg)
    as_of = T0 + timedelta(days=1)
    asks = [(scope, f"{WORDS[j]} {WORDS[j + 2]}") for j in range(5) for scope, _ in TENANTS[:4]]
    results: dict[str, list[list[tuple[str, str, dict[str, float]]]]] = {}
    for name, settings in PATHS[store_kind].items():
        with monkeypatch.context() as patch:
            for module, attr, value in settings:
                patch.setattr(module, attr, value)
            results[name] = [
                _view(mg.recall(q, k=10, scope=scope, as_of=as_of, explain=True))
                for scope, q in asks
            ]
    first = next(iter(results.values()))
    for (scope, _), hits in zip(asks, first, strict=True):
        assert len(hits) == 10
        assert {s for _, s, _ in hits} == {scope}
    for name, got in results.items():
        assert got == first, name
    mg.close()


@pytest.mark.parametrize("store_kind", ["local", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_a_filter_that_admits_nothing_gives_nothing_on_every_path(
    store_kind: str, make_store: Callable[[], GraphStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty admitted set is an answer, not an error: the exact scan over it once returned
    no row at all on Neo4j (a literal beside an aggregate is a grouping key), and recall
    failed with "No records found"."""
    mg = MemoryGraph(make_store(), HashingEmbedder())
    _load(mg)
    for name, settings in PATHS[store_kind].items():
        with monkeypatch.context() as patch:
            for module, attr, value in settings:
                patch.setattr(module, attr, value)
            assert mg.recall(f"{WORDS[0]} {WORDS[1]}", scope="small-0", agent="nobody") == [], name
            assert mg.recall(WORDS[0], scope="no-such-scope") == [], name
    mg.close()
