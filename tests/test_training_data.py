"""Training rows: one per recall in an episode, with outcome label and retraction flag."""

from __future__ import annotations

import json
from pathlib import Path

from amem_graph import MemoryGraph
from amem_graph.provenance.training_data import write_jsonl


def seed(mg: MemoryGraph) -> None:
    mg.remember("harbor crane schedule", id="crane")
    mg.remember("harbor tide tables", id="tide")
    mg.remember("orchard apple harvest", id="apple")


def test_one_row_per_recall_with_ranks_and_scores(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(agent="ann", task="port", id="ep1") as ep:
        first = ep.recall("harbor crane", k=2)
        second = ep.recall("apple harvest", k=1)
        ep.outcome(success=True, score=0.8)
    rows = list(mg.training_data())
    assert [r.query for r in rows] == ["harbor crane", "apple harvest"]
    assert rows[0].recall_id != rows[1].recall_id
    for row, hits in zip(rows, (first, second), strict=True):
        assert [(r.memory_id, r.rank) for r in row.retrieved] == [
            (h.memory.id, h.rank) for h in hits
        ]
        assert [r.score for r in row.retrieved] == [h.score for h in hits]
        assert (row.episode_id, row.agent, row.task) == ("ep1", "ann", "port")
        assert (row.outcome, row.outcome_score) == ("success", 0.8)
        assert not row.retracted_in_play


def test_labels_follow_outcomes(mg: MemoryGraph) -> None:
    seed(mg)
    for eid, success in (("ep-ok", True), ("ep-bad", False), ("ep-open", None)):
        with mg.episode(id=eid) as ep:
            ep.recall("harbor", k=1)
            if success is not None:
                ep.outcome(success=success)
    labels = {r.episode_id: r.outcome for r in mg.training_data()}
    assert labels == {"ep-ok": "success", "ep-bad": "failure", "ep-open": None}


def test_flags_memories_retracted_since(mg: MemoryGraph) -> None:
    seed(mg)
    with mg.episode(id="ep1") as ep:
        hits = ep.recall("harbor crane schedule", k=2)
    assert hits[0].memory.id == "crane"
    report = mg.retract("crane", reason="wrong schedule")
    (row,) = mg.training_data()
    assert row.retracted_in_play and row.retracted_ids == ["crane"]
    assert row.retrieved[0].status == "retracted"
    mg.restore(report.id)
    (row,) = mg.training_data()
    assert not row.retracted_in_play and row.retracted_ids == []


def test_recalls_outside_episodes_yield_no_rows(mg: MemoryGraph) -> None:
    seed(mg)
    mg.recall("harbor")
    with mg.episode(id="ep-empty"):
        pass
    assert list(mg.training_data()) == []


def test_filters_by_scope_and_agent(mg: MemoryGraph) -> None:
    mg.remember("harbor crane schedule", scope="team-a")
    mg.remember("harbor crane schedule", scope="team-b")
    for agent, scope in (("ann", "team-a"), ("bo", "team-b")):
        with mg.episode(agent=agent, scope=scope) as ep:
            ep.recall("harbor", k=1)
    assert [r.agent for r in mg.training_data(scope="team-a")] == ["ann"]
    assert [r.scope for r in mg.training_data(agent="bo")] == ["team-b"]
    assert len(list(mg.training_data())) == 2


def test_write_jsonl(mg: MemoryGraph, tmp_path: Path) -> None:
    seed(mg)
    with mg.episode(id="ep1") as ep:
        ep.recall("harbor", k=2)
        ep.recall("apple", k=1)
        ep.outcome(success=False)
    path = tmp_path / "rows.jsonl"
    assert write_jsonl(mg.training_data(), path) == 2
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["query"] for line in lines] == ["harbor", "apple"]
    assert lines[0]["outcome"] == "failure"
    assert {"memory_id", "rank", "score", "status"} == set(lines[0]["retrieved"][0])
    assert lines[0]["at"].endswith("+00:00") or lines[0]["at"].endswith("Z")
