"""``GraphStore.episode_tails`` on both stores: the memory of an episode and scope written
latest at or before a time (whole, with its vector), any status, ties to the greater id, a
merged duplicate's edge not followed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from amem_graph import HashingEmbedder, MemoryGraph, MemoryGraphConfig
from amem_graph.stores.base import GraphStore

T0 = datetime(2026, 4, 1, 12, tzinfo=UTC)


def _vector(store: GraphStore, mid: str) -> np.ndarray:
    return np.asarray(store.get_memories([mid])[mid].embedding, dtype=np.float64)


def _write(mg: MemoryGraph, mid: str, scope: str, episode: str, at: datetime) -> None:
    mg.remember(f"memory {mid} about {episode} in {scope}", id=mid, scope=scope,
                episode=episode, kind="episodic", timestamp=at)  # fmt: skip


def test_the_latest_memory_at_or_before_a_time_per_scope_and_episode(store: GraphStore) -> None:
    mg = MemoryGraph(store, HashingEmbedder(), MemoryGraphConfig(episode_context=0))
    _write(mg, "a1", "a", "e", T0)
    _write(mg, "a2", "a", "e", T0 + timedelta(hours=1))
    _write(mg, "b1", "b", "e", T0 + timedelta(minutes=30))  # same episode id, other scope
    _write(mg, "a-other", "a", "e2", T0 + timedelta(minutes=40))
    # two at one time: the greater id is the tail
    _write(mg, "t1", "a", "tie", T0)
    _write(mg, "t2", "a", "tie", T0)
    mg.retract("a2", reason="wrong")  # any status counts
    tails = store.episode_tails(
        {
            ("a", "e"): T0 + timedelta(hours=2),
            ("b", "e"): T0 + timedelta(hours=2),
            ("a", "e2"): T0 + timedelta(hours=2),
            ("a", "tie"): T0,
            ("a", "missing"): T0,
            ("c", "e"): T0 + timedelta(hours=2),
        }
    )
    assert {key: m.id for key, m in tails.items()} == {
        ("a", "e"): "a2", ("b", "e"): "b1", ("a", "e2"): "a-other", ("a", "tie"): "t2",
    }  # fmt: skip
    for m in tails.values():  # whole, with its vector
        assert m.content == f"memory {m.id} about {m.episode} in {m.scope}"
        assert np.allclose(m.embedding or [], _vector(store, m.id), atol=1e-6)
    # at a time before the later one, at it exactly, and before the first
    earlier = store.episode_tails(
        {("a", "e"): T0 + timedelta(minutes=59), ("b", "e"): T0 + timedelta(minutes=30)}
    )
    assert {key: m.id for key, m in earlier.items()} == {("a", "e"): "a1", ("b", "e"): "b1"}
    assert store.episode_tails({("a", "e"): T0 - timedelta(seconds=1)}) == {}
    assert store.episode_tails({}) == {}


def test_a_merged_duplicate_is_not_the_tail_of_the_episode_it_merged_from(
    store: GraphStore,
) -> None:
    mg = MemoryGraph(store, HashingEmbedder(), MemoryGraphConfig(episode_context=0))
    fact = "The staging database password rotates every Monday"
    _write(mg, "turn", "a", "second", T0)
    mg.remember(fact, id="fact", scope="a", episode="first", timestamp=T0 + timedelta(minutes=1))
    # the same fact again in the second episode merges into "fact" (an edge, not its episode)
    report = mg.remember_many(
        [
            {
                "content": fact,
                "scope": "a",
                "episode": "second",
                "timestamp": T0 + timedelta(minutes=2),
            }
        ]
    )
    assert report[0].id == "fact"
    tails = store.episode_tails({("a", "second"): T0 + timedelta(hours=1)})
    assert tails[("a", "second")].id == "turn"
