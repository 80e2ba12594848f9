"""The model's output is bounded: an answer past the character cap is a bad response (complete and
stream), and deeply nested retrieval output is an LLM error, not a recursion error."""

from __future__ import annotations

import pytest

from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from tests.models.test_llm import client_for


def test_model_output_past_the_cap_is_a_bad_response(fake_openai, monkeypatch):
    from assistant.errors import BadResponse
    from assistant.models import llm
    from bench.fakes.openai_http import Text

    monkeypatch.setattr(llm, "MAX_OUTPUT_CHARS", 100)
    client = client_for(fake_openai, timeout=2.0, max_retries=0)
    messages = [{"role": "user", "content": "hi"}]
    fake_openai.reply("x" * 100, "y" * 101)
    assert client.complete(messages) == "x" * 100
    with pytest.raises(BadResponse, match="100 characters"):
        client.complete(messages)
    fake_openai.enqueue(Text("z" * 150, chunk_size=10))
    got = []
    with pytest.raises(BadResponse, match="100 characters"):
        for delta in client.stream(messages):
            got.append(delta)
    assert len("".join(got)) <= 100


def test_deeply_nested_retrieval_output_is_an_llm_error_not_a_recursion_error(store, counter):
    from assistant.errors import BadResponse

    llm = FakeLLM()
    svc = ChatService(store, llm, HashEmbedder(), counter)
    conv = store.create("c")
    svc.ask(conv, "apples grow in the orchard")
    llm.enqueue('{"turns": ' + "[" * 100_000)
    with pytest.raises(BadResponse, match="nested too deeply|characters long"):
        svc.ask(conv, "where do apples grow?")
    llm.enqueue("[" * 5000)
    with pytest.raises(BadResponse, match="nested too deeply"):
        svc.ask(conv, "where do apples grow, again?")
