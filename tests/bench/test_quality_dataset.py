"""Checks for the convbench retrieval benchmark under bench/quality/.

The benchmark modules are plain scripts (not a package), so they are loaded by path
under unique module names to avoid clashing with anything else on sys.path.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_scripts import load

QUALITY = Path(__file__).resolve().parents[2] / "bench" / "quality"
DATA = QUALITY / "data" / "convbench.json"


dataset = load("quality/dataset.py")
metrics = load("quality/metrics.py")
baselines = load("quality/baselines.py")


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    with open(DATA, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def test_generated_file_is_up_to_date(tmp_path: Path) -> None:
    out = tmp_path / "convbench.json"
    subprocess.run(
        [sys.executable, str(QUALITY / "generate.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == DATA.read_bytes(), "run: python bench/quality/generate.py"


@pytest.mark.parametrize("variant", ["hard", "long"])
def test_variant_files_are_up_to_date(tmp_path: Path, variant: str) -> None:
    out = tmp_path / f"convbench-{variant}.json"
    subprocess.run(
        [sys.executable, str(QUALITY / "generate.py"), f"--{variant}", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    committed = DATA.with_name(f"convbench-{variant}.json")
    assert out.read_bytes() == committed.read_bytes(), f"run: generate.py --{variant}"
    ds = dataset.load(committed)  # same evidence as convbench, renumbered: still valid
    assert ds.name == f"convbench-{variant}"
    assert ds.stats()["questions"] == dataset.load(DATA).stats()["questions"]


def test_dataset_loads_and_has_expected_shape() -> None:
    ds = dataset.load(DATA)
    stats = ds.stats()
    assert stats["conversations"] == 10
    assert 1500 <= stats["turns"] <= 2500
    assert 300 <= stats["questions"] <= 500
    for cat in dataset.CATEGORIES:
        assert stats[cat] >= 30, cat
    for conv in ds.conversations:
        assert 6 <= len(conv.sessions) <= 10
        assert len(conv.speakers) == 2
        for session in conv.sessions:
            assert 12 <= len(session.turns) <= 25
        assert 30 <= len(ds.questions_for(conv.id)) <= 50
    # Every evidence turn belongs to the question's conversation (validated on load) and
    # multi-evidence questions really span several turns.
    assert any(len(q.evidence) > 1 for q in ds.questions if q.category == "multi-hop")


def test_validation_catches_bad_evidence_id(raw: dict[str, Any]) -> None:
    bad = copy.deepcopy(raw)
    qid = bad["questions"][0]["id"]
    bad["questions"][0]["evidence"] = ["c1_s99_t1"]
    expected = rf"question {qid}: evidence id 'c1_s99_t1' does not exist"
    with pytest.raises(ValueError, match=expected):
        dataset.parse(bad)


def test_validation_catches_cross_conversation_evidence(raw: dict[str, Any]) -> None:
    bad = copy.deepcopy(raw)
    q = next(q for q in bad["questions"] if q["conversation_id"] == "c1")
    q["evidence"] = [bad["conversations"][1]["sessions"][0]["turns"][0]["id"]]
    with pytest.raises(ValueError, match="belongs to conversation"):
        dataset.parse(bad)


def test_validation_catches_duplicate_id_and_bad_category(raw: dict[str, Any]) -> None:
    dup = copy.deepcopy(raw)
    turns = dup["conversations"][0]["sessions"][0]["turns"]
    turns[1]["id"] = turns[0]["id"]
    with pytest.raises(ValueError, match="duplicate id"):
        dataset.parse(dup)

    cat = copy.deepcopy(raw)
    cat["questions"][3]["category"] = "adversarial"
    with pytest.raises(ValueError, match="invalid category 'adversarial'"):
        dataset.parse(cat)


def test_metrics_on_hand_made_example() -> None:
    q = dataset.Question
    questions = [
        q("q1", "c1", "?", "!", ("a", "b"), "multi-hop"),
        q("q2", "c1", "?", "!", ("c",), "single-hop"),
        q("q3", "c1", "?", "!", ("z",), "single-hop"),
    ]
    rankings = {
        "q1": ["x", "b", "y", "a"],  # first evidence at rank 2; both found by rank 4
        "q2": ["c", "c", "x"],  # duplicates are ignored
        "q3": ["x", "y"],  # never found
    }
    assert metrics.recall_at_k(rankings["q1"], ["a", "b"], 2) == 0.5
    assert metrics.recall_at_k(rankings["q1"], ["a", "b"], 4) == 1.0
    assert metrics.hit_at_k(rankings["q1"], ["a", "b"], 1) == 0.0
    assert metrics.hit_at_k(rankings["q1"], ["a", "b"], 2) == 1.0
    assert metrics.reciprocal_rank(rankings["q1"], ["a", "b"]) == 0.5
    assert metrics.reciprocal_rank(rankings["q3"], ["z"]) == 0.0

    report = metrics.evaluate(questions, rankings, ks=(1, 2, 4))
    single, multi, overall = report["single-hop"], report["multi-hop"], report["overall"]
    assert single.n == 2 and multi.n == 1 and overall.n == 3
    assert single.recall == {1: 0.5, 2: 0.5, 4: 0.5}
    assert single.mrr == 0.5
    assert multi.recall == {1: 0.0, 2: 0.5, 4: 1.0}
    assert multi.hit == {1: 0.0, 2: 1.0, 4: 1.0}
    assert overall.recall[2] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert overall.hit[1] == pytest.approx(1 / 3)
    assert overall.mrr == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert "multi-hop" in metrics.format_report(report, (1, 2, 4))


def test_metrics_refuse_missing_ranking() -> None:
    question = dataset.Question("q1", "c1", "?", "!", ("a",), "temporal")
    with pytest.raises(ValueError, match="no ranking for question 'q1'"):
        metrics.evaluate([question], {})


def test_bm25_ranks_lexical_match_first() -> None:
    docs = [baselines.tokenize(t) for t in ["the cat sat", "a dog barked at the cat", "dog dog"]]
    index = baselines.BM25(docs)
    scores = index.scores(baselines.tokenize("Which dog barked?"))
    assert scores.index(max(scores)) == 1
    assert baselines.tokenize("What's Maya's dog?") == ["maya", "dog"]


def test_bm25_baseline_is_neither_trivial_nor_hopeless() -> None:
    ds = dataset.load(DATA)
    report = metrics.evaluate(ds.questions, baselines.bm25_rankings(ds), (10,))
    assert 0.35 <= report["overall"].recall[10] <= 0.8
