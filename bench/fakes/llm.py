"""A scripted stand-in for :class:`assistant.models.llm.LLMClient`, for unit tests and headless app tests.

Why: the service, the retrieval step and the Streamlit pages must be testable in milliseconds
and deterministically (AppTest's default timeout is 3 s). ``FakeLLM`` has the same interface as
the real client -- ``model``, ``backend``, ``structured``, ``complete()``, ``stream()`` -- and
answers from a queue, like llm's ``MockModel.enqueue()``. Each call is appended to ``history``
so tests can assert what was asked (the prompt, the response_format, the grammar).

Tests inject it with ``runtime.get_service(url, llm=FakeLLM(), ...)`` (or pass it to
:func:`assistant.models.llm.make_llm`). It never touches the network. It is *not* a test of the client code path;
``bench/fakes/openai_http.py`` (a real local HTTP server) is.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Reply = str | BaseException | Callable[[list[dict[str, Any]]], str]


@dataclass
class FakeRequest:
    """One call the fake received."""

    kind: str  # "complete" | "stream"
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None = None
    extra_body: dict[str, Any] | None = None
    max_tokens: int = 0
    temperature: float = 0.0


@dataclass
class FakeLLM:
    """Queue of replies (text, an exception to raise, or a callable of the messages).

    When the queue is empty, ``default`` answers (a fixed string, so a test that does not care
    about wording need not script every call); set ``default=None`` to make an unscripted call
    fail loudly instead.
    """

    model: str = "fake-model"
    structured: str = "json_object_schema"
    default: str | None = "OK."
    chunk_size: int = 4  # characters per streamed delta
    backend: str = field(default="fake", init=False)
    history: list[FakeRequest] = field(default_factory=list, init=False)
    _queue: deque[Reply] = field(default_factory=deque, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def enqueue(self, *replies: Reply) -> FakeLLM:
        """Add replies in order. An exception instance is raised by the call that takes it; for
        ``stream()`` an exception after text (``[text, exc]`` via :meth:`enqueue_stream_error`)
        is raised mid-stream."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def enqueue_stream_error(self, text: str, error: BaseException) -> FakeLLM:
        """A streamed answer that yields ``text`` and then fails with ``error``."""
        return self.enqueue(_PartialThenError(text, error))

    @property
    def pending(self) -> int:
        return len(self._queue)

    def _next(self, messages: list[dict[str, Any]]) -> str | BaseException | _PartialThenError:
        with self._lock:
            reply = self._queue.popleft() if self._queue else None
        if reply is None:
            if self.default is None:
                raise AssertionError("FakeLLM: no reply queued for this call")
            return self.default
        if callable(reply) and not isinstance(reply, BaseException):
            return reply(messages)
        return reply

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        response_format: Mapping[str, Any] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> str:
        msgs = [dict(m) for m in messages]
        self.history.append(
            FakeRequest(
                "complete",
                msgs,
                dict(response_format) if response_format else None,
                dict(extra_body) if extra_body else None,
                max_tokens,
                temperature,
            )
        )
        reply = self._next(msgs)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, _PartialThenError):
            raise reply.error
        return reply

    def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = 512,
        temperature: float = 0.7,
        info: dict | None = None,
        stop=None,  # the real client closes its response when stopped; here the caller checks
    ) -> Iterator[str]:
        # Record and pick the reply eagerly, like the real client opening its request, so an
        # error "before the stream" is raised by the call, not by the first next().
        msgs = [dict(m) for m in messages]
        self.history.append(FakeRequest("stream", msgs, None, None, max_tokens, temperature))
        reply = self._next(msgs)
        if isinstance(reply, BaseException):
            raise reply
        if info is not None:
            info["finish_reason"] = "length" if isinstance(reply, _Cut) else "stop"
        return self._deltas(reply)

    def enqueue_cut(self, text: str) -> FakeLLM:
        """A streamed answer that ends because it reached ``max_tokens`` (finish reason "length")."""
        return self.enqueue(_Cut(text))

    def _deltas(self, reply: str | _PartialThenError | _Cut) -> Iterator[str]:
        text = reply.text if isinstance(reply, (_PartialThenError, _Cut)) else reply
        step = max(1, self.chunk_size)
        for i in range(0, len(text), step):
            yield text[i : i + step]
        if isinstance(reply, _PartialThenError):
            raise reply.error

    def describe(self) -> str:
        return f"{self.model} (scripted fake)"


@dataclass(frozen=True)
class _Cut:
    text: str


@dataclass(frozen=True)
class _PartialThenError:
    text: str
    error: BaseException
