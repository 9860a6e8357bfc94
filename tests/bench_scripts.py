"""Scripts under ``bench/`` loaded as modules for their tests (``bench/`` is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load(relative: str) -> ModuleType:
    """``bench/<relative>`` (e.g. ``"quality/run.py"``) as a module, loaded once per session and
    registered in ``sys.modules`` (dataclasses look their module up there)."""
    name = "bench_" + relative.removesuffix(".py").replace("/", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
