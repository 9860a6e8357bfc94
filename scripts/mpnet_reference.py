"""Write the MPNet reference fixture: a tiny random MPNet and Hugging Face's hidden states for it.

    python scripts/mpnet_reference.py          # needs transformers and torch (the [st] extra)

tests/unit/test_embeddings_mpnet.py holds the numpy MPNet forward pass (``embeddings/mpnet.py``)
to these states, so CI needs neither torch nor the 438 MB of all-mpnet-base-v2: the
architecture is the same at any size. Writes tests/data/mpnet_tiny/ (config.json,
model.safetensors, a 60-piece WordPiece tokenizer and the sentence-transformers files: mean
pooling, normalise, 12 pieces at most) and tests/data/mpnet_reference.npz: token ids with
padding, their mask, ``MPNetModel``'s last hidden states, its relative-position buckets for 600
positions, and sentence-transformers' vectors for ``TEXTS`` (the whole pipeline: tokenizer,
truncation, pooling).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from sentence_transformers import SentenceTransformer
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import MPNetConfig, MPNetModel
from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

OUT = Path(__file__).resolve().parent.parent / "tests" / "data"
PAD = 1
SPECIAL = ["<s>", "<pad>", "</s>", "<unk>"]
WORDS = [
    "the",
    "a",
    "deploy",
    "failed",
    "vault",
    "key",
    "rotate",
    "on",
    "monday",
    "staging",
    "audit",
    "team",
    "car",
    "oil",
    "change",
]
PIECES = ["##s", "##ed", "##ing", ".", ",", "?", "!"]
TEXTS = [
    "",
    "the deploy failed",
    "Rotate the vault key on Monday!",
    "the car needs an oil change, the team said",  # 'needs', 'an', 'said': unknown words
    "audit staging audit staging audit staging audit staging audit staging",  # truncated at 12
    "deploys rotated keys",
]


def tokenizer(out: Path) -> None:
    """A WordPiece tokenizer over ``WORDS`` with MPNet's special tokens, and the files that
    make ``out`` a sentence-transformers model (mean pooling, normalise, 12 pieces)."""
    vocab = {t: i for i, t in enumerate(SPECIAL + WORDS + PIECES)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    tok.save(str(out / "tokenizer.json"))
    files = {
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": "<s>",
            "eos_token": "</s>",
            "pad_token": "<pad>",
            "unk_token": "<unk>",
            "model_input_names": ["input_ids", "attention_mask"],
        },
        "sentence_bert_config.json": {"max_seq_length": 12, "do_lower_case": False},
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            },
        ],
        "1_Pooling/config.json": {"word_embedding_dimension": 32, "pooling_mode_mean_tokens": True},
    }
    for name, content in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(json.dumps(content, indent=1) + "\n")


def main() -> None:
    torch.manual_seed(0)
    config = MPNetConfig(
        vocab_size=len(SPECIAL + WORDS + PIECES),
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
    tokenizer(OUT / "mpnet_tiny")
    texts = SentenceTransformer(str(OUT / "mpnet_tiny"), device="cpu").encode(TEXTS)
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
        OUT / "mpnet_reference.npz",
        ids=ids,
        mask=mask,
        hidden=hidden.numpy(),
        buckets=buckets,
        texts=np.array(TEXTS),
        vectors=texts,
    )
    print(f"wrote {OUT / 'mpnet_tiny'} and {OUT / 'mpnet_reference.npz'}")


if __name__ == "__main__":
    main()
