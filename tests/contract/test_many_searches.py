"""Ingest's batched nearest-note searches give each vector ``vector_search``'s answer on every
path: many query vectors (the Neo4j store then reads the admitted vectors once and scores the
pairs on the client), exact ties, zero vectors, a starved index fetch, a scope past the exact
scan's size. The contract suite's own test asks a few vectors per filter, under the size at
which the batched exact pass starts."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import numpy as np
import pytest

from amem_graph.core.models import Memory, content_hash
from amem_graph.stores.base import GraphStore, MemoryFilter, WriteBatch, vector_search_many
from amem_graph.stores.neo4j import exact_many, plan, search
from amem_graph.stores.neo4j import many as neo4j_many

DIMS = 8
T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)

#: path name -> module attributes to set (the Neo4j store's plan; the embedded store ignores
#: them and must agree all the same)
PATHS: dict[str, list[tuple[object, str, object]]] = {
    "exact, every pair on the server": [
        (plan, "SELECTIVE_SHARE", 2.0),
        (plan, "EXACT_SMALL", 10**9),
        (exact_many, "POOL_MIN", 10**9),
    ],
    "exact, pairs scored here, small chunks": [
        (plan, "SELECTIVE_SHARE", 2.0),
        (plan, "EXACT_SMALL", 10**9),
        (exact_many, "POOL_MIN", 1),
        (exact_many, "CHUNK", 7),
        (neo4j_many, "CHUNK", 7),
    ],
    "scaled index fetch, starved then exact": [
        (plan, "SELECTIVE_SHARE", 2.0),
        (plan, "EXACT_SMALL", 0),
        (plan, "SCAN_PER_HIT", 0),
        (exact_many, "POOL_MIN", 1),
        (exact_many, "POOL_MAX", 0),
    ],
    "scaled index fetch, starved then grown": [
        (plan, "SELECTIVE_SHARE", 2.0),
        (plan, "EXACT_SMALL", 0),
        (plan, "SCAN_PER_HIT", 0),
        (exact_many, "POOL_MAX", 0),
        (search, "_EXACT_MAX", 0),
    ],
}


def _unit(rng: random.Random) -> list[float]:
    vec = np.asarray([rng.gauss(0.0, 1.0) for _ in range(DIMS)])
    return [float(x) for x in vec / np.linalg.norm(vec)]


def _memory(mid: str, vec: list[float], scope: str) -> Memory:
    return Memory(
        id=mid,
        content=f"memory {mid}",
        content_hash=content_hash(f"memory {mid}"),
        created_at=T0,
        valid_from=T0,
        embedding=vec,
        scope=scope,
    )


@pytest.fixture
def loaded(store: GraphStore) -> tuple[GraphStore, list[list[float]]]:
    """A crowd scope and a small one holding duplicates (exact ties) and zero vectors; the
    query vectors (40 random, and copies of stored ones so ties sit at the top)."""
    store.ensure_embedder("many-searches-test", DIMS)
    rng = random.Random(11)
    crowd = [_memory(f"crowd-{i:03d}", _unit(rng), "crowd") for i in range(240)]
    shared = _unit(rng)
    small = [_memory(f"small-{i:02d}", _unit(rng), "small") for i in range(30)]
    small += [_memory(f"twin-{i}", shared, "small") for i in range(3)]
    small += [_memory(f"zero-{i}", [0.0] * DIMS, "small") for i in range(2)]
    store.apply(WriteBatch(memories=crowd + small))
    queries = [_unit(rng) for _ in range(40)] + [shared, small[4].embedding or []]
    return store, queries


@pytest.mark.parametrize("path", list(PATHS))
def test_many_searches_answer_as_one_search_each_on_every_path(
    loaded: tuple[GraphStore, list[list[float]]], path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, queries = loaded
    for module, attr, value in PATHS[path]:
        monkeypatch.setattr(module, attr, value)
    for flt in (MemoryFilter(scopes=("small",)), MemoryFilter(scopes=("small", "crowd"))):
        searches = [(q, flt) for q in queries]
        for k in (1, 5, 40):
            got = vector_search_many(store, searches, k)
            assert got == [store.vector_search(q, k, flt) for q in queries], (flt, k)
    twins = vector_search_many(store, [(queries[40], MemoryFilter(scopes=("small",)))], 3)
    assert [mid for mid, _ in twins[0]] == ["twin-0", "twin-1", "twin-2"]


def test_a_batch_into_a_small_scope_gets_the_exact_answer_where_one_search_asks_the_index(
    loaded: tuple[GraphStore, list[list[float]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exact pass is taken for a batch when it is cheaper than an index fetch per vector:
    its answers are the exact scan's (what ``vector_search`` gives when it scans)."""
    store, queries = loaded
    flt = MemoryFilter(scopes=("small",))
    monkeypatch.setattr(plan, "SELECTIVE_SHARE", 2.0)
    monkeypatch.setattr(plan, "EXACT_SMALL", 10**9)
    exact = [store.vector_search(q, 5, flt) for q in queries]
    monkeypatch.setattr(plan, "EXACT_SMALL", 0)  # one search now asks the index
    monkeypatch.setattr(plan, "SCAN_PER_HIT", 0)
    monkeypatch.setattr(plan, "COUNT_TTL", 0.0)
    assert exact_many.pool_is_cheaper(35, len(queries))

    def no_index(*_: object) -> None:
        raise AssertionError("the batch asked the index")

    monkeypatch.setattr(neo4j_many.Neo4jSearchMany, "_ann_many", no_index)
    assert vector_search_many(store, [(q, flt) for q in queries], 5) == exact
    assert not exact_many.pool_is_cheaper(35, exact_many.POOL_MIN - 1)
    assert not exact_many.pool_is_cheaper(exact_many.POOL_MAX + 1, 10**6)


def test_candidates_hold_every_pair_that_can_be_in_the_top_k() -> None:
    """The client's scores may be off by a little: whatever the server's top k by its own
    scores, it is among the candidates when the two differ by under half the margin."""
    rng = np.random.default_rng(3)
    client = rng.standard_normal((500, 20))
    client[:5] = client[5]  # a group of ties
    ids = [f"m{i:03d}" for i in range(500)]
    server = client + rng.uniform(-0.49, 0.49, client.shape) * exact_many.MARGIN
    for k in (1, 6, 10):
        got = exact_many.candidates(client, ids, k)
        for j in range(client.shape[1]):
            best = sorted(range(500), key=lambda i: (-server[i, j], ids[i]))[:k]
            assert {ids[i] for i in best} <= set(got[j])
            assert len(got[j]) < 500
    assert exact_many.candidates(client[:4], ids[:4], 10) == [ids[:4]] * 20
