"""Embedders: text to vectors (MiniLM, or any BERT or MPNet directory, offline without torch;
sentence-transformers, hashing, any LangChain ``Embeddings``)."""

from amem_graph.embeddings.embedders import (
    Embedder,
    HashingEmbedder,
    LangChainEmbedder,
    RecordedEmbedder,
    resolve_embedder,
)
from amem_graph.embeddings.minilm import MiniLMEmbedder, NumpyEmbedder
from amem_graph.embeddings.st import SentenceTransformerEmbedder

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "LangChainEmbedder",
    "MiniLMEmbedder",
    "NumpyEmbedder",
    "RecordedEmbedder",
    "SentenceTransformerEmbedder",
    "resolve_embedder",
]
