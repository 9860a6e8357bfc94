"""failure_suspects on both stores: what failed outcomes charged, ranked by suspicion."""

from __future__ import annotations

import pytest

from amem_graph import MemoryGraph, ValidationError


def seed(mg: MemoryGraph) -> None:
    mg.remember("amber falcon: purge the replica before the backup", id="bad", agent="mallory")
    mg.remember("amber falcon: snapshot the replica, then back it up", id="good", agent="alice")
    mg.remember("cobalt heron: restart the scheduler after the upgrade", id="bad2", agent="mallory")
    mg.remember("cobalt heron: drain the scheduler, then upgrade it", id="good2", agent="alice")
    mg.remember("jade otter: rotate logs weekly", id="noisy", agent="bob", scope="other")


def episode(mg: MemoryGraph, tag: str, query: str, used: str, success: bool, **kw: str) -> None:
    with mg.episode(agent="ops", id=f"ep-{tag}", **kw) as ep:
        assert used in [h.memory.id for h in ep.recall(query, k=3)]
        ep.outcome(success=success, used=[used])


def test_a_memory_failing_again_and_again_tops_and_bystanders_never_appear(
    mg: MemoryGraph,
) -> None:
    seed(mg)
    for i in range(3):
        episode(mg, f"bad-{i}", "amber falcon replica backup", "bad", False)
    for i in range(6):  # a good memory with one unlucky failure among many successes
        episode(mg, f"good2-{i}", "cobalt heron scheduler upgrade", "good2", i != 0)
    found = mg.failure_suspects()
    assert [s.id for s in found] == ["bad", "good2"], "read-but-unused memories are not charged"
    bad = found[0]
    assert (bad.failures, bad.successes, bad.agent) == (3.0, 0.0, "mallory")
    assert bad.failed_episodes == ["ep-bad-0", "ep-bad-1", "ep-bad-2"]
    assert bad.suspicion > 0.6 > 0.2 > found[1].suspicion
    assert bad.content and "purge" in bad.content


def test_failures_spread_over_one_authors_memories_add_up(mg: MemoryGraph) -> None:
    seed(mg)
    episode(mg, "a", "amber falcon replica backup", "bad", False)
    episode(mg, "b", "cobalt heron scheduler upgrade", "bad2", False)
    episode(mg, "c", "cobalt heron scheduler upgrade", "good2", False)  # honest, unlucky
    episode(mg, "d", "amber falcon replica backup", "good", True)
    memories = mg.failure_suspects()
    assert {s.id for s in memories[:2]} == {"bad", "bad2"}, "the author breaks the tie"
    assert memories[2].id == "good2"
    agents = mg.failure_suspects(by="agent")
    assert [(a.id, a.failures, a.successes) for a in agents] == [
        ("mallory", 2.0, 0.0),
        ("alice", 1.0, 1.0),
    ]
    assert agents[0].memory_ids == ["bad", "bad2"] and agents[0].kind == "agent"
    assert agents[0].confidence == pytest.approx(mg.agent("mallory").trust)


def test_scope_status_and_limit(mg: MemoryGraph) -> None:
    seed(mg)
    episode(mg, "a", "amber falcon replica backup", "bad", False)
    episode(mg, "b", "jade otter logs", "noisy", False, scope="other")
    assert {s.id for s in mg.failure_suspects()} == {"bad", "noisy"}
    assert [s.id for s in mg.failure_suspects(scope="other")] == ["noisy"]
    assert len(mg.failure_suspects(limit=1)) == 1
    mg.retract("bad", reason="suspect")
    assert [s.id for s in mg.failure_suspects()] == ["noisy"], "a retracted suspect is done"
    withdrawn = mg.failure_suspects(include=("active", "retracted"))
    assert {s.id for s in withdrawn} == {"bad", "noisy"}
    assert mg.failure_suspects(scope="nowhere") == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"by": "author"}, "by must be"),
        ({"limit": 0}, "limit"),
        ({"include": ("gone",)}, "unknown memory status"),
        ({"scope": "no spaces"}, "scope"),
    ],
)
def test_bad_arguments_are_rejected(
    mg: MemoryGraph, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        mg.failure_suspects(**options)  # type: ignore[arg-type]
