"""Embedders: deterministic hashing, the LangChain adapter, resolution, and the real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from amem_graph import HashingEmbedder, LangChainEmbedder, MemoryGraph, MiniLMEmbedder
from amem_graph.core.errors import EmbedderMismatchError, ValidationError
from amem_graph.embeddings import Embedder, resolve_embedder


def test_hashing_is_deterministic_unit_and_lexical() -> None:
    emb = HashingEmbedder(128)
    a, b = emb.embed_documents(["deploy the service", "deploy the service"])
    assert a == b
    assert len(a) == 128 and np.linalg.norm(a) == pytest.approx(1.0, abs=1e-5)
    near = np.dot(emb.embed_query("deploy service"), a)
    far = np.dot(emb.embed_query("banana smoothie recipe"), a)
    assert near > far
    assert emb.name == "hashing-128"
    assert emb.embed_documents([]) == []


def test_hashing_rejects_tiny_dims() -> None:
    with pytest.raises(ValidationError, match="at least 8"):
        HashingEmbedder(4)


def test_langchain_adapter_normalises_and_finds_dims() -> None:
    inner = DeterministicFakeEmbedding(size=32)
    emb = LangChainEmbedder(inner)
    assert emb.dims == 32
    assert emb.name == "langchain:DeterministicFakeEmbedding"
    vec = emb.embed_query("hello")
    assert np.linalg.norm(vec) == pytest.approx(1.0, abs=1e-5)
    assert len(emb.embed_documents(["a", "b"])) == 2


def test_resolve_embedder_accepts_the_documented_forms() -> None:
    assert isinstance(resolve_embedder("hashing"), HashingEmbedder)
    assert isinstance(resolve_embedder("minilm"), MiniLMEmbedder)
    assert isinstance(resolve_embedder(DeterministicFakeEmbedding(size=8)), LangChainEmbedder)
    custom = HashingEmbedder(64)
    assert resolve_embedder(custom) is custom
    assert isinstance(custom, Embedder)
    with pytest.raises(ValidationError, match="unknown embedder 'glove'"):
        resolve_embedder("glove")
    with pytest.raises(ValidationError, match="got int"):
        resolve_embedder(42)


def test_open_with_langchain_embeddings(tmp_path: object) -> None:
    with MemoryGraph.open(":memory:", embedder=DeterministicFakeEmbedding(size=16)) as mg:
        mg.remember("anything", id="a")
        assert mg.stats()["embedder"] == {
            "name": "langchain:DeterministicFakeEmbedding",
            "dims": 16,
        }


def test_store_refuses_a_different_embedder(tmp_path: object) -> None:
    path = f"{tmp_path}/m.db"
    with MemoryGraph.open(path, embedder="hashing") as mg:
        mg.remember("kept", id="k")
    with pytest.raises(
        EmbedderMismatchError, match=r"built with embedder 'hashing-256' \(256 dims\)"
    ):
        MemoryGraph.open(path, embedder=HashingEmbedder(128))
    with MemoryGraph.open(path, embedder="hashing") as mg:
        assert mg.get("k").content == "kept"


@pytest.mark.slow
def test_minilm_ranks_semantic_neighbours() -> None:
    """The real all-MiniLM-L6-v2, loaded offline from its package: cars are near automobiles."""
    with MemoryGraph.open(":memory:") as mg:
        assert mg.embedder.name == "all-MiniLM-L6-v2" and mg.embedder.dims == 384
        mg.remember_many(
            [
                {"content": "An automobile needs its engine oil changed regularly", "id": "auto"},
                {"content": "A banana is a yellow tropical fruit", "id": "banana"},
                {"content": "The sonata was written for solo piano", "id": "piano"},
            ]
        )
        hits = mg.recall("how should I look after my car", k=3, text_weight=0.0)
        order = [h.memory.id for h in hits]
        assert order.index("auto") < order.index("banana")
        assert order[0] == "auto"
        vec = mg.embedder.embed_query("car")
        assert len(vec) == 384 and np.linalg.norm(vec) == pytest.approx(1.0, abs=1e-4)
