"""bench/fleet.py on a small fleet, on both stores: feedback must beat no feedback, trust must
separate the poisoner from the honest agents, the suspects must name it, and the retraction
it proposes must bring success up to the oracle's."""

from __future__ import annotations

from bench_scripts import load

from amem_graph import MemoryGraph

fleet = load("fleet.py")


def test_world_is_seeded_and_the_poisoner_writes_one_wrong_memory_per_task() -> None:
    a = fleet.build_world("a", 3, 6, 12, 2)
    b = fleet.build_world("b", 3, 6, 12, 2)
    assert [i["content"] for i in a.items] == [i["content"] for i in b.items]
    assert len(a.tasks) == 12 and len(a.honest) == 5
    wrong = [i for i in a.items if i["id"] in a.poisoned]
    assert len(wrong) == 12 and {i["agent"] for i in wrong} == {a.poisoner}
    right = {i["agent"] for i in a.items if i["id"].endswith("-right")}
    assert a.poisoner not in right


def test_a_small_fleet_learns_catches_the_poisoner_and_recovers(mg: MemoryGraph) -> None:
    result = fleet.simulate(
        lambda: mg, seed=1, episodes=150, after=40, agents=6, tasks=15, notes=2, size=30
    )
    figures = result.report()
    assert figures["off_tasks_whose_top_hit_changed"] == 0, "without outcomes recall is static"
    assert figures["poisoned_top_off_overall"] > 0.2, "the poison starts on top for some tasks"
    assert figures["poisoned_top_on_last_window"] == 0.0
    assert figures["success_on_overall"] > figures["success_off_overall"] + 0.1
    assert figures["episode_on_reaches_90pct_of_oracle"] is not None
    assert figures["trust_poisoner_final"] <= 0.3 <= 0.6 <= figures["trust_lowest_honest_final"]
    assert figures["failures_until_poisoned_memory_tops_suspects"] <= 3
    assert figures["retracted_agent_is_poisoner"] and figures["retracted_memories"] > 15
    # within the oracle's reach: the draws that fail the oracle fail everyone, and a right
    # memory charged by them can lose its top place to a linked sibling task's right memory
    after, oracle = figures["success_after_retraction"], figures["success_oracle_after_retraction"]
    assert oracle - 0.1 <= after <= oracle and after > figures["success_off_overall"]
