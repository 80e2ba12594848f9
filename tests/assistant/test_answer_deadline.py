"""A streamed answer has a deadline on the whole, and a Stop: a server that trickles tokens or
keep-alives (every read quick, so the per-read timeout never trips) is cut off, over the real client
and the local HTTP fake; either way nothing of the answer is stored, the question keeps its Retry."""

from __future__ import annotations

import threading
import time

import pytest

from assistant.errors import LLMTimeout, Stopped
from assistant.retrieval.step import CiteCheck, RetrievalConfig
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.openai_http import Text, Trickle
from tests.models.test_llm import client_for


def _service(store, counter, server, deadline: float) -> ChatService:
    llm = client_for(server, timeout=1.0, max_retries=0, deadline=deadline)
    return ChatService(store, llm, HashEmbedder(), counter, retrieval=RetrievalConfig(check=CiteCheck(None)))


def _trickling(server, text: str = "slowly, ever so slowly, one letter at a time") -> None:
    server.responder = lambda req: (
        Trickle(text, interval=0.2, keepalive_s=60) if (req.body or {}).get("stream") else Text('{"turns": []}')
    )


def _roles(store, conv):
    return [(t.seq, t.role) for t in store.view(conv).turns]


def test_a_trickling_answer_is_cut_off_at_the_deadline_and_its_question_kept(store, counter, fake_openai):
    _trickling(fake_openai)
    svc = _service(store, counter, fake_openai, deadline=1.5)
    conv = store.create("t")
    started = time.monotonic()
    with pytest.raises(LLMTimeout, match="LAGMEM_LLM_DEADLINE"):
        svc.ask(conv, "Tell me a story.")
    assert time.monotonic() - started < 6
    assert _roles(store, conv) == [(1, "user")]  # the question is kept, no half answer stored
    fake_openai.responder = lambda req: Text("A short story." if (req.body or {}).get("stream") else '{"turns": []}')
    ex = svc.answer_pending(conv)  # and Retry answers it
    assert ex is not None and ex.run().answer == "A short story."
    assert _roles(store, conv) == [(1, "user"), (2, "assistant")]


def test_stop_ends_the_answer_at_once_and_stores_nothing(store, counter, fake_openai):
    _trickling(fake_openai)
    svc = _service(store, counter, fake_openai, deadline=60)
    conv = store.create("t")
    ex = svc.send(conv, "Tell me a story.")
    stream = ex.stream()
    assert next(stream)  # it has begun
    threading.Timer(0.3, ex.stop).start()
    started = time.monotonic()
    with pytest.raises(Stopped):
        list(stream)
    assert time.monotonic() - started < 2
    assert _roles(store, conv) == [(1, "user")]
    assert svc.answer_pending(conv) is not None  # the question keeps its Retry
