"""The README's Python quickstart runs as written (with the real MiniLM model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_quickstart_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    quickstart = next(b for b in blocks if "MemoryGraph.open()" in b)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AMEM_STORE", raising=False)
    exec(compile(quickstart, "README quickstart", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("1 ")  # the first hit's rank, score, id, content
    assert float(out[-1]) > 0.5  # the outcome raised the note's confidence
    assert (tmp_path / ".amem" / "memory.db").exists()
