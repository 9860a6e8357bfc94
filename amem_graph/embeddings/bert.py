"""A BERT encoder forward pass in numpy, for sentence-transformers models such as MiniLM
(and, with ``mpnet.py``, MPNet models such as all-mpnet-base-v2).

Why numpy: the default embedder must not pull torch (gigabytes, seconds to import) to run a
6-layer, 384-wide encoder whose cost is a handful of matrix products that BLAS does as well.
Inference only, float32, the post-LayerNorm BERT of Hugging Face ``BertModel``.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from amem_graph.core.errors import AmemGraphError

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensors of a ``.safetensors`` file, read-only views of one memory map.

    The format is an 8-byte little-endian header length, a JSON header (name -> dtype, shape,
    byte offsets) and the raw buffers; parsing it here saves a dependency for twenty lines.
    """
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    try:
        (size,) = struct.unpack("<Q", raw[:8].tobytes())
        header = json.loads(raw[8 : 8 + size].tobytes())
    except (struct.error, ValueError) as exc:
        raise AmemGraphError(f"{path} is not a safetensors file") from exc
    base = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(meta["dtype"])
        if dtype is None:
            raise AmemGraphError(f"{path}: tensor {name} has unsupported dtype {meta['dtype']}")
        start, end = meta["data_offsets"]
        view = raw[base + start : base + end].view(dtype)
        tensors[name] = view.reshape(meta["shape"])
    return tensors


@dataclass(frozen=True)
class BertConfig:
    """The few ``config.json`` fields the forward pass needs. ``model_type`` "bert", or
    "mpnet" (the same post-LayerNorm layers with a relative position bias on the attention
    scores, ``mpnet.py``); ``buckets`` is MPNet's number of relative position buckets."""

    layers: int
    heads: int
    hidden: int
    eps: float
    model_type: str = "bert"
    buckets: int = 0

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        """Read ``config.json``; refuse what this forward pass does not implement."""
        cfg = json.loads(path.read_text(encoding="utf-8"))
        kind = cfg.get("model_type")
        supported = (
            kind in ("bert", "mpnet")
            and cfg.get("hidden_act") == "gelu"
            and cfg.get("position_embedding_type", "absolute") == "absolute"
        )
        if not supported:
            raise AmemGraphError(
                f"{path}: only BERT or MPNet with GELU and absolute positions runs without torch",
                hint='use SentenceTransformerEmbedder (pip install "amem-graph[st]")',
            )
        return cls(
            layers=int(cfg["num_hidden_layers"]),
            heads=int(cfg["num_attention_heads"]),
            hidden=int(cfg["hidden_size"]),
            eps=float(cfg["layer_norm_eps"]),
            model_type=str(kind),
            buckets=int(cfg.get("relative_attention_num_buckets", 0)),
        )


# erf as a rational function of x (odd numerator over even denominator in x**2) on [-4, 4]:
# the float32 approximation Eigen and XLA use, within 5e-7 of math.erf; numpy has no erf.
_ERF_NUM = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_DEN = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)


def _erf_clipped(z: np.ndarray) -> np.ndarray:
    """erf of values already clipped to [-4, 4], by Horner's rule on fresh arrays."""
    z2 = z * z
    num: np.ndarray = z2 * np.float32(_ERF_NUM[0])
    num += np.float32(_ERF_NUM[1])
    for c in _ERF_NUM[2:]:
        num *= z2
        num += np.float32(c)
    den = z2 * np.float32(_ERF_DEN[0])
    den += np.float32(_ERF_DEN[1])
    for c in _ERF_DEN[2:]:
        den *= z2
        den += np.float32(c)
    num *= z
    num /= den
    return num


def erf(x: np.ndarray) -> np.ndarray:
    """Error function, float32 accuracy."""
    return _erf_clipped(np.clip(x, np.float32(-4.0), np.float32(4.0)))


# GELU runs over blocks of rows so its two dozen elementwise passes stay in cache: 4x faster
# than whole-array passes over (tokens, 1536).
_GELU_ROWS = 32


def gelu_(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, as ``hidden_act: gelu`` means in transformers, in place on 2-D x."""
    for start in range(0, x.shape[0], _GELU_ROWS):
        block = x[start : start + _GELU_ROWS]
        z = block * np.float32(0.7071067811865476)
        np.clip(z, np.float32(-4.0), np.float32(4.0), out=z)
        phi = _erf_clipped(z)
        phi += np.float32(1.0)
        phi *= np.float32(0.5)
        block *= phi
    return x


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (x is overwritten)."""
    x -= x.mean(axis=-1, keepdims=True)
    std = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(eps))
    x /= std
    x *= weight
    x += bias
    return x


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (hidden, 3*hidden) views, query part pre-scaled by 1/sqrt(head_dim)
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


