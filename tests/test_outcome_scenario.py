"""The two-memory scenario of issue 21, on both stores: two memories answer one question, one
wrong (agent mallory), one right (agent alice), among 40 unrelated notes. Episodes recall k=3,
act on the top hit and report the outcome. The wrong memory must leave the top within three
failures, the right one must never be charged for being read, and trust must separate the
two authors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from amem_graph import MemoryGraph
from amem_graph.embeddings import Embedder, MiniLMEmbedder
from amem_graph.stores.base import GraphStore

QUERY = "how do I rotate the API keys"
WRONG = "To rotate the API keys, delete the old API keys first, then create new ones."
RIGHT = (
    "To rotate the API keys, create the new keys, deploy them next to the old ones, then "
    "revoke the old keys."
)
TEAMS = ("design", "data", "infra", "mobile", "billing")
DAYS = ("Monday", "Wednesday")
TOPICS = ("bug", "feature", "docs", "release")
NOTES = [
    f"The {team} team meets on {day} to review the {topic} backlog."
    for team in TEAMS
    for day in DAYS
    for topic in TOPICS
]
EPISODES = 12


def build(mg: MemoryGraph) -> None:
    mg.remember(WRONG, agent="mallory", id="wrong")
    mg.remember(RIGHT, agent="alice", id="right")
    mg.remember_many(
        [{"content": n, "agent": "bob", "id": f"note-{i}"} for i, n in enumerate(NOTES)]
    )


def play(mg: MemoryGraph, *, declare_used: bool) -> list[str]:
    """Twelve episodes acting on the top hit; the top hit of each, in order."""
    tops = []
    for i in range(EPISODES):
        with mg.episode(agent="ops", task="rotate-keys", id=f"ep-{i}") as ep:
            top = ep.recall(QUERY, k=3)[0].memory.id
            used = {"used": [top]} if declare_used else {}
            ep.outcome(success=top == "right", **used)
        tops.append(top)
    return tops


def check(mg: MemoryGraph, tops: list[str]) -> None:
    assert len(NOTES) == 40
    assert tops[0] == "wrong", "the scenario starts with the wrong memory on top"
    failures = tops.index("right")
    assert 1 <= failures <= 3, tops
    assert set(tops[failures:]) == {"right"}, "once displaced, the wrong memory stays down"
    wrong, right = mg.get("wrong"), mg.get("right")
    assert (wrong.successes, wrong.failures) == (0.0, failures)
    assert right.failures == 0.0, "the right memory was charged for being read"
    assert right.successes == EPISODES - failures
    mallory, alice = mg.agent("mallory"), mg.agent("alice")
    assert mallory.trust <= 0.4 and alice.trust >= 0.8, (mallory, alice)
    assert mg.agent("bob").trust == 0.5, "notes never acted on are neither blamed nor credited"


@pytest.mark.parametrize("declare_used", [True, False], ids=["used", "presumed"])
def test_wrong_memory_leaves_the_top_within_three_failures(
    mg: MemoryGraph, declare_used: bool
) -> None:
    build(mg)
    check(mg, play(mg, declare_used=declare_used))


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return MiniLMEmbedder()


@pytest.fixture
def mg_minilm(store: GraphStore, minilm: Embedder) -> Iterator[MemoryGraph]:
    graph = MemoryGraph(store, minilm)
    yield graph
    graph.close()


@pytest.mark.slow
def test_wrong_memory_leaves_the_top_with_minilm(mg_minilm: MemoryGraph) -> None:
    build(mg_minilm)
    check(mg_minilm, play(mg_minilm, declare_used=True))


def test_explain_shows_how_confidence_moved_each_hit(mg: MemoryGraph) -> None:
    build(mg)
    play(mg, declare_used=True)
    hits = {h.memory.id: h for h in mg.recall(QUERY, k=3, explain=True)}
    right, wrong = hits["right"].explanation, hits["wrong"].explanation
    assert right is not None and wrong is not None
    assert right.confidence is not None and wrong.confidence is not None
    assert wrong.confidence.failures > 0 and wrong.confidence.factor < 1.0
    assert right.confidence.factor > 1.0 and right.signals["confidence"].value > 1.0
    assert wrong.confidence.rank_without == 1, "without confidence it would still be on top"
    assert hits["wrong"].rank > 1
    assert wrong.confidence.unadjusted > right.confidence.unadjusted, "relevance favours it"
    assert wrong.fused < wrong.confidence.unadjusted and right.fused > right.confidence.unadjusted
    untouched = [h for h in hits.values() if h.memory.id.startswith("note-")]
    assert untouched, "a note fills the third place"
    assert all(h.explanation and h.explanation.signals["confidence"].value == 1 for h in untouched)
