"""The real LLMClient against a real local HTTP fake of the OpenAI API (bench/fakes/openai_http.py).

What is invariant here: configuration follows the user's environment; every failure a server
can produce reaches the caller as one of assistant/errors.py with the SDK exception as its
cause; retries happen inside the client and are bounded; streamed text arrives as deltas.
"""

from __future__ import annotations

import json
import socket
import threading
import time

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
from assistant.models.llm import LLMClient, LLMConfig, make_llm
from bench.fakes.llm import FakeLLM
from bench.fakes.openai_http import (
    Drop,
    FakeOpenAI,
    Hang,
    Raw,
    Status,
    StreamError,
    Text,
    Trickle,
)

MESSAGES = [{"role": "user", "content": "hello"}]


def client_for(server: FakeOpenAI, **overrides) -> LLMClient:
    cfg = dict(
        backend="compatible",
        base_url=server.base_url,
        api_key="sk-fake",
        model="fake-model",
        timeout=1.0,
        max_retries=2,
    )
    cfg.update(overrides)
    return LLMClient(LLMConfig(**cfg))


# ----------------------------------------------------------------------------- configuration


@pytest.fixture
def clean_env(monkeypatch):
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "LAGMEM_MODEL",
        "LAGMEM_LLM",
        "LAGMEM_STRUCTURED",
        "LAGMEM_LLM_TIMEOUT",
        "LAGMEM_LLM_RETRIES",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_nothing_configured_means_embedded_local_model(clean_env):
    cfg = LLMConfig.from_env()
    assert cfg.backend == "local" and cfg.api_key is None and cfg.base_url is None
    client = make_llm(cfg)  # cheap: the server starts on first request, not here
    assert client.backend == "local"
    assert client.structured == "json_object_schema"
    assert client.model


def test_empty_strings_count_as_unset(clean_env):
    clean_env.setenv("OPENAI_API_KEY", "")
    clean_env.setenv("OPENAI_BASE_URL", "  ")
    assert LLMConfig.from_env().backend == "local"


