"""The numpy MPNet forward pass against Hugging Face's ``MPNetModel``, and ``NumpyEmbedder``.

The fixture (tests/data/mpnet_tiny, mpnet_reference.npz, written by scripts/mpnet_reference.py)
is a tiny random MPNet and torch's hidden states for it, so this file needs neither torch nor
the 438 MB all-mpnet-base-v2 (against which the same code gives cosine >= 0.9999998 to
sentence-transformers: bench/quality/README.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from amem_graph.core.errors import AmemGraphError, ValidationError
from amem_graph.embeddings import NumpyEmbedder, resolve_embedder
from amem_graph.embeddings.bert import BertConfig, read_safetensors
from amem_graph.embeddings.mpnet import MPNetEncoder, relative_buckets

DATA = Path(__file__).resolve().parent.parent / "data"
TINY = DATA / "mpnet_tiny"


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    with np.load(DATA / "mpnet_reference.npz") as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def tiny() -> MPNetEncoder:
    config = BertConfig.from_file(TINY / "config.json")
    assert config.model_type == "mpnet" and config.buckets == 32
    return MPNetEncoder(config, read_safetensors(TINY / "model.safetensors"))


def test_buckets_match_torch_on_every_distance(reference: dict[str, np.ndarray]) -> None:
    expected = reference["buckets"]
    got = relative_buckets(expected.shape[0], 32)
    assert (got == expected).all()
    # both directions, exact near, one bucket from 128 apart on
    assert got[0, 1] != got[1, 0] and got[0, 200] == got[0, 500] == 31 and got[500, 0] == 15


def test_hidden_states_match_mpnet_model(
    reference: dict[str, np.ndarray], tiny: MPNetEncoder
) -> None:
    ids, mask, expected = reference["ids"], reference["mask"], reference["hidden"]
    got = tiny.forward(ids, mask.astype(np.float32))
    real = mask.astype(bool)
    assert real.sum(axis=1).tolist() == [158, 130, 9, 1]  # padded rows, past 128 apart
    np.testing.assert_allclose(got[real], expected[real], atol=2e-5)


def test_sentence_vectors_match_sentence_transformers(reference: dict[str, np.ndarray]) -> None:
    """The whole pipeline: MPNet's special tokens, truncation at the model's 12 pieces,
    unknown words, mean pooling over the mask, normalisation; batched and one by one."""
    texts, expected = [str(t) for t in reference["texts"]], reference["vectors"]
    emb = NumpyEmbedder(TINY, batch_size=4)
    got = emb.encode(texts)
    np.testing.assert_allclose(got, expected, atol=2e-5)
    alone = np.stack([emb.embed_query(t) for t in texts])
    np.testing.assert_allclose(alone, expected, atol=2e-5)
    runtime = emb._load()
    assert runtime.max_len == 12
    assert len(runtime.tokenizer.encode(texts[4]).ids) == 12  # truncated, </s> kept
    assert runtime.tokenizer.encode(texts[4]).ids[-1] == 2


def test_padding_does_not_change_a_rows_states(
    reference: dict[str, np.ndarray], tiny: MPNetEncoder
) -> None:
    ids, mask = reference["ids"], reference["mask"].astype(np.float32)
    together = tiny.forward(ids, mask)
    alone = tiny.forward(ids[2:3, :9], mask[2:3, :9])
    np.testing.assert_allclose(alone[0], together[2, :9], atol=2e-5)


def test_the_position_table_leaves_room_for_the_padding_offset(tiny: MPNetEncoder) -> None:
    assert tiny.max_positions == 160 - 2


def test_a_model_directory_that_is_not_one_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="not a model directory") as info:
        NumpyEmbedder(tmp_path / "missing")
    assert "mpnet_model.py" in str(info.value)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValidationError, match="hidden_size"):
        NumpyEmbedder(tmp_path)
    with pytest.raises(ValidationError, match="threads must be positive"):
        NumpyEmbedder(TINY, threads=0)


def test_numpy_spec_resolves_with_the_models_name_and_dims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = resolve_embedder(f"numpy:{TINY}")
    assert isinstance(emb, NumpyEmbedder)
    assert emb.name == f"numpy:{TINY}" and emb.dims == 32
    shutil.copytree(TINY, tmp_path / "models" / "tiny")
    monkeypatch.setenv("HOME", str(tmp_path))
    home = resolve_embedder("numpy:~/models/tiny")  # the shell leaves ~ after "numpy:" alone
    assert home.name == f"numpy:{tmp_path / 'models' / 'tiny'}" and home.dims == 32


def test_a_directory_without_the_sentence_pipeline_is_refused_on_first_embed(
    tmp_path: Path,
) -> None:
    shutil.copytree(TINY, tmp_path / "m")
    (tmp_path / "m" / "modules.json").unlink()
    emb = NumpyEmbedder(tmp_path / "m")  # config.json is enough to construct
    with pytest.raises(AmemGraphError, match="not a sentence-transformers model"):
        emb.embed_query("hi")


def test_an_unknown_architecture_is_refused(tmp_path: Path) -> None:
    cfg = json.loads((TINY / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "model_type": "roberta"}))
    with pytest.raises(AmemGraphError, match="only BERT or MPNet"):
        BertConfig.from_file(tmp_path / "config.json")


def test_a_store_built_with_a_numpy_model_recalls_and_the_cli_reopens_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from amem_graph import MemoryGraph
    from amem_graph.cli.main import cli

    db = tmp_path / "m.db"
    with MemoryGraph.open(str(db), embedder=f"numpy:{TINY}") as mg:
        mg.remember("the deploy failed on monday", id="m1")
        mg.remember("rotate the vault key", id="m2")
        assert mg.recall("vault key", k=1)[0].memory.id == "m2"
    # no --embedder: the CLI takes the one the store records, the same directory
    result = CliRunner().invoke(cli, ["--store", str(db), "--json", "search", "deploy failed"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["memory"]["id"] == "m1"
