"""A real local HTTP fake of the OpenAI Chat Completions API, for tests of the client code path.

Why a real server: openai 3.x talks through httpx2, which respx/VCR do not intercept, and a
real socket is the only way to exercise what users hit -- retries on 429/500, read timeouts,
SSE parsing, connection drops, malformed bodies -- through the unmodified ``LLMClient``.

It is a stdlib ``ThreadingHTTPServer`` on 127.0.0.1 and a free port, in a daemon thread. Each
test scripts it with a queue of *actions*, consumed one per ``/v1/chat/completions`` request
(retries consume actions too, which is how retry tests count); when the queue is empty the
``responder`` answers (by default: the text ``"OK."``). Every request is recorded in
``server.requests`` (path, headers, parsed JSON body).

Tests use it through the ``fake_openai`` fixture (a fresh server per test) and ``openai_env``
(points OPENAI_BASE_URL / OPENAI_API_KEY at it), both in ``tests/conftest.py``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.fakes.served import Served

# ---------------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class Text:
    """Answer with this text: a completion object, or SSE chunks when the request streams."""

    text: str
    finish_reason: str = "stop"
    chunk_size: int = 3  # characters per SSE delta


@dataclass(frozen=True)
class Status:
    """Answer with an HTTP error status and an OpenAI-shaped error body."""

    code: int
    message: str = "fake error"
    error_code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    param: str | None = None


@dataclass(frozen=True)
class Hang:
    """Wait ``seconds`` before answering (to trip the client's timeout). With ``after_chunks``,
    a streamed answer sends that many chunks of ``then`` first, then hangs mid-stream."""

    seconds: float
    then: str = "late"
    after_chunks: int = 0


@dataclass(frozen=True)
class Raw:
    """Send these bytes as the body, verbatim (malformed JSON, wrong shapes, broken SSE)."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class StreamError:
    """Stream ``text`` then an ``{"error": ...}`` event, as OpenAI does for mid-stream failures."""

    text: str
    message: str = "the server failed mid-stream"


@dataclass(frozen=True)
class Drop:
    """Stream ``text`` then close the socket without ``[DONE]`` (connection lost mid-answer)."""

    text: str


@dataclass(frozen=True)
class Trickle:
    """Stream ``text`` slowly: one ``chunk_size``-character piece every ``interval`` seconds, an
    SSE keep-alive comment half way between pieces, then ``keepalive_s`` seconds of keep-alives
    alone before the finish. No read waits longer than ``interval``, so a per-read timeout never
    trips: only a deadline on the whole answer ends it (a non-streamed request gets the text)."""

    text: str
    interval: float = 0.1
    chunk_size: int = 1
    keepalive_s: float = 0.0


Action = Text | Status | Hang | Raw | StreamError | Drop | Trickle


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages", []))


# ----------------------------------------------------------------------------------- server


class FakeOpenAI(Served):
    """The scriptable server. ``base_url`` ends in ``/v1`` like OpenAI's."""

    def __init__(self, models: tuple[str, ...] = ("fake-model",)) -> None:
        self.models = list(models)
        self.requests: list[RecordedRequest] = []
        self.responder: Callable[[RecordedRequest], Action | str] = lambda _req: Text("OK.")
        self._actions: deque[Action] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        httpd.daemon_threads = True
        self._serve(httpd)

    # -- lifecycle
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self._stopping.set()  # wakes hanging handlers
        super().stop()

    # -- scripting
    def enqueue(self, *actions: Action | str) -> FakeOpenAI:
        """Queue actions; a plain string means ``Text(string)``."""
        with self._lock:
            self._actions.extend(Text(a) if isinstance(a, str) else a for a in actions)
        return self

    def reply(self, *texts: str) -> FakeOpenAI:
        return self.enqueue(*(Text(t) for t in texts))

    def reply_json(self, obj: Any) -> FakeOpenAI:
        """The assistant message content is ``json.dumps(obj)`` (e.g. the retrieval step's ids,
        including ids that were never offered)."""
        return self.enqueue(Text(json.dumps(obj)))

    def fail(
        self,
        code: int,
        message: str = "fake error",
        *,
        times: int = 1,
        error_code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> FakeOpenAI:
        # retry-after-ms keeps the SDK's backoff at a millisecond, so retry tests stay fast.
        hdrs = {"retry-after-ms": "1", **(headers or {})}
        return self.enqueue(*[Status(code, message, error_code, hdrs) for _ in range(times)])

    @property
    def pending(self) -> int:
        return len(self._actions)

    @property
    def completions(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_action(self, req: RecordedRequest) -> Action:
        with self._lock:
            if self._actions:
                return self._actions.popleft()
        action = self.responder(req)
        return Text(action) if isinstance(action, str) else action


def _completion(model: str, text: str, finish_reason: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    data = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def _pieces(text: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for i in range(0, len(text), size):
        yield text[i : i + size]


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep pytest output clean
            pass

        # -- plumbing
        def _record(self) -> RecordedRequest:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = None
            req = RecordedRequest(self.command, self.path, dict(self.headers.items()), body)
            server.requests.append(req)
            return req

        def _send(
            self,
            status: int,
            body: bytes,
            content_type: str = "application/json",
            headers: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _start_sse(self) -> None:
            # Chunked, like real servers: a socket closed before the last chunk is then a
            # detectable protocol error, not a silent end of body.
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.close_connection = True

        def _sse(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _end_sse(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        # -- routes
        def do_GET(self) -> None:
            self._record()
            if self.path.rstrip("/") == "/v1/models":
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in server.models]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())
            else:
                self._send(404, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            req = self._record()
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            body = req.body or {}
            model = str(body.get("model", "fake-model"))
            streamed = bool(body.get("stream"))
            action = server._next_action(req)
            try:
                self._act(action, model, streamed)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout) before we answered: expected in tests

        def _act(self, action: Action, model: str, streamed: bool) -> None:
            if isinstance(action, Status):
                err = {
                    "error": {
                        "message": action.message,
                        "type": "fake_error",
                        "param": action.param,
                        "code": action.error_code,
                    }
                }
                self._send(action.code, json.dumps(err).encode(), headers=action.headers)
            elif isinstance(action, Raw):
                self._send(action.status, action.body, action.content_type)
            elif isinstance(action, Hang) and not (streamed and action.after_chunks):
                server._stopping.wait(action.seconds)
                self._text(Text(action.then), model, streamed)
            elif isinstance(action, Text):
                self._text(action, model, streamed)
            elif isinstance(action, Trickle):
                self._trickle(action, model) if streamed else self._text(Text(action.text), model, False)
            elif streamed:
                self._broken_stream(action, model)
            else:  # StreamError/Drop asked of a non-streamed request: a plain server error
                self._send(500, b'{"error": {"message": "fake stream-only action"}}')

        def _text(self, action: Text, model: str, streamed: bool) -> None:
            if not streamed:
                payload = _completion(model, action.text, action.finish_reason)
                self._send(200, json.dumps(payload).encode())
                return
            self._start_sse()
            self._sse(_chunk(model, {"role": "assistant", "content": ""}))
            for piece in _pieces(action.text, action.chunk_size):
                self._sse(_chunk(model, {"content": piece}))
            self._sse(_chunk(model, {}, action.finish_reason))
            self._sse(b"data: [DONE]\n\n")
            self._end_sse()

        def _trickle(self, action: Trickle, model: str) -> None:
            self._start_sse()
            half = action.interval / 2
            for piece in _pieces(action.text, action.chunk_size):
                self._sse(_chunk(model, {"content": piece}))
                for _ in range(2):
                    if server._stopping.wait(half):
                        return
                    self._sse(b": keep-alive\n\n")
            until = time.monotonic() + action.keepalive_s
            while time.monotonic() < until:
                if server._stopping.wait(half):
                    return
                self._sse(b": keep-alive\n\n")
            self._sse(_chunk(model, {}, "stop"))
            self._sse(b"data: [DONE]\n\n")
            self._end_sse()

        def _broken_stream(self, action: Action, model: str) -> None:
            self._start_sse()
            if isinstance(action, Hang):
                for i, piece in enumerate(_pieces(action.then, 3)):
                    if i >= action.after_chunks:
                        break
                    self._sse(_chunk(model, {"content": piece}))
                server._stopping.wait(action.seconds)
                return
            assert isinstance(action, (StreamError, Drop))
            for piece in _pieces(action.text, 3):
                self._sse(_chunk(model, {"content": piece}))
            if isinstance(action, StreamError):
                err = {"error": {"message": action.message, "type": "server_error"}}
                self._sse(b"data: " + json.dumps(err).encode() + b"\n\n")
                self._end_sse()
            # Drop: return without [DONE]; the socket closes under the client.

    return Handler
