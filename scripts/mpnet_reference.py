"""Write the MPNet reference fixture: a tiny random MPNet and Hugging Face's hidden states for it.

    python scripts/mpnet_reference.py          # needs transformers and torch (the [st] extra)

tests/unit/test_embeddings_mpnet.py holds the numpy MPNet forward pass (``embeddings/mpnet.py``)
to these states, so CI needs neither torch nor the 438 MB of all-mpnet-base-v2: the
architecture is the same at any size. Writes tests/data/mpnet_tiny/ (config.json,
model.safetensors) and tests/data/mpnet_reference.npz: token ids with padding, their mask,
``MPNetModel``'s last hidden states, and its relative-position buckets for 600 positions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from transformers import MPNetConfig, MPNetModel
from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

OUT = Path(__file__).resolve().parent.parent / "tests" / "data"
PAD = 1


def main() -> None:
    torch.manual_seed(0)
    config = MPNetConfig(
        vocab_size=60,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=160,
        relative_attention_num_buckets=32,
        layer_norm_eps=1e-5,
        hidden_act="gelu",
    )
    model = MPNetModel(config, add_pooling_layer=False).eval()
    with torch.no_grad():  # random biases and norms too, so every tensor is exercised
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    model.save_pretrained(OUT / "mpnet_tiny", safe_serialization=True)
    rng = np.random.default_rng(0)
    lengths = [158, 130, 9, 1]  # distances past 128 (the last bucket), short, one token
    ids = np.full((len(lengths), max(lengths)), PAD, dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, n in enumerate(lengths):
        ids[row, :n] = rng.integers(3, config.vocab_size, n)
        mask[row, :n] = 1
    with torch.no_grad():
        hidden = model(torch.tensor(ids), attention_mask=torch.tensor(mask)).last_hidden_state
    seq = 600
    rel = torch.arange(seq)[None, :] - torch.arange(seq)[:, None]
    buckets = MPNetEncoder.relative_position_bucket(rel, num_buckets=32).numpy().astype(np.int8)
    np.savez_compressed(
        OUT / "mpnet_reference.npz", ids=ids, mask=mask, hidden=hidden.numpy(), buckets=buckets
    )
    print(f"wrote {OUT / 'mpnet_tiny'} and {OUT / 'mpnet_reference.npz'}")


if __name__ == "__main__":
    main()
