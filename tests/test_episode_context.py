"""A memory's vector carries a share of its episode's previous memory
(``notes/episode_context.py``), on every store: the same vectors whether turns are written one
at a time, in a batch, by ``import_memories`` or re-embedded from an export; the predecessor is
chosen by time within one scope; given vectors are kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from amem_graph import HashingEmbedder, MemoryGraph, MemoryGraphConfig
from amem_graph.stores.base import GraphStore, MemoryFilter
from amem_graph.stores.local import LocalStore
from amem_graph.transfer.jsonl import export_graph, import_graph

T0 = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
W = MemoryGraphConfig().episode_context
TURNS = [
    "What did you end up getting at the shelter?",
    "A beagle puppy, two months old",
    "Oh nice, what did you name him?",
    "Biscuit, after the colour of his ears",
]


def raw(text: str) -> np.ndarray:
    return np.asarray(HashingEmbedder().embed_documents([text])[0], dtype=np.float64)


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def stored(mg: MemoryGraph, *ids: str) -> list[np.ndarray]:
    found = mg.store.get_memories(list(ids))
    return [np.asarray(found[i].embedding, dtype=np.float64) for i in ids]


def turns(scope: str, episode: str = "s1") -> list[dict[str, object]]:
    return [
        {
            "content": text,
            "id": f"{scope}-{i}",
            "scope": scope,
            "episode": episode,
            "kind": "episodic",
            "timestamp": T0 + timedelta(seconds=i),
        }
        for i, text in enumerate(TURNS)
    ]


def test_a_turn_carries_its_predecessor_and_a_lone_memory_is_embedded_alone(
    mg: MemoryGraph,
) -> None:
    assert 0 < W < 1
    lone = {"content": "The VPN config lives in the wiki", "id": "lone", "scope": "a"}
    mg.remember_many([*turns("a"), lone])
    v = stored(mg, *(f"a-{i}" for i in range(4)), "lone")
    expected = [raw(TURNS[0])]
    for text in TURNS[1:]:
        expected.append(unit(raw(text) + W * expected[-1]))
    for got, want in zip(v[:4], expected, strict=True):
        assert np.allclose(got, want, atol=1e-6)
    assert np.allclose(v[4], raw(lone["content"]), atol=1e-6)
    assert not np.allclose(v[1], raw(TURNS[1]), atol=1e-3)  # the blend is visible
    found = mg.store.get_memories([f"a-{i}" for i in range(4)] + ["lone"])
    assert [found[f"a-{i}"].lead_in for i in range(4)] == ["", *TURNS[:3]]  # each under 10 words
    assert found["lone"].lead_in == ""


def test_bm25_finds_a_turn_by_the_words_of_the_turn_it_answers(mg: MemoryGraph) -> None:
    mg.remember_many(turns("a"))
    # "shelter" is only in the question; the answer turn is found through its lead-in
    hits = [mid for mid, _ in mg.store.text_search("shelter", 5, MemoryFilter(scopes=("a",)))]
    assert set(hits) == {"a-0", "a-1"}
    hits = [mid for mid, _ in mg.store.text_search("beagle", 5, MemoryFilter(scopes=("a",)))]
    assert set(hits) == {"a-1", "a-2"}
    assert mg.store.get_memories(["a-1"])["a-1"].content == TURNS[1]  # shown as said


def test_the_lead_in_is_the_last_words_and_zero_keeps_none(store: GraphStore) -> None:
    three = MemoryGraph(store, HashingEmbedder(), MemoryGraphConfig(episode_lead_in=3))
    three.remember_many(turns("three"))
    none = MemoryGraph(store, HashingEmbedder(), MemoryGraphConfig(episode_lead_in=0))
    none.remember_many(turns("none"))
    found = store.get_memories(["three-1", "three-3", "none-1"])
    assert found["three-1"].lead_in == "at the shelter?"
    assert found["three-3"].lead_in == "you name him?"
    assert found["none-1"].lead_in == ""


def test_one_at_a_time_a_batch_and_an_import_give_the_same_vectors(mg: MemoryGraph) -> None:
    mg.remember_many(turns("batch"))
    for item in turns("single"):
        mg.remember(**item)  # type: ignore[arg-type]
    mg.import_memories(
        TURNS,
        ids=[f"imported-{i}" for i in range(4)],
        scope="imported",
        episode="s1",
        timestamps=[T0 + timedelta(seconds=i) for i in range(4)],
        kind="episodic",
    )
    for i in range(4):
        a, b, c = stored(mg, f"batch-{i}", f"single-{i}", f"imported-{i}")
        assert np.allclose(a, b, atol=1e-5)
        assert np.allclose(a, c, atol=1e-5)
        leads = mg.store.get_memories([f"batch-{i}", f"single-{i}", f"imported-{i}"])
        assert {m.lead_in for m in leads.values()} == {TURNS[i - 1] if i else ""}


def test_the_predecessor_is_the_latest_earlier_memory_of_that_episode_and_scope(
    mg: MemoryGraph,
) -> None:
    # the same episode id in another scope, and a later turn already stored, are not it
    mg.remember("A stranger's turn in another tenant", id="other", scope="b", episode="s1",
                kind="episodic", timestamp=T0 + timedelta(seconds=1))  # fmt: skip
    mg.remember("Said after everything below", id="later", scope="a", episode="s1",
                kind="episodic", timestamp=T0 + timedelta(hours=1))  # fmt: skip
    mg.remember(TURNS[0], id="first", scope="a", episode="s1", kind="episodic", timestamp=T0)
    # a batch given out of order: the predecessor is by time, not by position
    mg.remember_many(
        [
            {"content": TURNS[2], "id": "third", "scope": "a", "episode": "s1",
             "kind": "episodic", "timestamp": T0 + timedelta(seconds=20)},
            {"content": TURNS[1], "id": "second", "scope": "a", "episode": "s1",
             "kind": "episodic", "timestamp": T0 + timedelta(seconds=10)},
        ]
    )  # fmt: skip
    first, second, third = stored(mg, "first", "second", "third")
    assert np.allclose(first, raw(TURNS[0]), atol=1e-6)  # "later" came after it
    assert np.allclose(second, unit(raw(TURNS[1]) + W * first), atol=1e-5)
    assert np.allclose(third, unit(raw(TURNS[2]) + W * second), atol=1e-5)


def test_given_vectors_are_kept_and_a_weight_of_zero_embeds_alone(store: GraphStore) -> None:
    given = np.stack([unit(raw(t) + 1.0) for t in TURNS]).astype(np.float32)
    # two graphs on one store (the fixture closes it)
    plain = MemoryGraph(store, HashingEmbedder(), MemoryGraphConfig(episode_context=0))
    plain.remember_many(turns("plain"))
    for i, text in enumerate(TURNS):
        (alone,) = stored(plain, f"plain-{i}")
        assert np.allclose(alone, raw(text), atol=1e-6)
    blended = MemoryGraph(store, HashingEmbedder())
    blended.import_memories(
        TURNS, vectors=given, ids=[f"kept-{i}" for i in range(4)], scope="given",
        episode="s1", kind="episodic",
    )  # fmt: skip
    for i in range(4):
        (kept,) = stored(blended, f"kept-{i}")
        assert np.allclose(kept, given[i], atol=1e-6)
        # the lead-in is text, the library's own: given vectors do not stop it
        assert store.get_memories([f"kept-{i}"])[f"kept-{i}"].lead_in == (TURNS[i - 1] if i else "")


@pytest.mark.parametrize("weight", [-0.1, 1.5])
def test_a_weight_outside_zero_to_one_is_refused(weight: float) -> None:
    with pytest.raises(ValueError, match="episode_context"):
        MemoryGraphConfig(episode_context=weight)


def test_re_embedding_an_export_gives_the_vectors_remember_gave(
    tmp_path: Path, store: GraphStore
) -> None:
    source = MemoryGraph(LocalStore(tmp_path / "source.db"), HashingEmbedder())
    try:
        source.remember_many(turns("a") + turns("b", episode="s2"))
        for item in turns("a", episode="s3"):
            source.remember(**item | {"id": f"late-{item['id']}"})  # type: ignore[arg-type]
        export_graph(source.store, tmp_path / "g.jsonl")
        # batches of 3: an episode's chain continues across batches
        import_graph(store, tmp_path / "g.jsonl", batch_size=3, re_embed=HashingEmbedder())
        ids = [m.id for m in source.store.find_memories(MemoryFilter(statuses=None))]
        assert len(ids) == 12
        want = source.store.get_memories(ids)
        got = store.get_memories(ids)
        for mid in ids:
            assert np.allclose(got[mid].embedding or [], want[mid].embedding or [], atol=1e-5)
            assert got[mid].lead_in == want[mid].lead_in
    finally:
        source.close()


def test_episode_tails_from_sqlite_agree_with_the_mirror(tmp_path: Path) -> None:
    """A store nothing has read yet answers ``episode_tails`` from SQLite (an import does not
    build the mirror to ask); a store with its mirror built answers from the mirror's hubs.
    Both on one file, over ties, scopes, retractions, erasures and a merged duplicate."""
    rng = np.random.default_rng(5)
    path = tmp_path / "s.db"
    times = [T0 + timedelta(minutes=int(m)) for m in rng.integers(0, 12, size=240)]
    ids = [f"m{int(rng.integers(10**6)):07d}-{i}" for i in range(240)]
    with MemoryGraph.open(path, embedder=HashingEmbedder()) as mg:
        mg.import_memories(
            [f"turn {i} of {i % 9}" for i in range(240)],
            ids=ids,
            scope=[f"s{i % 3}" for i in range(240)],
            episode=[f"e{int(rng.integers(6))}" for _ in range(240)],
            timestamps=times,  # few distinct times: many ties, broken by the greater id
            notes=False,
        )
        for mid in ids[:20]:
            mg.retract(mid, reason="wrong")
        for mid in ids[20:30]:
            mg.forget(mid, reason="erasure")
        fact = "The staging database password rotates every Monday"
        mg.remember(fact, id="fact", scope="s0", episode="e1", timestamp=T0 + timedelta(hours=1))
        again = mg.remember(fact, scope="s0", episode="e2", timestamp=T0 + timedelta(hours=2))
        assert again.id == "fact"  # an edge to e2, not a memory of it
    asked = [
        {(f"s{s}", f"e{e}"): T0 + timedelta(minutes=m) for s in range(4) for e in range(7)}
        for m in (-1, 3, 8, 200)
    ]  # before any, amid the ties, after all; scope s3 and episode e6 hold none
    store = LocalStore(path)
    try:
        assert store._mirror is None  # type: ignore[attr-defined]
        from_sqlite = [{k: m.id for k, m in store.episode_tails(w).items()} for w in asked]
        assert store._mirror is None  # type: ignore[attr-defined]  # asking did not build it
        store.search(None, "turn", 0, 5, MemoryFilter(scopes=("s0",)))  # a read builds it
        assert store._mirror is not None  # type: ignore[attr-defined]
        from_mirror = [{k: m.id for k, m in store.episode_tails(w).items()} for w in asked]
    finally:
        store.close()
    assert from_sqlite == from_mirror
    assert [len(found) for found in from_mirror[:1]] == [0]
    assert all(len(found) == 18 for found in from_mirror[2:])
    assert from_mirror[1] != from_mirror[2]
    from_mirror = from_mirror[-1]
    assert from_mirror[("s0", "e2")] != "fact"
