"""The only LLM interface of lagmem: an OpenAI-compatible Chat Completions client.

Why one interface: the retrieval step and the answer both go through ``complete()`` and
``stream()``, whichever model sits behind them -- OpenAI, any OpenAI-compatible server (Ollama,
vLLM, llama.cpp server, LM Studio), the embedded SmolLM2 server, or a scripted fake injected by
tests. Which server, which model and how patient to be is an :class:`LLMConfig`, read from the
environment by :mod:`assistant.config` (``OPENAI_API_KEY`` alone: OpenAI; ``OPENAI_BASE_URL``: that
server; neither: the embedded model, started on first use by :mod:`assistant.models.local_model`).

What the model can do (structured output, answer temperature, request details, whether lagmem
runs its server) is its :class:`~assistant.models.profile.ModelProfile`, built once from the
configuration (``assistant.models.backends``); this client reads it and never a backend name.

The model that answers is :attr:`LLMClient.model`: the configured name, the profile's default, or
for a compatible server with no ``LAGMEM_MODEL`` the first model the server lists.

Invariant: no ``openai`` or ``httpx2`` exception escapes this module; each is mapped once, in
:func:`map_error`, to :mod:`assistant.errors` with the original kept as ``__cause__``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx2
import openai

from assistant.config import LLMConfig, current
from assistant.errors import (
    BadResponse,
    ContextTooLong,
    LLMError,
    LLMTimeout,
    NoAPIKey,
    RateLimited,
    ServerUnreachable,
)
from assistant.models.backends import profile_for
from assistant.models.profile import ModelProfile
from assistant.stop import StopSignal, StreamWatch

log = logging.getLogger(__name__)

Message = Mapping[str, Any]

MAX_OUTPUT_CHARS = 200_000  # model output accepted per call, whatever max_tokens the server ignored

# How servers say "the prompt does not fit"; OpenAI uses the code, others only prose.
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "exceed_context_size",
)


def _is_context_error(exc: openai.APIStatusError) -> bool:
    body = exc.body if isinstance(exc.body, Mapping) else {}
    code = str(body.get("code") or "")
    text = f"{code} {exc.message}".lower()
    return any(marker in text for marker in _CONTEXT_MARKERS)


def _rejects_temperature(exc: openai.APIStatusError) -> bool:
    """OpenAI's reasoning models accept only their default temperature and say so with HTTP 400
    (``param: "temperature"``, ``code: "unsupported_value"``)."""
    body = exc.body if isinstance(exc.body, Mapping) else {}
    inner = body.get("error", body)
    inner = inner if isinstance(inner, Mapping) else {}
    if inner.get("param") == "temperature":
        return True
    text = f"{inner.get('message') or ''} {exc.message}".lower()
    return "temperature" in text and ("unsupported" in text or "not support" in text)


def _server_detail(exc: openai.APIError) -> str:
    """The server's own words, shortened, for the end of our message."""
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        msg = inner.get("message") if isinstance(inner, Mapping) else inner
        if msg:
            return str(msg)[:300]
    return str(exc.message)[:300]


def map_error(exc: BaseException, *, where: str = "") -> LLMError:
    """Translate an SDK/transport exception into our hierarchy. The caller raises ``from exc``."""
    at = f" ({where})" if where else ""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, openai.APITimeoutError) or isinstance(exc, httpx2.TimeoutException):
        return LLMTimeout()
    if isinstance(exc, openai.APIConnectionError):
        # Mid-stream read timeouts reach us as APIConnectionError caused by a TimeoutException.
        if isinstance(exc.__cause__, httpx2.TimeoutException):
            return LLMTimeout()
        return ServerUnreachable(f"{ServerUnreachable.default_message}{at}")
    if isinstance(exc, httpx2.TransportError):
        return ServerUnreachable(f"The connection to the model server was lost{at}.")
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return NoAPIKey(f"{NoAPIKey.default_message} Server said: {_server_detail(exc)}")
    if isinstance(exc, openai.RateLimitError):
        detail = _server_detail(exc)
        if "quota" in detail.lower():
            return RateLimited(f"The model endpoint says the account is out of quota: {detail}")
        return RateLimited()
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code in (400, 413, 422) and _is_context_error(exc):
            return ContextTooLong(f"{ContextTooLong.default_message} Server said: {_server_detail(exc)}")
        if exc.status_code == 404:
            return BadResponse(f"The model endpoint does not know this model or path{at}: {_server_detail(exc)}")
        if exc.status_code >= 500:
            return BadResponse(f"The model server failed with HTTP {exc.status_code}{at}: {_server_detail(exc)}")
        return BadResponse(
            f"The model endpoint rejected the request (HTTP {exc.status_code}){at}: {_server_detail(exc)}"
        )
    if isinstance(exc, openai.APIError):  # response validation, errors sent inside a stream
        return BadResponse(f"{BadResponse.default_message}{at}: {str(exc)[:300]}")
    if isinstance(exc, (json.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError, ValueError)):
        return BadResponse(f"{BadResponse.default_message}{at}: malformed response ({exc!r:.200})")
    if isinstance(exc, openai.OpenAIError):
        return LLMError(f"{LLMError.default_message}{at}: {exc}")
    raise TypeError(f"not an LLM error: {exc!r}") from exc


