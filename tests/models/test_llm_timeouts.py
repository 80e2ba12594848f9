"""Time limits on the LLM client: a hanging server times out (and is retried), a stream that stops
mid-answer times out, a server that trickles tokens or keep-alives is cut off at the answer's
deadline, and a stop ends a trickling stream at once."""

from __future__ import annotations

import threading
import time

import pytest

from assistant.errors import LLMTimeout
from bench.fakes.openai_http import Hang, Text, Trickle
from tests.models.test_llm import MESSAGES, client_for


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
