"""Every failure an OpenAI-compatible server can produce (bad requests, refused keys, unknown models,
an unreachable port, malformed bodies and streams) reaches the caller as one of assistant/errors.py,
with the SDK exception as its cause, and each error says what happened in words."""

from __future__ import annotations

import json
import socket

import openai
import pytest

from assistant.errors import (
    BadResponse,
    ContextTooLong,
    LagmemError,
    LLMError,
    LLMTimeout,
    NoAPIKey,
    RateLimited,
    ServerUnreachable,
)
from assistant.models.llm import LLMClient, LLMConfig
from bench.fakes.openai_http import Drop, Raw, Status, StreamError
from tests.models.test_llm import MESSAGES, client_for


@pytest.mark.parametrize(
    "message,code",
    [
        ("This model's maximum context length is 8192 tokens.", "context_length_exceeded"),
        ("Requested tokens (3000) exceed context window of 2048", None),  # llama-cpp-python
    ],
)
def test_context_too_long(fake_openai, message, code):
    fake_openai.fail(400, message, error_code=code)
    with pytest.raises(ContextTooLong) as info:
        client_for(fake_openai).complete(MESSAGES)
    assert isinstance(info.value.__cause__, openai.BadRequestError)
    assert len(fake_openai.completions) == 1  # a 400 is never retried


def test_a_model_that_takes_only_its_default_temperature_is_asked_again_without_one(fake_openai):
    """OpenAI's reasoning models answer a temperature with HTTP 400 (param "temperature")."""
    refusal = Status(
        400,
        "Unsupported value: 'temperature' does not support 0.0 with this model. "
        "Only the default (1) value is supported.",
        error_code="unsupported_value",
        param="temperature",
    )
    fake_openai.responder = lambda req: refusal if "temperature" in (req.body or {}) else "no temperature sent"
    client = client_for(fake_openai, max_retries=0)
    assert client.complete(MESSAGES) == "no temperature sent"
    assert "".join(client.stream(MESSAGES)) == "no temperature sent"
    sent = ["temperature" in (r.body or {}) for r in fake_openai.completions]
    assert sent == [True, False, False]  # refused once, then remembered for every later request


def test_a_temperature_refusal_repeated_without_one_is_an_error_not_a_loop(fake_openai):
    fake_openai.fail(400, "Unsupported value: 'temperature' is not supported", times=3)
    with pytest.raises(BadResponse, match="temperature"):
        client_for(fake_openai, max_retries=0).complete(MESSAGES)
    assert len(fake_openai.completions) == 2  # the first with a temperature, then once without


def test_other_bad_request_is_bad_response_not_context(fake_openai):
    fake_openai.fail(400, "response_format is not supported")
    with pytest.raises(BadResponse, match="response_format is not supported"):
        client_for(fake_openai).stream(MESSAGES)


@pytest.mark.parametrize("code", [401, 403])
def test_auth_failure_is_no_api_key(fake_openai, code):
    fake_openai.fail(code, "Incorrect API key provided")
    with pytest.raises(NoAPIKey, match="Incorrect API key"):
        client_for(fake_openai).complete(MESSAGES)


def test_unknown_model_is_bad_response(fake_openai):
    fake_openai.fail(404, "model 'nope' not found")
    with pytest.raises(BadResponse, match="not found"):
        client_for(fake_openai).complete(MESSAGES)


def test_unreachable_server():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = LLMClient(
        LLMConfig(backend="compatible", base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=1.0, max_retries=0)
    )
    with pytest.raises(ServerUnreachable) as info:
        client.complete(MESSAGES)
    assert isinstance(info.value.__cause__, openai.APIConnectionError)
    with pytest.raises(ServerUnreachable):
        client.stream(MESSAGES)  # the request is sent by the call, so it fails here


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"object": "chat.completion"}',  # no choices
        b'{"choices": []}',
        b'{"choices": [{"message": {"role": "assistant", "content": null}}]}',
    ],
)
def test_malformed_completion_is_bad_response(fake_openai, body):
    fake_openai.enqueue(Raw(body))
    with pytest.raises(BadResponse):
        client_for(fake_openai).complete(MESSAGES)


def test_malformed_sse_is_bad_response(fake_openai):
    fake_openai.enqueue(Raw(b"data: {broken\n\n", content_type="text/event-stream"))
    with pytest.raises(BadResponse):
        list(client_for(fake_openai).stream(MESSAGES))


def test_error_event_mid_stream_is_bad_response(fake_openai):
    fake_openai.enqueue(StreamError("half an ans", message="model crashed"))
    got = []
    with pytest.raises(BadResponse, match="model crashed"):
        for delta in client_for(fake_openai).stream(MESSAGES):
            got.append(delta)
    assert "".join(got) == "half an ans"


def test_connection_dropped_mid_stream(fake_openai):
    fake_openai.enqueue(Drop("cut off here"))
    with pytest.raises((ServerUnreachable, BadResponse)) as info:
        list(client_for(fake_openai).stream(MESSAGES))
    assert isinstance(info.value, LLMError)


def test_stream_without_finish_reason_is_cut_off(fake_openai):
    chunk = {"choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}]}
    fake_openai.enqueue(
        Raw(b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n", content_type="text/event-stream")
    )
    with pytest.raises(BadResponse, match="cut off"):
        list(client_for(fake_openai).stream(MESSAGES))


def test_every_error_has_a_human_message():
    for cls in (LLMError, NoAPIKey, ServerUnreachable, RateLimited, ContextTooLong, BadResponse, LLMTimeout):
        err = cls()
        assert isinstance(err, LagmemError) and isinstance(err, LLMError)
        assert len(str(err)) > 20 and str(err)[0].isupper()