class LLMClient:
    """Chat Completions over the ``openai`` package, with our errors and our defaults.

    Thread-safe to share (Streamlit keeps one in ``st.cache_resource``): it keeps no
    per-request state. A model whose server lagmem runs (``profile.serve``) has it started lazily,
    on the first request, not at construction, so building a client is always cheap.
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.profile: ModelProfile = profile_for(config)
        self.backend: str = config.backend  # for people and logs; callers read ``profile``
        self.structured: str = config.structured or self.profile.structured
        self._sdk: openai.OpenAI | None = None
        self._sdk_base: str | None = None
        self._lock = threading.Lock()
        self._model = config.model or self.profile.default_model
        # set once the model refused a temperature: later requests leave it to the model's default
        self._default_temperature_only = False

    # ------------------------------------------------------------------ wiring

    @property
    def model(self) -> str:
        """The model that answers. For a compatible server with no LAGMEM_MODEL, the first
        model the server lists (asked once)."""
        if self._model is None:
            self._model = self._discover_model()
        return self._model

    def _client(self) -> openai.OpenAI:
        serve = self.profile.serve
        # Asked every time (cheap): a server of ours that died is restarted on a new port, and a
        # long-lived client (Streamlit's cache_resource) must follow it there.
        base_url = serve() if serve is not None else self.config.base_url
        with self._lock:
            if self._sdk is None or self._sdk_base != base_url:
                if self._sdk is not None:
                    self._sdk.close()
                api_key = self.config.api_key
                if api_key is None:
                    if self.profile.needs_key:
                        raise NoAPIKey()
                    api_key = "not-needed"  # local servers ignore it; the SDK insists on one
                timeout = httpx2.Timeout(self.config.timeout, connect=min(5.0, self.config.timeout))
                # Our own server on 127.0.0.1 must never be sent through a user's HTTP proxy.
                http_client = openai.DefaultHttpxClient(timeout=timeout, trust_env=False) if serve is not None else None
                self._sdk = openai.OpenAI(
                    api_key=api_key,
                    base_url=base_url or "https://api.openai.com/v1",
                    timeout=timeout,
                    max_retries=self.config.max_retries,
                    http_client=http_client,
                )
                self._sdk_base = base_url
            return self._sdk

    def _limit(self, max_tokens: int) -> dict[str, int]:
        # the profile names the field: OpenAI's newer models refuse `max_tokens`, and compatible
        # servers (llama.cpp, older vLLM/Ollama) may know only `max_tokens`
        return {self.profile.limit_param: max_tokens}

    def _map(self, exc: BaseException, where: str) -> LLMError:
        err = map_error(exc, where=where)
        if self.profile.unreachable and isinstance(err, ServerUnreachable):
            return ServerUnreachable(self.profile.unreachable.format(where=where))
        log.debug("%s: %r mapped to %s", where, exc, type(err).__name__)
        return err

    def _create(self, **kwargs: Any) -> Any:
        """``chat.completions.create``. A model that accepts only its default temperature (OpenAI's
        reasoning models) is asked again without one, once, and not sent one again."""
        if self._default_temperature_only:
            kwargs.pop("temperature", None)
        try:
            return self._client().chat.completions.create(**kwargs)
        except openai.BadRequestError as exc:
            if "temperature" not in kwargs or not _rejects_temperature(exc):
                raise
        self._default_temperature_only = True
        log.info("%s accepts only its default temperature: asked again without one", kwargs.get("model"))
        kwargs.pop("temperature")
        return self._client().chat.completions.create(**kwargs)

    def _discover_model(self) -> str:
        try:
            models = self._client().models.list()
            ids = [m.id for m in models.data]
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise self._map(exc, "asking it for its model; LAGMEM_MODEL names one without asking") from exc
        if not ids:
            raise BadResponse("The model server lists no models; set LAGMEM_MODEL.")
        return ids[0]

    # ------------------------------------------------------------------ requests

    def complete(
        self,
        messages: Sequence[Message],
        *,
        response_format: Mapping[str, Any] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> str:
        """One non-streamed answer, as text. Structured output is the caller's ``response_format``
        (shape per ``self.structured``); the text is returned unparsed."""
        kwargs: dict[str, Any] = self._limit(max_tokens)
        if response_format is not None:
            kwargs["response_format"] = dict(response_format)
        if extra_body:
            kwargs["extra_body"] = dict(extra_body)
        try:
            response = self._create(
                model=self.model,
                messages=list(messages),
                temperature=temperature,
                stream=False,
                **kwargs,
            )
        except (openai.OpenAIError, httpx2.HTTPError, json.JSONDecodeError) as exc:
            raise self._map(exc, "completion") from exc
        try:  # the SDK does not validate shapes: a body without choices surfaces here
            content = response.choices[0].message.content
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise self._map(exc, "completion") from exc
        if not isinstance(content, str):
            raise BadResponse(f"{BadResponse.default_message}: the answer had no text content.")
        if len(content) > MAX_OUTPUT_CHARS:
            raise BadResponse(
                f"The model's answer passed {MAX_OUTPUT_CHARS:,} characters: the server ignored the length limit."
            )
        return content

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 512,
        temperature: float | None = None,
        info: dict | None = None,
        stop: StopSignal | None = None,
    ) -> Iterator[str]:
        """Text deltas as they arrive; ``info``, when given, receives the stream's
        ``finish_reason`` (``"length"``: cut at ``max_tokens``) once it ends. The request is sent
        by this call (so an unreachable server or a rejected prompt raises here, before any text);
        errors mid-stream raise the mapped error from the iterator. A consumer that stops early closes
        the HTTP response.
        ``temperature`` defaults to the profile's answer temperature.

        The whole answer has a deadline (``LLMConfig.deadline``, from this call), besides the
        per-read timeout: past it the response is closed and ``LLMTimeout`` raised, however steadily
        the server trickles tokens or keep-alives. ``stop`` ends it the same way, raising ``Stopped``."""
        started = time.monotonic()
        if temperature is None:
            temperature = self.profile.answer_temperature
        try:
            sdk_stream = self._create(
                model=self.model,
                messages=list(messages),
                temperature=temperature,
                stream=True,
                **self._limit(max_tokens),
            )
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            raise self._map(exc, "starting the answer") from exc
        watch = StreamWatch(sdk_stream, self.config.deadline, started, stop)
        return self._deltas(sdk_stream, info, watch)

    def _deltas(self, sdk_stream: Any, info: dict | None, watch: StreamWatch) -> Iterator[str]:
        finished, size = False, 0
        try:
            for chunk in sdk_stream:
                if watch.why:
                    break
                if not chunk.choices:  # usage-only or keep-alive chunks
                    continue
                choice = chunk.choices[0]
                reason = getattr(choice, "finish_reason", None)
                if reason and info is not None:
                    info["finish_reason"] = reason
                finished = finished or bool(reason)
                delta = choice.delta
                text = getattr(delta, "content", None) if delta is not None else None
                if text:
                    size += len(text)
                    if size > MAX_OUTPUT_CHARS:
                        limit = f"{MAX_OUTPUT_CHARS:,} characters"
                        raise BadResponse(f"The model's answer passed {limit}: the server ignored the length limit.")
                    yield text
            if watch.why:
                raise watch.error()
            if not finished:
                # Every server we target ends with a finish_reason; a stream without one was
                # cut off (connection closed cleanly mid-answer), and a half answer stored as
                # if complete would be worse than an error.
                raise BadResponse("The model's answer was cut off: the stream ended without a finish reason.")
        except (
            openai.OpenAIError,
            httpx2.HTTPError,
            json.JSONDecodeError,
            KeyError,
            IndexError,
            TypeError,
            AttributeError,
        ) as exc:
            if watch.why:  # closed under the reader: the deadline or a Stop, not the server
                raise watch.error() from exc
            raise self._map(exc, "during the answer") from exc
        except (OSError, RuntimeError, ValueError) as exc:  # how a response closed mid-read may end
            if watch.why:
                raise watch.error() from exc
            raise
        finally:
            watch.end()
            sdk_stream.close()

    def describe(self) -> str:
        """One line for the UI: which model answers, and where."""
        return f"{self.model} ({self.profile.where})"


def make_llm(config: LLMConfig | Any | None = None):
    """The single factory the app, the CLI and the tests use.

    ``config`` may be an :class:`LLMConfig`, ``None`` (this process's configuration,
    ``assistant.config.current().llm``), or an already built client (an ``LLMClient`` or a test's
    fake), which is returned as is so callers can inject.
    """
    if config is None:
        config = current().llm
    if not isinstance(config, LLMConfig):
        if hasattr(config, "complete") and hasattr(config, "stream"):
            return config
        raise TypeError(f"make_llm() takes an LLMConfig, a client or None, not {config!r}")
    return LLMClient(config)