class BertEncoder:
    """Token ids and attention mask in, last hidden states out (``BertModel`` without pooler)."""

    #: where each layer keeps its attention weights (the rest is named alike in BERT and MPNet)
    QUERY, KEY, VALUE = "attention.self.query", "attention.self.key", "attention.self.value"
    ATTENTION_OUT, ATTENTION_NORM = "attention.output.dense", "attention.output.LayerNorm"

    def __init__(self, config: BertConfig, tensors: dict[str, np.ndarray]) -> None:
        self.config = config
        try:
            self._word = tensors["embeddings.word_embeddings.weight"]
            self._pos = tensors["embeddings.position_embeddings.weight"]
            self._ln_w = np.array(tensors["embeddings.LayerNorm.weight"])
            self._ln_b = np.array(tensors["embeddings.LayerNorm.bias"])
            self._layers = [self._layer(tensors, i) for i in range(config.layers)]
            self._load_extra(tensors)
        except KeyError as exc:
            raise AmemGraphError(
                f"the {config.model_type.upper()} weights lack tensor {exc.args[0]}"
            ) from exc

    def _load_extra(self, tensors: dict[str, np.ndarray]) -> None:
        """BERT's token type row (every token is type 0)."""
        self._type0 = np.array(tensors["embeddings.token_type_embeddings.weight"][0])

    @property
    def max_positions(self) -> int:
        """Longest sequence the position table covers."""
        return int(self._pos.shape[0])

    def _layer(self, t: dict[str, np.ndarray], i: int) -> _Layer:
        p = f"encoder.layer.{i}."
        scale = np.float32(1.0 / np.sqrt(self.config.hidden // self.config.heads))

        # torch Linear weights are (out, in); x @ W.T on the memory-mapped array hands BLAS a
        # transposed operand instead of copying 86 MB at load (a third of the load time).
        def w(name: str) -> np.ndarray:
            return t[p + name + ".weight"].T

        def b(name: str) -> np.ndarray:
            return np.array(t[p + name + ".bias"])

        q, k, v = self.QUERY, self.KEY, self.VALUE
        fused = [t[p + q + ".weight"] * scale, t[p + k + ".weight"], t[p + v + ".weight"]]
        return _Layer(
            qkv_w=np.concatenate(fused, axis=0).T,
            qkv_b=np.concatenate([b(q) * scale, b(k), b(v)]),
            out_w=w(self.ATTENTION_OUT),
            out_b=b(self.ATTENTION_OUT),
            ln1_w=np.array(t[p + self.ATTENTION_NORM + ".weight"]),
            ln1_b=b(self.ATTENTION_NORM),
            up_w=w("intermediate.dense"),
            up_b=b("intermediate.dense"),
            down_w=w("output.dense"),
            down_b=b("output.dense"),
            ln2_w=np.array(t[p + "output.LayerNorm.weight"]),
            ln2_b=b("output.LayerNorm"),
        )

    def _embed(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Word, position and token type embeddings, before their LayerNorm."""
        embedded: np.ndarray = self._word[ids] + self._pos[: ids.shape[1]] + self._type0
        return embedded

    def _score_bias(self, seq: int) -> np.ndarray | None:
        """What every layer adds to the attention scores besides the padding mask: none."""
        return None

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Hidden states (batch, seq, hidden) for int ids and a 0/1 mask, both (batch, seq)."""
        batch, seq = ids.shape
        cfg = self.config
        heads, head_dim = cfg.heads, cfg.hidden // cfg.heads
        x = self._embed(ids, mask)
        x = layer_norm(x, self._ln_w, self._ln_b, cfg.eps).reshape(batch * seq, cfg.hidden)
        # Padding keys get -inf before the softmax; the first key keeps every row finite.
        key_bias = np.where(mask[:, None, None, :] > 0, 0.0, -np.inf).astype(np.float32)
        position_bias = self._score_bias(seq)
        if position_bias is not None:
            key_bias = key_bias + position_bias  # (batch, heads, seq, seq), once for all layers
        for layer in self._layers:
            qkv = _linear(x, layer.qkv_w, layer.qkv_b).reshape(batch, seq, 3, heads, head_dim)
            q, k, v = qkv.transpose(2, 0, 3, 1, 4)  # each (batch, heads, seq, head_dim)
            scores = q @ k.transpose(0, 1, 3, 2)
            scores += key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * seq, cfg.hidden)
            attended = _linear(context, layer.out_w, layer.out_b, residual=x)
            x = layer_norm(attended, layer.ln1_w, layer.ln1_b, cfg.eps)
            up = gelu_(_linear(x, layer.up_w, layer.up_b))
            x = layer_norm(
                _linear(up, layer.down_w, layer.down_b, residual=x),
                layer.ln2_w,
                layer.ln2_b,
                cfg.eps,
            )
        hidden: np.ndarray = x.reshape(batch, seq, cfg.hidden)
        return hidden


def _linear(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, residual: np.ndarray | None = None
) -> np.ndarray:
    """``x @ weight + bias (+ residual)`` with the additions in place."""
    out: np.ndarray = x @ weight
    out += bias
    if residual is not None:
        out += residual
    return out
