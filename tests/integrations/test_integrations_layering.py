"""The doors stay doors: integrations reach the library only through the facade layers, and
a missing framework says which extra to install."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = ("amem_graph", "amem_graph.memory", "amem_graph.core", "amem_graph.embeddings",
           "amem_graph.integrations")  # fmt: skip
#: what the integrations import of each framework, hidden to simulate a missing extra
SUBMODULES = ("store", "store.base", "prebuilt", "agents", "agents.middleware", "runtime")


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n == "amem_graph" or n.startswith("amem_graph.")}


def test_integrations_import_only_the_facade_layers() -> None:
    files = sorted((ROOT / "amem_graph" / "integrations").glob("*.py"))
    assert len(files) >= 6
    for path in files:
        for name in imported(path):
            assert any(name == a or name.startswith(a + ".") for a in ALLOWED[1:]) or (
                name == "amem_graph"
            ), f"{path.name} imports {name}"


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("amem_graph.integrations.langgraph_store", "langgraph", "langgraph"),
        ("amem_graph.integrations.middleware", "langchain", "langchain"),
        ("amem_graph.integrations.tools", "langgraph", "langchain"),
    ],
)
def test_a_missing_extra_names_its_pip_command(module: str, blocked: str, extra: str) -> None:
    hidden = [blocked, *(f"{blocked}.{sub}" for sub in SUBMODULES)]
    code = (
        f"import sys, importlib\nsys.modules.update(dict.fromkeys({hidden!r}))\n"
        f"try:\n    importlib.import_module({module!r})\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert f'pip install "amem-graph[{extra}]"' in out, out
