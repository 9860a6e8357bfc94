"""Checks for talkbench, the hand-written retrieval benchmark under bench/quality/.

The committed JSON must be exactly what the converter makes of the text sources, load
with the shared loader, and keep every category well populated. The converter must
refuse malformed sources loudly, naming file and line, because a silently misplaced
tag would point a question at the wrong turn. Bench modules are plain scripts, so
they are loaded by path under unique names (as in test_quality_dataset.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from bench_scripts import load

QUALITY = Path(__file__).resolve().parents[2] / "bench" / "quality"
SRC = QUALITY / "data" / "talkbench"
DATA = QUALITY / "data" / "talkbench.json"


dataset = load("quality/dataset.py")
talkbench = load("quality/talkbench.py")

# Per conversation; the targets are about 40/20/22/18 % of 30-36 questions.
MIN_PER_CONVERSATION = {"single-hop": 8, "multi-hop": 4, "temporal": 4, "open-domain": 3}
EVIDENCE_SIZE = {
    "single-hop": (1, 1),
    "multi-hop": (2, 3),
    "temporal": (1, 2),
    "open-domain": (1, 2),
}


def test_committed_json_matches_sources() -> None:
    rebuilt = talkbench.render(talkbench.build(SRC))
    assert rebuilt == DATA.read_text(encoding="utf-8"), "run: python bench/quality/talkbench.py"


def test_check_flag_detects_stale_json(tmp_path: Path) -> None:
    script = str(QUALITY / "talkbench.py")
    ok = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    stale = tmp_path / "talkbench.json"
    stale.write_text(DATA.read_text(encoding="utf-8").replace('"version": 1', '"version": 2'))
    bad = subprocess.run(
        [sys.executable, script, "--check", "--out", str(stale)], capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert "out of date" in bad.stderr


def test_dataset_loads_and_has_expected_shape() -> None:
    ds = dataset.load(DATA)
    files = talkbench.source_files(SRC)
    assert [c.id for c in ds.conversations] == [p.stem for p in files]
    for conv in ds.conversations:
        assert len(conv.speakers) == 2
        assert 6 <= len(conv.sessions) <= 8, conv.id
        for session in conv.sessions:
            assert 12 <= len(session.turns) <= 26, session.id
        n_turns = sum(1 for _ in conv.turns())
        assert 90 <= n_turns <= 200, conv.id
        questions = ds.questions_for(conv.id)
        assert 28 <= len(questions) <= 40, conv.id
        # Questions are about both people, not just one of them.
        for speaker in conv.speakers:
            assert any(speaker in q.question for q in questions), (conv.id, speaker)


def test_every_category_is_well_represented() -> None:
    ds = dataset.load(DATA)
    for conv in ds.conversations:
        counts = {c: 0 for c in dataset.CATEGORIES}
        for q in ds.questions_for(conv.id):
            counts[q.category] += 1
        for category, minimum in MIN_PER_CONVERSATION.items():
            assert counts[category] >= minimum, (conv.id, category, counts[category])
    totals = ds.stats()
    for category, minimum in MIN_PER_CONVERSATION.items():
        assert totals[category] >= minimum * len(ds.conversations), category


def test_evidence_exists_in_chat_order_with_sensible_size() -> None:
    ds = dataset.load(DATA)
    order = {t.id: i for i, t in enumerate(ds.turns())}
    index = ds.turn_index()
    for q in ds.questions:
        low, high = EVIDENCE_SIZE[q.category]
        assert low <= len(q.evidence) <= high, (q.id, q.category, q.evidence)
        for ev in q.evidence:
            assert ev in index, (q.id, ev)
            assert index[ev].conversation_id == q.conversation_id, (q.id, ev)
        positions = [order[ev] for ev in q.evidence]
        assert positions == sorted(positions), q.id


GOOD = """\
# conversation h1: Ana, Ben
## session 2024-01-01T10:00:00+00:00
Ana: hi, we finally got a cat {cat}
Ben: nice
## session 2024-01-08T10:00:00+01:00
Ben: I moved to Oslo yesterday {oslo}
## questions
single-hop | What pet does Ana have? | A cat | cat
multi-hop | Where did Ben move, and what pet does Ana have? | Oslo; a cat | cat, oslo
"""


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_minimal_source_gets_convbench_ids(tmp_path: Path) -> None:
    _write(tmp_path, "h10.txt", GOOD.replace("h1:", "h10:"))
    _write(tmp_path, "h2.txt", GOOD.replace("h1:", "h2:"))
    data = talkbench.build(tmp_path)
    assert [c["id"] for c in data["conversations"]] == ["h2", "h10"]  # numeric, not string
    conv = data["conversations"][0]
    assert [s["id"] for s in conv["sessions"]] == ["h2_s1", "h2_s2"]
    assert conv["sessions"][0]["turns"][0] == {
        "id": "h2_s1_t1",
        "speaker": "Ana",
        "text": "hi, we finally got a cat",
    }
    first, second = data["questions"][:2]
    assert first["id"] == "h2_q1" and first["evidence"] == ["h2_s1_t1"]
    assert second["evidence"] == ["h2_s1_t1", "h2_s2_t1"]
    assert data["questions"][2]["id"] == "h10_q1"
    ds = dataset.parse(data)
    assert ds.stats()["questions"] == 4


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("Ben: nice", "Bob: nice", "h1.txt:4: unknown speaker 'Bob'"),
        ("Ben: nice", "Ben: nice {spare}", "h1.txt:4: unused tag 'spare'"),
        ("Ben: nice", "Ben: nice {cat}", "h1.txt:4: duplicate tag 'cat'"),
        ("Ben: nice", "Ben: nice {bad-tag}", "h1.txt:4: malformed tag"),
        ("Ben: nice", "Ben:   ", "h1.txt:4: empty turn text"),
        ("| A cat | cat\n", "| A cat | dog\n", "h1.txt:8: unknown tag 'dog'"),
        ("cat, oslo", "oslo, cat", "h1.txt:9: tags are not in chat order"),
        ("single-hop |", "adversarial |", "h1.txt:8: bad category 'adversarial'"),
        ("| A cat | cat\n", "| A cat\n", "h1.txt:8: expected 'category | question | answer"),
        ("2024-01-08T10:00:00+01:00", "2024-01-08T10:00:00", "h1.txt:5: datetime"),
        ("2024-01-08T10:00:00+01:00", "2023-12-31T10:00:00+00:00", "h1.txt:5: session datetime"),
        ("2024-01-08T10:00:00+01:00", "next tuesday", "h1.txt:5: invalid ISO 8601"),
        ("# conversation h1:", "# conversation h3:", "h1.txt:1: conversation id 'h3'"),
    ],
)
def test_converter_rejects_malformed_source(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in GOOD
    path = _write(tmp_path, "h1.txt", GOOD.replace(old, new, 1))
    with pytest.raises(talkbench.SourceError, match="^" + re.escape(message)):
        talkbench.parse_file(path)


def test_timezone_and_order_messages_are_specific(tmp_path: Path) -> None:
    naive = _write(tmp_path / "a", "h1.txt", GOOD.replace("+01:00", ""))
    with pytest.raises(talkbench.SourceError, match="has no timezone"):
        talkbench.parse_file(naive)
    same_time = GOOD.replace("2024-01-08T10:00:00+01:00", "2024-01-01T10:00:00+00:00")
    same = _write(tmp_path / "b", "h1.txt", same_time)
    with pytest.raises(talkbench.SourceError, match="not after the previous session"):
        talkbench.parse_file(same)


def test_cli_reports_errors_without_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    _write(src, "h1.txt", GOOD.replace("Ben: nice", "Bob: nice"))
    out = tmp_path / "out.json"
    assert talkbench.main(["--src", str(src), "--out", str(out)]) == 2
    assert "h1.txt:4: unknown speaker 'Bob'" in capsys.readouterr().err
    assert not out.exists()
    assert talkbench.main(["--src", str(tmp_path / "empty"), "--out", str(out)]) == 2
