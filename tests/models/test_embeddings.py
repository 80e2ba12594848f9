"""The real embedding model: offline, loaded once, normalized, thread-safe; plus the storage format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from assistant.models.embeddings import (
    MODEL_NAME,
    Embedder,
    get_embedder,
    pack_vector,
    unpack_vector,
)
from bench.fakes.embedder import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def embedder():
    return get_embedder()  # the process-wide singleton: loaded once per test session


def test_loaded_once_even_when_raced(embedder):
    got = []
    threads = [threading.Thread(target=lambda: got.append(get_embedder())) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(e is embedder for e in got)
    assert isinstance(embedder, Embedder)
    assert embedder.model_name == MODEL_NAME and embedder.dim == 384
    assert (
        embedder.threads == int(os.environ.get("LAGMEM_EMBED_THREADS", "1") or 1)
        or os.environ.get("LAGMEM_EMBED_THREADS") == "0"
    )


def test_vectors_are_normalized_float32(embedder):
    out = embedder.encode(["I'm flying to Lisbon on May 3rd.", "東京で寿司を食べた 🍣"])
    assert out.shape == (2, 384) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    single = embedder.encode("I'm flying to Lisbon on May 3rd.")
    assert single.shape == (1, 384)
    assert np.allclose(single[0], out[0], atol=1e-5)  # deterministic
    assert embedder.encode([]).shape == (0, 384)


def test_similarity_follows_meaning(embedder):
    message, related, unrelated = embedder.encode(
        ["When does my flight to Lisbon leave?", "I'm flying to Lisbon on May 3rd.", "My cat likes tuna."]
    )
    # unit vectors: cosine similarity is the dot product
    assert float(message @ related) > 0.5 > 0.2 > float(message @ unrelated)


def test_concurrent_encode_matches_sequential(embedder):
    texts = [f"turn number {i} talks about topic {i % 3}" for i in range(12)]
    expected = embedder.encode(texts)
    results: dict[int, np.ndarray] = {}

    def work(i):
        results[i] = embedder.encode(texts[i])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, vec in results.items():
        assert np.allclose(vec, expected[i], atol=1e-5)


def test_pack_roundtrip_and_format(embedder):
    vec = embedder.encode("hello")[0]
    blob = pack_vector(vec)
    assert len(blob) == 384 * 4
    assert np.array_equal(unpack_vector(blob, 384), vec)
    assert pack_vector(np.array([1.0], dtype=">f4")) == b"\x00\x00\x80\x3f"  # little-endian f32
    assert unpack_vector(b"\x00\x00\x80\x3f").flags.writeable
    with pytest.raises(ValueError):
        unpack_vector(blob, 128)
    with pytest.raises(ValueError):
        unpack_vector(b"\x00\x01\x02")
    with pytest.raises(ValueError):
        pack_vector(np.zeros((2, 2)))


def test_hash_embedder_is_a_deterministic_stand_in():
    a, b = HashEmbedder(), HashEmbedder()
    texts = ["Lisbon flight May", "flight to Lisbon", "cat food", ""]
    va, vb = a.encode(texts), b.encode(texts)
    assert np.array_equal(va, vb) and va.shape == (4, 64) and va.dtype == np.float32
    assert np.allclose(np.linalg.norm(va[:3], axis=1), 1.0, atol=1e-6)
    assert not va[3].any()  # empty text: the zero vector, similar to nothing
    assert float(va[0] @ va[1]) > float(va[0] @ va[2])
    assert isinstance(a, Embedder)


OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, socket
    calls = []
    def no_connect(self, address):
        calls.append(str(address))
        raise OSError("network is unreachable in this test")
    socket.socket.connect = no_connect
    from assistant.models.embeddings import get_embedder
    e = get_embedder()
    v = e.encode(["offline check"])
    print(json.dumps({"calls": calls, "shape": list(v.shape)}))
    """
)


def test_loads_with_network_unreachable(tmp_path):
    """A fresh process with an empty home (no HF cache), proxies dead and sockets refused."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(
        HOME=str(tmp_path), HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9", PYTHONPATH=str(ROOT)
    )
    proc = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT], env=env, capture_output=True, text=True, timeout=180, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"calls": [], "shape": [1, 384]}
