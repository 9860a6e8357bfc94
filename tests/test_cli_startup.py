"""What the ``amem`` command loads before it works (issue 16): importing it pulls no optional
heavyweight, commands that never embed never load a model, and ``--embedder st:MODEL`` either
runs a sentence-transformers model or says which extra to install.

Wall times are not asserted here (they depend on the machine); README gives the figures and
``python -X importtime -m amem_graph.cli`` shows where the time goes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.cli.main import cli
from amem_graph.embeddings.minilm import MiniLMEmbedder

ROOT = Path(__file__).resolve().parents[1]
ENV: dict[str, str | None] = {"COLUMNS": "200", "AMEM_STORE": None, "AMEM_EMBEDDER": None}
#: optional or heavy packages no plain ``import`` of the CLI may load
HEAVY = ("networkx", "neo4j", "matplotlib", "sentence_transformers", "torch", "pandas")


def _modules_after(statement: str, names: Sequence[str]) -> list[str]:
    """Which of ``names`` are in ``sys.modules`` after ``statement`` in a fresh interpreter."""
    probe = (
        f"import sys, json; {statement}; "
        f"print(json.dumps([n for n in {list(names)!r} if n in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: list[str] = json.loads(out.stdout)
    return loaded


def test_import_amem_graph_defers_the_facade() -> None:
    loaded = _modules_after("import amem_graph", ("amem_graph.memory.graph", "pydantic", *HEAVY))
    assert loaded == []


def test_public_names_resolve_on_first_use() -> None:
    import amem_graph

    assert amem_graph.MemoryGraph is MemoryGraph
    assert set(amem_graph.__all__) <= set(dir(amem_graph))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = amem_graph.nope  # type: ignore[attr-defined]


def test_importing_the_cli_loads_no_optional_heavyweight() -> None:
    assert _modules_after("import amem_graph.cli.main", HEAVY) == []


def test_importing_the_cli_loads_no_langchain() -> None:
    assert _modules_after("import amem_graph.cli.main", ("langchain_core",)) == []


class _MiniLMStandIn:
    """Records a store as built with MiniLM without running the model: hashed vectors under
    MiniLM's name and dimension, so reopening it without --embedder picks MiniLM."""

    name = MiniLMEmbedder.name
    dims = MiniLMEmbedder.dims

    def __init__(self) -> None:
        self._hash = HashingEmbedder(self.dims)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._hash.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._hash.embed_query(text)


@pytest.fixture
def minilm_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store recorded as MiniLM's, with loading the model made to fail loudly."""
    db = tmp_path / "memory.db"
    with MemoryGraph.open(db, embedder=_MiniLMStandIn()) as mg:
        mg.remember("the staging cluster uses blue-green deploys", id="m1", agent="ops")
        mg.remember("roll back when the canary fails", id="m2", derived_from=["m1"])

    def refuse(self: MiniLMEmbedder) -> None:
        raise RuntimeError("the MiniLM model was loaded")

    monkeypatch.setattr(MiniLMEmbedder, "_load", refuse)
    return db


def _amem(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--store", str(db), *args], env=ENV)


@pytest.mark.parametrize(
    "args",
    [
        ("show", "m1"),
        ("trace", "m1"),
        ("impact", "m1"),
        ("stats",),
        ("audit",),
        ("suspects",),
        ("retract", "m1", "--reason", "r", "--dry-run"),
    ],
    ids=lambda a: a[0],
)
def test_commands_that_never_embed_load_no_model(minilm_store: Path, args: tuple[str, ...]) -> None:
    result = _amem(minilm_store, *args)
    assert result.exit_code == 0, result.output
    assert "MiniLM model was loaded" not in result.output


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"content": "fine"}\n{not json\n', "bad.jsonl:2: invalid JSON"),
        ('{"content": "child", "derived_from": ["missing"]}\n', "missing"),
    ],
    ids=["bad-json", "unknown-parent"],
)
def test_an_ingest_file_that_fails_validation_loads_no_model(
    minilm_store: Path, tmp_path: Path, lines: str, message: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines, encoding="utf-8")
    result = _amem(minilm_store, "ingest", str(bad))
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "MiniLM model was loaded" not in result.output


def test_the_model_trap_is_live(minilm_store: Path) -> None:
    """Control: a command that embeds does reach the (refused) load."""
    result = _amem(minilm_store, "search", "deploys")
    assert result.exit_code == 1
    assert "MiniLM model was loaded" in result.output


@pytest.mark.parametrize("value", ["st:", "st:   ", "numpy:", "bogus", "MiniLM"])
def test_embedder_option_refuses_unknown_values(tmp_path: Path, value: str) -> None:
    result = _amem(tmp_path / "m.db", "--embedder", value, "add", "x")
    assert result.exit_code == 2
    assert "is not minilm, hashing, st:<model>" in result.output
    assert not (tmp_path / "m.db").exists()


def test_st_embedder_without_the_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    db = tmp_path / "m.db"
    result = _amem(db, "--embedder", "st:some/model", "add", "hello")
    assert result.exit_code == 2, result.output
    assert "needs sentence-transformers" in result.output
    assert 'pip install "amem-graph[st]"' in result.output
    with MemoryGraph.open(db, embedder="hashing") as mg:
        assert mg.store.counts().get("Memory", 0) == 0


@pytest.mark.slow
def test_st_embedder_round_trip_keeps_the_stores_model(tmp_path: Path) -> None:
    """The bundled MiniLM directory is a sentence-transformers model: run it through torch."""
    pytest.importorskip("sentence_transformers")
    model = MiniLMEmbedder.model_path()
    db = tmp_path / "m.db"
    added = _amem(db, "--embedder", f"st:{model}", "--json", "add", "blue-green deploys")
    assert added.exit_code == 0, added.output
    _amem(db, "--embedder", f"st:{model}", "add", "the cafeteria serves soup on Fridays")
    stats = json.loads(_amem(db, "--json", "stats").output)
    assert stats["embedder"] == {"name": f"st:{model}", "dims": 384}
    found = _amem(db, "--json", "search", "how do we deploy", "-k", "1")  # no --embedder
    assert found.exit_code == 0, found.output
    assert json.loads(found.output)[0]["memory"]["content"] == "blue-green deploys"
    assert "Loading weights" not in added.output + found.output  # no model-loading noise
