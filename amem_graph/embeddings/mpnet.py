"""MPNet's differences from BERT, for the numpy forward pass (``bert.py``).

An MPNet layer is a post-LayerNorm BERT layer under other tensor names; the model differs in
two places, both as in Hugging Face ``MPNetModel``: absolute positions count from
``padding_idx + 1`` over the real tokens (padding sits at ``padding_idx``), there are no token
types, and every layer adds one learnt bias per head and relative-position bucket to its
attention scores (T5-style buckets: exact up to 8 apart, logarithmic up to 128, each direction
apart). The buckets are computed in float32 as torch computes them, so a distance on a bucket
edge falls on the same side (tests/unit/test_embeddings_mpnet.py).
"""

from __future__ import annotations

import math

import numpy as np

from amem_graph.embeddings.bert import BertEncoder

#: MPNet's ``padding_idx``: real tokens' positions start after it
PADDING_IDX = 1
MAX_DISTANCE = 128


def relative_buckets(seq: int, buckets: int, max_distance: int = MAX_DISTANCE) -> np.ndarray:
    """(seq, seq) bucket of key position j seen from query position i, as
    ``MPNetEncoder.relative_position_bucket`` gives for ``j - i``."""
    positions = np.arange(seq, dtype=np.int64)
    n = -(positions[None, :] - positions[:, None])
    half = buckets // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    scaled = np.log(np.maximum(n, 1).astype(np.float32) / np.float32(exact))
    scaled /= np.float32(math.log(max_distance / exact))
    scaled *= np.float32(half - exact)
    large = np.minimum(exact + scaled.astype(np.int64), half - 1)
    out += np.where(n < exact, n, large)
    return out


class MPNetEncoder(BertEncoder):
    """``MPNetModel`` without pooler: token ids and mask in, last hidden states out."""

    QUERY, KEY, VALUE = "attention.attn.q", "attention.attn.k", "attention.attn.v"
    ATTENTION_OUT, ATTENTION_NORM = "attention.attn.o", "attention.LayerNorm"

    def _load_extra(self, tensors: dict[str, np.ndarray]) -> None:
        """The relative position bias table, (buckets, heads)."""
        self._bias = np.array(tensors["encoder.relative_attention_bias.weight"])

    @property
    def max_positions(self) -> int:
        """Longest sequence the position table covers after its padding offset."""
        return int(self._pos.shape[0]) - PADDING_IDX - 1

    def _embed(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Word and position embeddings; positions count real tokens from ``PADDING_IDX + 1``."""
        real = (mask > 0).astype(np.int64)
        positions = np.cumsum(real, axis=1) * real + PADDING_IDX
        embedded: np.ndarray = self._word[ids] + self._pos[positions]
        return embedded

    def _score_bias(self, seq: int) -> np.ndarray:
        """(1, heads, seq, seq): each head's bias for the bucket of each query-key distance."""
        table = self._bias[relative_buckets(seq, self.config.buckets)]  # (seq, seq, heads)
        return np.ascontiguousarray(table.transpose(2, 0, 1))[None]
