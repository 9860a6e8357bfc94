"""An embedder's output checked at the facade: a caller's model (a langchain ``Embeddings`` or
any ``Embedder``) may return strings, ``None`` or booleans, which numpy would otherwise coerce
or reject with a raw ``TypeError``/``ValueError`` deep inside a store."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import numpy as np

from amem_graph.core.errors import ValidationError
from amem_graph.embeddings import Embedder


def _vector(name: str, value: object, dims: int, what: str) -> list[float]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise ValidationError(
            f"embedder {name!r} returned {type(value).__name__} for {what}, not a list of numbers"
        )
    items = list(value)
    if len(items) != dims:
        raise ValidationError(
            f"embedder {name!r}: {what}: embedding has {len(items)} dimensions, "
            f"the store uses {dims}"
        )
    for i, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(float(v)):
            raise ValidationError(
                f"embedder {name!r}: {what}: embedding value {i} is {v!r}, not a finite number"
            )
    return [float(v) for v in items]


def _float_rows(vectors: Sequence[object] | np.ndarray, dims: int) -> list[list[float]] | None:
    """The usual answer (rows of finite floats of the right width) checked in one numpy pass;
    None for anything else, which the per-value check then explains. numpy would turn a bool
    or an int among floats into a float, so a row that is not a float array must hold floats
    only."""
    try:
        arr = np.asarray(vectors)
    except (ValueError, TypeError):  # ragged rows
        return None
    if arr.ndim != 2 or arr.shape[1] != dims or arr.dtype.kind != "f":
        return None
    if not isinstance(vectors, np.ndarray) and not all(map(_float_row, vectors)):
        return None
    if not np.isfinite(arr).all():
        return None
    return arr.astype(np.float64).tolist()  # type: ignore[no-any-return]


def _float_row(row: object) -> bool:
    if isinstance(row, np.ndarray):
        return bool(row.dtype.kind == "f")
    return isinstance(row, Sequence) and all(type(x) is float for x in row)


class CheckedEmbedder:
    """Delegates to the caller's embedder; every vector it returns is a list of finite floats
    of the declared dimension, or a ValidationError naming the embedder."""

    def __init__(self, inner: Embedder) -> None:
        self.inner: Embedder = inner.inner if isinstance(inner, CheckedEmbedder) else inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dims(self) -> int:
        return self.inner.dims

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self.inner.embed_documents(texts)
        if isinstance(vectors, str | bytes) or not isinstance(vectors, Sequence | np.ndarray):
            raise ValidationError(f"embedder {self.name!r} returned no list of vectors")
        fast = _float_rows(vectors, self.dims)
        if fast is not None:
            return fast
        return [_vector(self.name, v, self.dims, f"text {i}") for i, v in enumerate(vectors)]

    def embed_query(self, text: str) -> list[float]:
        vector = self.inner.embed_query(text)
        if isinstance(vector, Sequence | np.ndarray) and not isinstance(vector, str | bytes):
            fast = _float_rows([vector], self.dims)
            if fast is not None:
                return fast[0]
        return _vector(self.name, vector, self.dims, "the query")
