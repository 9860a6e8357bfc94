"""Any sentence-transformers model, for when MiniLM is not the one wanted.

sentence-transformers brings torch (gigabytes), so it is the optional ``[st]`` extra and is
imported only when such an embedder first embeds. The Hugging Face hub stays offline unless
``HF_HUB_OFFLINE`` says otherwise, so a model name resolves only from the local cache.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from amem_graph.core.errors import AmemGraphError, ValidationError


def _quiet_transformers() -> None:
    """No ``Loading weights: 100%`` bar on stderr: a library's output is its caller's."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # pragma: no cover - sentence-transformers requires transformers
        return
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call,unused-ignore]


class SentenceTransformerEmbedder:
    """A sentence-transformers model (a local directory or a cached hub name), unit vectors."""

    def __init__(self, model: str, batch_size: int = 32, device: str = "cpu") -> None:
        if not model.strip():
            raise ValidationError("SentenceTransformerEmbedder needs a model directory or name")
        self._model_id = model
        self._batch_size = batch_size
        self._device = device
        self._model: Any = None
        self._dims: int | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``st:`` and the model as given, so a store refuses any other model."""
        return f"st:{self._model_id}"

    @property
    def dims(self) -> int:
        """Found by embedding one probe text the first time it is asked."""
        if self._dims is None:
            self._dims = len(self.embed_query("dimension probe"))
        return self._dims

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise AmemGraphError(
                        f"embedder {self.name!r} needs sentence-transformers, not installed",
                        hint='pip install "amem-graph[st]"',
                    ) from exc
                _quiet_transformers()
                try:
                    self._model = SentenceTransformer(self._model_id, device=self._device)
                except (OSError, ValueError) as exc:
                    raise AmemGraphError(
                        f"sentence-transformers cannot load {self._model_id!r}: {exc}"
                    ) from exc
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Batched document vectors."""
        if not texts:
            return []
        vectors = self._load().encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """One query vector."""
        return self.embed_documents([text])[0]
