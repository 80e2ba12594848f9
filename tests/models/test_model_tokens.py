"""Token counts with the tokenizer of the model in use (``assistant.models.model_tokens``).

Without a model: which counter each backend gets, and a compatible server's ``/tokenize`` over a
real local HTTP server. Marked ``llm``: the embedded model's own counts checked against the prompt
token counts the model itself reports (``usage.prompt_tokens``).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assistant.models import local_model
from assistant.models.llm import LLMConfig, make_llm
from assistant import runtime
from assistant.models.tokens import LocalTokenCounter
from assistant.models.model_tokens import CachedCounter, ServerTokenCounter, exact_counter
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM


def service_counter(llm, db_url):
    """The counter the runtime gives the chat service for this client."""
    return runtime.get_service(db_url, llm=llm, embedder=HashEmbedder()).counter


class _Tokenizing(BaseHTTPRequestHandler):
    """llama.cpp's ``POST /tokenize``: here one token per whitespace-separated word."""

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if self.path != "/tokenize" or not self.server.tokenizes:
            self.send_error(404)
            return
        data = json.dumps({"tokens": list(range(len(body["content"].split())))}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(params=[True, False], ids=["tokenizes", "does-not"])
def server(request):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Tokenizing)
    srv.tokenizes = request.param
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_fakes_and_unknown_models_get_the_labelled_estimate(db_url):
    counter = service_counter(FakeLLM(), db_url)
    assert counter.exact is False and "estimate" in counter.describe()


def test_openai_models_are_counted_exactly_with_tiktoken(db_url):
    counter = service_counter(make_llm(LLMConfig(backend="openai", api_key="sk-test", model="gpt-4o-mini")), db_url)
    assert counter.exact is True and counter.name == "tiktoken:o200k_base"


def test_a_compatible_server_that_tokenizes_is_asked(server, db_url):
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    counter = service_counter(make_llm(LLMConfig(backend="compatible", base_url=url, model="llama3.1")), db_url)
    if server.tokenizes:
        assert isinstance(counter, CachedCounter) and isinstance(counter.counter, ServerTokenCounter)
        assert counter.exact and counter.count("one two three four") == 4
        assert "llama3.1's own tokenizer" in counter.describe()
    else:
        assert counter.exact is False and "estimate" in counter.describe()


@pytest.mark.llm
def test_the_embedded_model_counts_what_it_receives():
    """A budget means what the model receives: the counter agrees with the model's own count of
    a raw prompt, and a chat prompt costs exactly the counted turns plus its template's own
    tokens (the same messages with empty contents)."""
    local_model.stop_server()
    llm = make_llm(LLMConfig(backend="local"))
    counter = exact_counter(llm, LocalTokenCounter)
    assert counter.exact and "own tokenizer" in counter.describe()
    try:
        sdk = llm._client()
        texts = ["My cat is called Miso.", "Où est la gare ? 東京 🚄 ok", "I'm flying to Lisbon on May 3rd, seat 14C."]

        def prompt_tokens(messages) -> int:
            r = sdk.chat.completions.create(model=llm.model, messages=messages, max_tokens=1, temperature=0)
            return r.usage.prompt_tokens

        for text in texts:
            r = sdk.completions.create(model=llm.model, prompt=text, max_tokens=1, temperature=0)
            assert r.usage.prompt_tokens == counter.count(text), text
        roles = ("user", "assistant", "user")
        template_only = prompt_tokens([{"role": r, "content": ""} for r in roles])
        turns = [{"role": r, "content": t} for r, t in zip(roles, texts)]
        assert prompt_tokens(turns) == template_only + sum(counter.count(t) for t in texts)
    finally:
        local_model.stop_server()
