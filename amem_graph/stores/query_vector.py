"""The query-vector check both stores make before a vector search, so that a wrong width or a
NaN is refused with the same message whichever store is behind the graph."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from amem_graph.core.errors import ValidationError


def unit_query(vector: Sequence[float], dims: int) -> np.ndarray:
    """``vector`` as float32, checked (width, finite) and scaled to unit length; an all-zero
    vector stays all zeros (every cosine with it is 0)."""
    q = np.asarray(vector, dtype=np.float32)
    if q.shape != (dims,):
        raise ValidationError(f"query vector has {q.size} dimensions, the store uses {dims}")
    if not np.all(np.isfinite(q)):
        raise ValidationError("query vector has a non-finite value")
    norm = float(np.linalg.norm(q))
    return q / norm if norm > 0 else q
