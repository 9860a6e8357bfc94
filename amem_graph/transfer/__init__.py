"""Moving a whole memory graph between stores (lossless JSONL export and import)."""
