"""Cheap deterministic stand-ins that the load test and the unit tests share.

``HashEmbedder`` replaces the embedding model where only the plumbing is measured or tested (the
load test's throughput, the service's bookkeeping). It shares word overlap, not meaning: a test
that claims to check embeddings uses the real model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np


class HashEmbedder:
    """Deterministic bag-of-words feature hashing (signed buckets), normalized: the load test's
    and the unit tests' embedder (the ``assistant.models.embeddings.Embedder`` protocol).

    Stable across processes (blake2b, not Python's salted ``hash``); texts sharing words are similar.
    """

    model_name = "hash-bow"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def encode(self, texts: str | Sequence[str]) -> np.ndarray:
        items = [texts] if isinstance(texts, str) else list(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for i, text in enumerate(items):
            for word in re.findall(r"\w+", text.lower()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0  # a text with no words stays the zero vector: similar to nothing
        return out / norms
