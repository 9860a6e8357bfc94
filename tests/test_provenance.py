"""trace and impact: exact lineage and blast radius, as pydantic data and as a DiGraph."""

from __future__ import annotations

import pytest
from poisoning import EVIL_SOURCE, World, build

from amem_graph import MemoryGraph, NotFoundError
from amem_graph.provenance.trace import GraphNode, node_keys


@pytest.fixture
def world(mg: MemoryGraph) -> World:
    return build(mg)


def test_impact_lists_exactly_the_affected_ids(mg: MemoryGraph, world: World) -> None:
    impact = mg.impact(world.poison)
    assert impact.roots == [world.poison]
    assert set(impact.memory_ids) == world.affected
    assert set(impact.derived_ids) == {world.derived1, world.derived2}
    assert set(impact.written_ids) == {world.written1, world.written2}
    assert set(impact.episode_ids) == {world.reader1, world.reader2}
    assert set(impact.outcome_ids) == {f"outcome-{world.reader1}", f"outcome-{world.reader2}"}
    assert impact.failed_outcome_ids == impact.outcome_ids
    assert impact.counts == {
        "memories": 4,
        "derived": 2,
        "written": 2,
        "episodes": 2,
        "outcomes": 2,
        "failed_outcomes": 2,
    }


def test_impact_skips_what_a_reader_wrote_before_reading(mg: MemoryGraph, world: World) -> None:
    impact = mg.impact(world.poison)
    assert world.before_read not in impact.memory_ids
    assert world.clean_written not in impact.memory_ids
    assert world.clean_reader not in impact.episode_ids


def test_impact_of_a_leaf_follows_only_its_own_readers(mg: MemoryGraph, world: World) -> None:
    impact = mg.impact(world.derived2)
    assert impact.derived_ids == []
    assert impact.episode_ids == [world.reader2]
    assert impact.memory_ids == [world.written2]


def test_impact_graph_is_typed(mg: MemoryGraph, world: World) -> None:
    graph = mg.impact(world.poison).to_networkx()
    assert graph.is_directed()
    assert graph.nodes[world.poison]["label"] == "Memory"
    assert graph.nodes[world.reader1]["label"] == "Episode"
    assert graph.nodes[f"outcome-{world.reader1}"]["success"] is False
    assert graph.edges[world.derived1, world.poison]["type"] == "DERIVED_FROM"
    assert graph.edges[world.reader1, world.poison]["type"] == "READ"
    assert graph.edges[world.reader1, world.poison]["rank"] == 1
    assert graph.edges[world.written1, world.reader1]["type"] == "GENERATED_IN"
    assert not graph.has_node(world.clean)


def test_trace_walks_upstream_lineage(mg: MemoryGraph, world: World) -> None:
    trace = mg.trace(world.derived2)
    assert trace.upstream.ancestor_ids == sorted([world.derived1, world.poison])
    assert trace.upstream.agent_ids == ["bob", "carol", "mallory"]
    assert trace.upstream.episode_ids == [world.poison_episode]
    assert trace.upstream.task_ids == ["ops-rotation"]
    assert trace.upstream.sources == [EVIL_SOURCE]
    assert trace.downstream == mg.impact(world.derived2)


def test_trace_graph_joins_upstream_and_downstream(mg: MemoryGraph, world: World) -> None:
    graph = mg.trace(world.derived1).to_networkx()
    assert graph.edges[world.derived1, world.poison]["type"] == "DERIVED_FROM"
    assert graph.edges[world.poison, "mallory"]["type"] == "ATTRIBUTED_TO"
    assert graph.nodes["mallory"]["label"] == "Agent"
    assert graph.edges[world.poison_episode, "ops-rotation"]["type"] == "PART_OF"
    assert graph.edges[world.derived2, world.derived1]["type"] == "DERIVED_FROM"
    assert graph.edges[world.reader2, world.derived2]["type"] == "READ"
    sources = [n for n, label in graph.nodes(data="label") if label == "Source"]
    assert [graph.nodes[s]["uri"] for s in sources] == [EVIL_SOURCE]


def test_repeated_reads_fold_into_one_edge(mg: MemoryGraph) -> None:
    mg.remember("orbit lilac fjord", id="m")
    with mg.episode(id="ep") as ep:
        ep.recall("orbit lilac fjord", k=1)
        ep.recall("orbit lilac fjord", k=1)
    impact = mg.impact("m")
    reads = [e for e in impact.edges if e.type == "READ"]
    assert len(reads) == 1
    assert reads[0].props["reads"] == 2


def test_unknown_memory_names_the_id(mg: MemoryGraph) -> None:
    with pytest.raises(NotFoundError, match="ghost"):
        mg.impact("ghost")
    with pytest.raises(NotFoundError, match="ghost"):
        mg.trace("ghost")


def test_colliding_ids_get_label_prefixed_keys() -> None:
    nodes = [GraphNode(label="Agent", id="x"), GraphNode(label="Memory", id="x")]
    assert node_keys(nodes) == {("Memory", "x"): "x", ("Agent", "x"): "Agent:x"}


def test_memory_and_agent_with_one_id_stay_distinct(mg: MemoryGraph) -> None:
    mg.remember("granite pelican", id="same", agent="same")
    graph = mg.trace("same").to_networkx()
    assert graph.nodes["same"]["label"] == "Memory"
    assert graph.nodes["Agent:same"]["label"] == "Agent"
    assert graph.edges["same", "Agent:same"]["type"] == "ATTRIBUTED_TO"
