"""Duplicates merge instead of being stored twice; the adjudicator labels contradictions and
supersessions."""

from __future__ import annotations

from amem_graph import MemoryGraph
from amem_graph.core.schema import source_id
from notes.fakes import MakeGraph, note, scripted

FACT = "Deploys to eu-west need the VPN profile ops-eu"


def edges(mg: MemoryGraph, mid: str, etype: str) -> set[str]:
    return {e.dst for e in mg.store.edges([mid], [etype], "out")}


def test_exact_duplicate_merges_with_its_provenance(make_graph: MakeGraph) -> None:
    mg = make_graph()
    first = mg.remember(FACT, agent="alice", source="https://wiki/a", episode="s1")
    report = mg.ingest(
        [
            {
                "content": FACT,
                "agent": "bob",
                "source": "https://wiki/b",
                "episode": "s2",
                "task": "deploy",
            }
        ]
    )
    assert report.merged == {0: first.id} and report.written == [] and report.already_present == []
    merged = report.memories[0]
    assert merged.id == first.id and merged.support == 2
    assert mg.get(first.id).support == 2
    assert mg.store.counts()["Memory"] == 1
    assert edges(mg, first.id, "ATTRIBUTED_TO") == {"alice", "bob"}
    assert edges(mg, first.id, "GENERATED_IN") == {"s1", "s2"}
    assert edges(mg, first.id, "FOR_TASK") == {"deploy"}
    assert edges(mg, first.id, "FROM_SOURCE") == {
        source_id("https://wiki/a"),
        source_id("https://wiki/b"),
    }
    assert mg.get(first.id).agent == "alice"  # the first author stays the memory's agent


def test_duplicates_inside_one_batch_merge(make_graph: MakeGraph) -> None:
    mg = make_graph()
    report = mg.ingest([{"content": FACT, "agent": "a"}, {"content": FACT, "agent": "b"}])
    assert report.merged == {1: report.written[0]} and len(report.written) == 1
    assert mg.get(report.written[0]).support == 2


def test_what_does_not_merge(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember(FACT, id="x")
    mg.remember(FACT, id="y")  # an id asked for is kept
    mg.remember(FACT, scope="other")  # another scope
    mg.remember(FACT, kind="episodic")
    mg.remember(FACT, kind="episodic")  # a repeated event is a new event
    assert mg.store.counts()["Memory"] == 5


def test_near_duplicates_merge_past_the_threshold(make_graph: MakeGraph) -> None:
    strict = make_graph(near_duplicate=None)
    strict.remember(FACT, scope="a")
    strict.remember(FACT + ".", scope="a")
    assert strict.store.counts()["Memory"] == 2
    loose = make_graph(near_duplicate=0.9)
    kept = loose.remember(FACT, scope="b")
    again = loose.remember(FACT + ".", scope="b")
    assert again.id == kept.id and again.support == 2


def test_merging_off_stores_every_write(make_graph: MakeGraph) -> None:
    mg = make_graph(merge_duplicates=False)
    mg.remember(FACT)
    mg.remember(FACT)
    assert mg.store.counts()["Memory"] == 2


def test_quickstart_is_idempotent(make_graph: MakeGraph) -> None:
    mg = make_graph()

    def quickstart() -> tuple[list[str], list[str], dict[int, str], str]:
        a = mg.ingest(
            [
                {
                    "content": "Deploys to eu-west need the VPN profile 'ops-eu'",
                    "agent": "researcher",
                    "task": "deploy-eu",
                    "tags": ["deploy"],
                    "source": "https://wiki.example.org/deploy",
                    "id": "vpn-note",
                }
            ]
        )
        b = mg.ingest(
            [
                {
                    "content": "Use ops-eu VPN before running deploy.sh",
                    "agent": "researcher",
                    "derived_from": ["vpn-note"],
                    "kind": "procedural",
                }
            ]
        )
        with mg.episode(agent="deployer", task="deploy-eu") as ep:
            ep.recall("how do I deploy to eu-west?", k=5)
            c = ep.remember("Deployed build 812 to eu-west via ops-eu")
            ep.outcome(success=True)
        return a.already_present, b.written, b.merged, c.id

    present, written, merged, logged = quickstart()
    assert present == [] and len(written) == 1 and merged == {}
    present, again, merged, logged_again = quickstart()
    assert present == ["vpn-note"] and again == [] and merged == {0: written[0]}
    assert logged_again == logged and mg.get(logged).support == 2
    assert mg.store.counts()["Memory"] == 3
    assert len(edges(mg, logged, "GENERATED_IN")) == 2  # both episodes wrote it


# -- the adjudicator (a model only) -------------------------------------------------------------

OLD = "The office opens at 9 am on weekdays"
NEW = "The office opens at 8 am on weekdays"


def adjudicated(make_graph: MakeGraph, verdicts: list[dict[str, str]]) -> MemoryGraph:
    model = scripted(
        note(["office"]),
        note(["office", "hours"]),
        {"links": []},
        {"verdicts": verdicts},
    )
    mg = make_graph(llm=model, adjudicate_threshold=0.3, near_duplicate=None)
    mg.remember(OLD, id="old")
    mg.remember(NEW, id="new")
    return mg


def test_adjudicator_contradiction_writes_an_edge(make_graph: MakeGraph) -> None:
    mg = adjudicated(make_graph, [{"id": "old", "relation": "contradicts", "reason": "8 vs 9"}])
    [e] = mg.store.edges(["new"], ["CONTRADICTS"], "out")
    assert (e.dst, e.props["reason"], e.props["by"]) == ("old", "8 vs 9", "llm")
    assert mg.get("old").status == "active"


def test_adjudicator_supersession_and_its_undo(make_graph: MakeGraph) -> None:
    mg = adjudicated(make_graph, [{"id": "old", "relation": "supersedes", "reason": "new hours"}])
    assert mg.get("old").status == "superseded"
    assert mg.current("old").id == "new"
    [event] = mg.audit(kind="supersede")
    assert set(event.memory_ids) == {"old", "new"} and event.reason == "new hours"
    report = mg.retract("new", reason="wrong")
    assert report.unsuperseded == ["old"] and mg.get("old").status == "active"


def test_adjudicator_ids_are_checked(make_graph: MakeGraph) -> None:
    mg = adjudicated(
        make_graph,
        [
            {"id": "0", "relation": "supersedes", "reason": "rank"},
            {"id": "elsewhere", "relation": "contradicts", "reason": "made up"},
            {"id": "old", "relation": "unrelated", "reason": "fine"},
        ],
    )
    assert mg.get("old").status == "active"
    assert mg.store.counts().get("CONTRADICTS", 0) == 0
    assert mg.stats()["llm"]["adjudicate"]["dropped_ids"] == 2


def test_no_adjudication_offline(make_graph: MakeGraph) -> None:
    mg = make_graph(adjudicate_threshold=0.3, near_duplicate=None)
    mg.remember(OLD, id="old")
    mg.remember(NEW, id="new")
    assert mg.get("old").status == "active" and mg.stats()["llm"] == {}
