"""A tiny stdlib fake of the OpenAI Chat Completions API, for ``lagmem loadtest``.

Why here and not ``bench/fakes/openai_http.py``: the load test is a command users run outside pytest,
and ``tests/`` is not an installed package. This one is deliberately smaller: no scripted
failures, just a deterministic, fast model behind a real socket, so a load test measures lagmem
(the client path, the database, the memory layer), not a model.

* A retrieval request (non-streamed) gets ``{"turns": [...]}``: the first two ``[T<n>]`` ids
  offered in the prompt, plus ``999999`` (an id never offered, which the validation must drop).
* An answer request (streamed) gets ``"Noted <tag>: ..."`` where ``<tag>`` is the first
  ``w<i>-x<j>`` word of the last user message, so the load test can tell which answer belongs
  to which message.
"""

from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench.fakes.served import Served

_IDS = re.compile(r"^\[T(\d+)\]", re.MULTILINE)
_TAG = re.compile(r"\bw\d+-x\d+\b")
MODEL = "loadtest-fake"


def retrieval_reply(prompt: str) -> str:
    ids = [int(n) for n in _IDS.findall(prompt)][:2]
    return json.dumps({"turns": ids + [999999]})


def answer_reply(message: str) -> str:
    # the person's message comes last, after any quoted cited turns (which carry their own tags)
    tags = _TAG.findall(message)
    tag = tags[-1] if tags else "?"
    return f"Noted {tag}: this is the fake model's short answer, with a few words to count."


class FakeOpenAIServer(Served):
    """``with FakeOpenAIServer() as srv: srv.base_url`` -- a daemon-threaded server on 127.0.0.1."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._serve(_Server((host, port), _Handler))

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # listen() backlog: 16 writers connect at once (the default 5 refuses some)


def _chunk(delta: dict, finish: str | None = None) -> bytes:
    data = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
    return b"data: " + json.dumps(data).encode() + b"\n\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            data = [{"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, b'{"error": {"message": "bad json"}}')
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        messages = body.get("messages") or [{}]
        last = str(messages[-1].get("content", ""))
        if not body.get("stream"):
            text = retrieval_reply(last)
            payload = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": MODEL,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            self._send(200, json.dumps(payload).encode())
            return
        text = answer_reply(last)
        parts = [_chunk({"role": "assistant", "content": ""})]
        parts += [_chunk({"content": text[i : i + 16]}) for i in range(0, len(text), 16)]
        parts += [_chunk({}, "stop"), b"data: [DONE]\n\n"]
        self._send(200, b"".join(parts), "text/event-stream")
