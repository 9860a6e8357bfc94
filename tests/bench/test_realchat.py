"""Checks for realchat, the dev set of real chats with questions written for them (bench/quality/).

Its text must be exactly the Chit-Chat dataset's messages as ``realchat.py`` lays them out
(annotation adds tags and questions, never edits a message), the committed JSON exactly what
the converter makes of the sources, and every question kind present in every conversation,
with evidence that exists, belongs to its conversation and is listed in chat order.
"""

from __future__ import annotations

from pathlib import Path

from bench_scripts import load

QUALITY = Path(__file__).resolve().parents[2] / "bench" / "quality"
SRC = QUALITY / "data" / "realchat"
DATA = QUALITY / "data" / "realchat.json"

dataset = load("quality/dataset.py")
talkbench = load("quality/talkbench.py")
realchat = load("quality/realchat.py")


def test_sources_are_the_real_chats_with_annotations_only() -> None:
    data = realchat._chitchat()
    files = talkbench.source_files(SRC)
    assert [p.stem for p in files] == [f"r{i}" for i in range(1, len(realchat.PAIRS) + 1)]
    for number, (path, first) in enumerate(zip(files, realchat.PAIRS, strict=True), start=1):
        committed = path.read_text(encoding="utf-8")
        assert realchat.unannotated(committed) == realchat.source(data, number, first), path.name


def test_unannotated_strips_tags_and_questions_only() -> None:
    text = "# conversation r1: A, B\n## session x\nA: hi {t1}\nB: {ok} ok\n## questions\nq\n"
    assert (
        realchat.unannotated(text) == "# conversation r1: A, B\n## session x\nA: hi\nB: {ok} ok\n"
    )


def test_committed_json_matches_sources() -> None:
    rebuilt = talkbench.render(talkbench.build(SRC))
    assert rebuilt == DATA.read_text(encoding="utf-8"), (
        "run: python bench/quality/talkbench.py --src bench/quality/data/realchat"
    )


def test_every_kind_in_every_conversation_and_evidence_in_order() -> None:
    ds = dataset.load(DATA)
    assert ds.name == "realchat"
    assert sum(1 for _ in ds.turns()) >= 5000
    order = {t.id: i for i, t in enumerate(ds.turns())}
    index = ds.turn_index()
    for conv in ds.conversations:
        kinds = {q.category for q in ds.questions_for(conv.id)}
        assert kinds == set(dataset.CATEGORIES), conv.id
    for q in ds.questions:
        assert 1 <= len(q.evidence) <= 4, q.id
        assert all(index[ev].conversation_id == q.conversation_id for ev in q.evidence), q.id
        positions = [order[ev] for ev in q.evidence]
        assert positions == sorted(positions), q.id
