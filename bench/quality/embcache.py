"""A disk cache in front of an embedder, so repeated benchmark runs embed each text once.

MiniLM spends most of a quality run embedding the same turns and questions again; the cache
keys each vector by the embedder's name and the text's hash, in one SQLite file under /tmp
(``AMEM_QUALITY_CACHE`` moves it). Vectors come back bit-identical to the model's, so a
cached run scores exactly like an uncached one.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from amem_graph.embeddings import Embedder

DEFAULT_DIR = Path(os.environ.get("AMEM_QUALITY_CACHE", "/tmp/amem_quality_cache"))


class CachedEmbedder:
    """Wraps ``inner``; same name and dims, so a store cannot tell the difference."""

    def __init__(self, inner: Embedder, directory: Path = DEFAULT_DIR) -> None:
        self.inner = inner
        directory.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(directory / "vectors.sqlite")
        self._db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vec BLOB)")

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dims(self) -> int:
        return self.inner.dims

    def _key(self, kind: str, text: str) -> str:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
        return f"{self.inner.name}:{kind}:{digest}"

    def _embed(self, kind: str, texts: Sequence[str]) -> list[list[float]]:
        keys = [self._key(kind, t) for t in texts]
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(
                f"SELECT key, vec FROM v WHERE key IN ({marks})", chunk
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32).tolist()
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if todo:
            if kind == "query":
                vectors = [self.inner.embed_query(t) for t in todo]
            else:
                vectors = self.inner.embed_documents(todo)
            rows = []
            for text, vec in zip(todo, vectors, strict=True):
                key = self._key(kind, text)
                found[key] = vec
                rows.append((key, np.asarray(vec, dtype=np.float32).tobytes()))
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
        return [found[k] for k in keys]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Cached document vectors."""
        return self._embed("doc", texts)

    def embed_query(self, text: str) -> list[float]:
        """Cached query vector."""
        return self._embed("query", [text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Several cached query vectors at once."""
        return self._embed("query", texts)
