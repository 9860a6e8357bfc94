"""The architecture holds: imports point down the layers, no cycles, no oversized module.

Read from the source with ``ast`` (nothing is imported), so a change that quietly breaks a
layer fails here. Imports under ``if TYPE_CHECKING:`` are annotations only and do not count.
See docs/architecture.md for the picture.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "amem_graph"
MAX_LINES = 600

CORE = ("amem_graph.core",)
EMBEDDINGS = ("amem_graph.embeddings",)
#: the store protocol and what both stores share beside it
PROTOCOL = ("amem_graph.stores.base", "amem_graph.stores.bulk", "amem_graph.stores.query_vector")
LOGIC = (
    "amem_graph.recall",
    "amem_graph.provenance",
    "amem_graph.notes",
    "amem_graph.analyst",
    "amem_graph.transfer",
)
FACADE = ("amem_graph.memory",)
#: layer -> what its modules may import from amem_graph (besides their own package)
ALLOWED: dict[str, tuple[str, ...]] = {
    "amem_graph.core": CORE,
    "amem_graph.embeddings": CORE + EMBEDDINGS,
    "amem_graph.stores": CORE + PROTOCOL,
    "amem_graph.stores.base": CORE + PROTOCOL,
    "amem_graph.stores.factory": (
        *CORE,
        *PROTOCOL,
        "amem_graph.stores.local",
        "amem_graph.stores.neo4j",
    ),
    "amem_graph.stores.local": CORE + PROTOCOL,
    "amem_graph.stores.neo4j": CORE + PROTOCOL,
    **{pkg: CORE + EMBEDDINGS + PROTOCOL + LOGIC for pkg in LOGIC},
    "amem_graph.memory": CORE
    + EMBEDDINGS
    + PROTOCOL
    + LOGIC
    + FACADE
    + ("amem_graph.stores.factory",),
    "amem_graph.cli": ("amem_graph", *CORE, *EMBEDDINGS, *FACADE),
    "amem_graph.integrations": ("amem_graph", *CORE, *EMBEDDINGS, *FACADE),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    where = PACKAGE.parent.joinpath(*dotted.split("."))
    return where.with_suffix(".py").exists() or where.is_dir()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> set[str]:
    """The amem_graph modules ``path`` imports, anywhere but under ``if TYPE_CHECKING:``."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("amem_graph"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("amem_graph"):
            module = str(node.module)
            found.add(module)
            # ``from amem_graph.pkg import mod``: the submodule is the real dependency
            found.update(
                f"{module}.{a.name}" for a in node.names if _is_module(f"{module}.{a.name}")
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def _layer(module: str) -> str | None:
    """The most specific ALLOWED key that ``module`` belongs to."""
    matches = [k for k in ALLOWED if module == k or module.startswith(k + ".")]
    return max(matches, key=len) if matches else None


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    """``module`` is one of ``prefixes`` or inside one; the bare root matches only itself."""
    if module == "amem_graph":
        return "amem_graph" in prefixes
    return any(module == p or module.startswith(p + ".") for p in prefixes if p != "amem_graph")


SOURCES = sorted(PACKAGE.rglob("*.py"))
GRAPH = {_module_name(p): _imports(p) for p in SOURCES}


def test_every_module_belongs_to_a_layer() -> None:
    orphans = [m for m in GRAPH if m != "amem_graph" and _layer(m) is None]
    assert orphans == [], f"modules outside every layer: {orphans}"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_point_down(module: str) -> None:
    layer = _layer(module)
    if layer is None:  # the package root re-exports the public API
        assert not any(
            _within(i, ("amem_graph.cli", "amem_graph.integrations")) for i in GRAPH[module]
        )
        return
    allowed = (*ALLOWED[layer], layer)
    wrong = sorted(i for i in GRAPH[module] if not _within(i, allowed))
    assert wrong == [], f"{module} ({layer}) imports {wrong}"


def test_stores_never_import_each_other() -> None:
    for module, imports in GRAPH.items():
        for own, other in (
            ("amem_graph.stores.local", "amem_graph.stores.neo4j"),
            ("amem_graph.stores.neo4j", "amem_graph.stores.local"),
        ):
            if _within(module, (own,)):
                assert not any(_within(i, (other,)) for i in imports), f"{module} imports {other}"


def test_no_import_cycles() -> None:
    graph = nx.DiGraph()
    for module, imports in GRAPH.items():
        graph.add_node(module)
        # a package's __init__ importing its own submodules is how re-exports work, not a cycle
        graph.add_edges_from(
            (module, i) for i in imports if i in GRAPH and not i.startswith(module + ".")
        )
    cycles = list(nx.simple_cycles(graph))
    assert cycles == [], f"import cycles: {cycles[:5]}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_size(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines (limit {MAX_LINES})"


def test_the_rules_catch_a_wrong_arrow(tmp_path: Path) -> None:
    """The checker itself: a logic module importing a concrete store is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("from amem_graph.stores.local.store import LocalStore\n", encoding="utf-8")
    imports = _imports(bad)
    assert "amem_graph.stores.local.store" in imports
    assert not _within("amem_graph.stores.local.store", ALLOWED["amem_graph.recall"])
    hidden = tmp_path / "hidden.py"
    hidden.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import amem_graph.cli\n",
        encoding="utf-8",
    )
    assert _imports(hidden) == set()
