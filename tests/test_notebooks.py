"""The notebooks run top to bottom on each store (nbclient, a real kernel) and are committed
with their outputs cleared.

A notebook asserts its own story as it goes (the suspects lead to the poisoned memory, recall
drops it after the retraction and returns it after the restore ...), so executing it checks it.
On Neo4j the notebook wipes the test database (``AMEM_NOTEBOOK_WIPE=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import STORE_PARAMS, neo4j_uri, open_neo4j_store

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

FOLDER = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
ROOT = str(FOLDER.parent)


def test_the_three_notebooks_are_there() -> None:
    assert {p.stem for p in NOTEBOOKS} == {
        "provenance_drilldown",
        "analyst_cypher",
        "recall_explained",
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_with_outputs_cleared(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {i} has outputs: clear them"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"


@pytest.mark.parametrize("store_kind", STORE_PARAMS)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, store_kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMEM_DOCS_IMG", raising=False)  # tests never rewrite docs/img
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    )
    if store_kind == "neo4j":
        open_neo4j_store().close()  # skips (fails in CI) when no server answers
        monkeypatch.setenv("NEO4J_URI", neo4j_uri())
        monkeypatch.setenv("AMEM_NOTEBOOK_WIPE", "1")
    else:
        monkeypatch.delenv("NEO4J_URI", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(FOLDER)}}
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert not errors
    images = sum(
        "image/png" in out.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
    )
    assert images >= 1, f"{path.name} drew no picture"
