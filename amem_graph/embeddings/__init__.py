"""Embedders: text to vectors (MiniLM offline, a hashing embedder, any LangChain ``Embeddings``)."""

from amem_graph.embeddings.embedders import (
    Embedder,
    HashingEmbedder,
    LangChainEmbedder,
    MiniLMEmbedder,
    RecordedEmbedder,
    resolve_embedder,
)

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "LangChainEmbedder",
    "MiniLMEmbedder",
    "RecordedEmbedder",
    "resolve_embedder",
]
