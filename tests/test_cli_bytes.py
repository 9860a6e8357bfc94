"""Bytes the CLI cannot read as text are a clear usage error naming the line, never a crash:
a raw ``\\xff`` in an ingest or import file, a 100k-deep JSON value, undecodable arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from amem_graph import MemoryGraph

ROOT = Path(__file__).resolve().parents[1]
DEEP = "[" * 100_000 + "]" * 100_000


def _amem(tmp_path: Path, *args: str | bytes, stdin: bytes | None = None) -> tuple[int, str]:
    """The real ``amem`` in a subprocess, so argv bytes reach it as the shell passes them."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", "from amem_graph.cli.main import cli; cli()",
         "--store", str(tmp_path / "s.db"), "--embedder", "hashing", *args],
        input=stdin, capture_output=True, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    return done.returncode, done.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"content": "fine"}\n{"content": "caf\xff"}\n', "f.jsonl:2: not valid UTF-8"),
        (b'{"content": "fine"}\n{"content": "x", "tags": ' + DEEP.encode() + b"}\n",
         "f.jsonl:2: invalid JSON: values nested too deeply"),
    ],
    ids=["raw-byte", "deep"],
)  # fmt: skip
def test_ingest_names_the_bad_line_and_stores_nothing(
    tmp_path: Path, body: bytes, words: str
) -> None:
    (tmp_path / "f.jsonl").write_bytes(body)
    code, err = _amem(tmp_path, "ingest", "f.jsonl")
    assert code == 2 and words in err and "unexpected" not in err, err
    with MemoryGraph.open(tmp_path / "s.db", embedder="hashing") as mg:
        assert mg.stats()["counts"].get("Memory", 0) == 0


def test_ingest_from_stdin_with_a_raw_byte(tmp_path: Path) -> None:
    code, err = _amem(tmp_path, "ingest", "-", stdin=b"\xff\xfe\n")
    assert code == 2 and "<stdin>:1: not valid UTF-8" in err, err


def test_import_of_a_raw_byte_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_bytes(b'{"record": "header"}\xff\n')
    code, err = _amem(tmp_path, "import", "g.jsonl")
    assert code == 2 and "line 1: not valid UTF-8" in err, err


def test_add_with_undecodable_bytes_is_a_usage_error(tmp_path: Path) -> None:
    code, err = _amem(tmp_path, "add", b"\xff\xfe")
    assert code == 2 and "not valid Unicode" in err and "unexpected" not in err, err
