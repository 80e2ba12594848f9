"""The real LLMClient against a real local HTTP fake of the OpenAI API (bench/fakes/openai_http.py):
the requests it sends, the streamed deltas, bounded retries; and the scripted fake's queue and history.

What is invariant here: configuration follows the user's environment (test_llm_config.py); every
failure a server can produce reaches the caller as one of assistant/errors.py with the SDK exception
as its cause (test_llm_errors.py, test_llm_timeouts.py); retries happen inside the client and are
bounded; streamed text arrives as deltas.
"""

from __future__ import annotations

import json

import openai
import pytest

from assistant.errors import BadResponse, RateLimited, ServerUnreachable
from assistant.models.llm import LLMClient, LLMConfig, make_llm
from bench.fakes.llm import FakeLLM
from bench.fakes.openai_http import FakeOpenAI, Text

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
