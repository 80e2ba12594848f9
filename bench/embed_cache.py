"""Embeddings of benchmark texts, cached on disk outside the repository.

Why: a LoCoMo file has thousands of turns and questions, and MiniLM on one shared CPU core takes
about a minute to embed them; every benchmark run would otherwise pay that again. The cache lives
in ``$LAGMEM_BENCH_CACHE`` (default ``~/.cache/lagmem/bench``), one ``.npy`` file per list of
texts, named by the SHA-256 of the model name and the texts: a changed text or model is a new file,
never a stale read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def cache_dir() -> Path:
    return Path(os.environ.get("LAGMEM_BENCH_CACHE") or Path.home() / ".cache" / "lagmem" / "bench")


def _key(model: str, texts: Sequence[str]) -> str:
    h = hashlib.sha256(model.encode())
    for t in texts:
        h.update(b"\x00" + t.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def embed(embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.encode(texts)``, read from the cache when these exact texts were embedded before."""
    texts = list(texts)
    path = cache_dir() / f"{_key(getattr(embedder, 'model_name', type(embedder).__name__), texts)}.npy"
    if path.exists():
        try:
            vecs = np.load(path)
            if vecs.shape[0] == len(texts):
                return vecs
        except (OSError, ValueError):
            pass  # a torn file: embed again and overwrite it
    vecs = np.asarray(embedder.encode(texts), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(tmp, vecs)
    os.replace(tmp, path)
    return vecs