def test_key_alone_means_openai_with_default_model(clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-x")
    cfg = LLMConfig.from_env()
    assert (cfg.backend, cfg.base_url) == ("openai", None)
    client = make_llm(cfg)
    assert client.structured == "json_schema" and client.model


@pytest.mark.parametrize(
    "url,backend",
    [
        ("http://127.0.0.1:11434/v1", "compatible"),
        ("https://api.openai.com/v1", "openai"),
    ],
)
def test_base_url_decides_backend(clean_env, url, backend):
    clean_env.setenv("OPENAI_BASE_URL", url)
    clean_env.setenv("LAGMEM_MODEL", "m")
    cfg = LLMConfig.from_env()
    assert cfg.backend == backend and cfg.model == "m"
    expected = "none" if backend == "compatible" else "json_schema"
    assert make_llm(cfg).structured == expected


def test_structured_mode_can_be_declared_for_a_compatible_server(clean_env):
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    clean_env.setenv("LAGMEM_STRUCTURED", "json_object_schema")
    assert make_llm().structured == "json_object_schema"


def test_lagmem_llm_forces_local(clean_env):
    clean_env.setenv("OPENAI_API_KEY", "sk-x")
    clean_env.setenv("LAGMEM_LLM", "local")
    assert make_llm().backend == "local"
    for bogus in ("bogus", "fake"):  # the scripted fake is injected by tests, never configured
        clean_env.setenv("LAGMEM_LLM", bogus)
        with pytest.raises(ValueError):
            LLMConfig.from_env()


def test_make_llm_passes_an_injected_client_through():
    fake = FakeLLM()
    assert make_llm(fake) is fake


def test_openai_backend_without_key_is_no_api_key():
    client = LLMClient(LLMConfig(backend="openai", model="gpt-4o-mini"))
    with pytest.raises(NoAPIKey, match="OPENAI_API_KEY"):
        client.complete(MESSAGES)


# ----------------------------------------------------------------------------- happy paths


def test_complete_sends_the_request_users_expect(openai_env):
    openai_env.reply("Hi there.")
    client = make_llm()
    assert client.backend == "compatible"
    fmt = {"type": "json_object", "schema": {"type": "object"}}
    text = client.complete(MESSAGES, response_format=fmt, extra_body={"grammar": 'root ::= "x"'}, max_tokens=17)
    assert text == "Hi there."
    (req,) = openai_env.completions
    assert req.body["model"] == "fake-model"
    assert req.body["messages"] == MESSAGES
    assert req.body["max_tokens"] == 17 and req.body["temperature"] == 0.0
    assert req.body["response_format"] == fmt
    assert req.body["grammar"] == 'root ::= "x"'  # extra_body lands at the top level
    assert req.body.get("stream") in (False, None)
    assert req.headers.get("authorization") == "Bearer sk-fake"


def test_json_answer_with_unoffered_ids_is_returned_verbatim(fake_openai):
    # Validation against the offered ids is the retrieval step's job; the client never edits.
    fake_openai.reply_json({"turns": [3, 99]})
    assert json.loads(client_for(fake_openai).complete(MESSAGES)) == {"turns": [3, 99]}


def test_stream_yields_deltas(fake_openai):
    fake_openai.enqueue(Text("The quick brown fox.", chunk_size=4))
    deltas = list(client_for(fake_openai).stream(MESSAGES, max_tokens=33))
    assert len(deltas) == 5 and "".join(deltas) == "The quick brown fox."
    body = fake_openai.completions[0].body
    assert body["stream"] is True and body["max_tokens"] == 33 and body["temperature"] == 0.7


def test_stream_reports_its_finish_reason(fake_openai):
    fake_openai.enqueue(Text("Cut off mid", finish_reason="length"), Text("Whole."))
    client = client_for(fake_openai)
    info: dict = {}
    assert "".join(client.stream(MESSAGES, max_tokens=3, info=info)) == "Cut off mid"
    assert info == {"finish_reason": "length"}
    info = {}
    assert "".join(client.stream(MESSAGES, info=info)) == "Whole." and info == {"finish_reason": "stop"}


def test_stream_closed_early_leaves_client_usable(fake_openai):
    fake_openai.enqueue(Text("a" * 300, chunk_size=1), Text("next"))
    client = client_for(fake_openai)
    it = client.stream(MESSAGES)
    assert next(it) == "a"
    it.close()
    assert client.complete(MESSAGES) == "next"


def test_model_discovered_from_server_when_not_configured(fake_openai):
    fake_openai.models[:] = ["served-model", "other"]
    client = client_for(fake_openai, model=None)
    assert client.model == "served-model"
    client.complete(MESSAGES)
    assert fake_openai.completions[0].body["model"] == "served-model"


# ----------------------------------------------------------------------------- retries


def test_rate_limit_is_retried_then_succeeds(fake_openai):
    fake_openai.fail(429, "slow down", times=2).reply("finally")
    assert client_for(fake_openai).complete(MESSAGES) == "finally"
    assert len(fake_openai.completions) == 3


def test_rate_limit_past_retries_is_rate_limited(fake_openai):
    fake_openai.fail(429, "slow down", times=5)
    with pytest.raises(RateLimited) as info:
        client_for(fake_openai, max_retries=2).complete(MESSAGES)
    assert len(fake_openai.completions) == 3  # one try + two retries, no more
    assert isinstance(info.value.__cause__, openai.RateLimitError)


def test_quota_exhaustion_says_so(fake_openai):
    fake_openai.fail(429, "You exceeded your current quota", times=1, error_code="insufficient_quota")
    with pytest.raises(RateLimited, match="quota"):
        client_for(fake_openai, max_retries=0).complete(MESSAGES)


def test_server_error_is_retried_then_bad_response(fake_openai):
    fake_openai.fail(500, "boom", times=1).reply("recovered")
    assert client_for(fake_openai).complete(MESSAGES) == "recovered"
    fake_openai.fail(500, "boom", times=3)
    with pytest.raises(BadResponse, match="HTTP 500"):
        client_for(fake_openai).complete(MESSAGES)


def test_stream_start_is_retried_on_429(fake_openai):
    fake_openai.fail(429, times=1).enqueue(Text("streamed"))
    assert "".join(client_for(fake_openai).stream(MESSAGES)) == "streamed"


# ----------------------------------------------------------------------------- error mapping


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


def test_hanging_server_times_out(fake_openai):
    fake_openai.enqueue(Hang(5))
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        client_for(fake_openai, timeout=0.3, max_retries=0).complete(MESSAGES)
    assert time.monotonic() - started < 2


def test_timeouts_are_retried(fake_openai):
    fake_openai.enqueue(Hang(5), Text("second try"))
    assert client_for(fake_openai, timeout=0.3, max_retries=1).complete(MESSAGES) == "second try"


def test_stream_hanging_mid_answer_times_out(fake_openai):
    fake_openai.enqueue(Hang(5, then="partial answer here", after_chunks=2))
    it = client_for(fake_openai, timeout=0.3, max_retries=0).stream(MESSAGES)
    got = []
    with pytest.raises(LLMTimeout):
        for delta in it:
            got.append(delta)
    assert "".join(got) == "partia"  # two 3-character chunks, then silence


def test_a_server_that_trickles_tokens_is_cut_off_at_the_deadline(fake_openai):
    """Each read is quick (a token or a keep-alive every 0.1 s), so the per-read timeout never
    trips; the deadline on the whole answer does, and the response is closed."""
    fake_openai.enqueue(Trickle("a very slow answer that would take a long while", interval=0.2, keepalive_s=30))
    client = client_for(fake_openai, timeout=1.0, max_retries=0, deadline=1.5)
    started, got = time.monotonic(), []
    with pytest.raises(LLMTimeout, match="had not finished its answer after 1.5 seconds"):
        for delta in client.stream(MESSAGES):
            got.append(delta)
    assert 1.4 < time.monotonic() - started < 4.0
    assert got and "".join(got) != "a very slow answer that would take a long while"


def test_keep_alives_alone_are_cut_off_at_the_deadline(fake_openai):
    fake_openai.enqueue(Trickle("x", interval=0.2, keepalive_s=30))  # one token, then only keep-alives
    client = client_for(fake_openai, timeout=1.0, max_retries=0, deadline=1.0)
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        list(client.stream(MESSAGES))
    assert time.monotonic() - started < 3.5
    fake_openai.enqueue(Trickle("quick", interval=0.02))  # an answer inside its deadline is whole
    assert "".join(client.stream(MESSAGES)) == "quick"


def test_a_stop_ends_a_trickling_stream_at_once(fake_openai):
    from assistant.errors import Stopped
    from assistant.stop import StopSignal

    fake_openai.enqueue(Trickle("x", interval=0.2, keepalive_s=30))
    stop = StopSignal()
    it = client_for(fake_openai, timeout=1.0, max_retries=0).stream(MESSAGES, stop=stop)
    assert next(it) == "x"
    threading.Timer(0.3, stop.stop).start()
    started = time.monotonic()
    with pytest.raises(Stopped):
        list(it)
    assert time.monotonic() - started < 1.5


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


# ----------------------------------------------------------------------------- the scripted fake


def test_fake_llm_queue_history_and_errors():
    fake = FakeLLM(default=None)
    fake.enqueue("first", RateLimited(), lambda msgs: f"echo {msgs[-1]['content']}")
    fake.enqueue_stream_error("abcdef", ServerUnreachable())
    assert fake.complete(MESSAGES, response_format={"type": "json_object"}) == "first"
    with pytest.raises(RateLimited):
        fake.complete(MESSAGES)
    assert "".join(fake.stream(MESSAGES)) == "echo hello"
    got = []
    with pytest.raises(ServerUnreachable):
        for delta in fake.stream(MESSAGES):
            got.append(delta)
    assert "".join(got) == "abcdef"
    with pytest.raises(AssertionError, match="no reply queued"):
        fake.complete(MESSAGES)
    assert [r.kind for r in fake.history] == ["complete", "complete", "stream", "stream", "complete"]
    assert fake.history[0].response_format == {"type": "json_object"}
    assert (fake.backend, fake.structured) == ("fake", "json_object_schema")


def test_openai_backend_sends_max_completion_tokens(fake_openai):
    # Pointed at our fake but configured as OpenAI: the parameter OpenAI's newer models accept.
    client = client_for(fake_openai, backend="openai")
    client.complete(MESSAGES, max_tokens=9)
    body = fake_openai.completions[0].body
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body
