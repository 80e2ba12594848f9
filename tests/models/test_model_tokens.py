"""Token counts with the tokenizer of the model in use (``assistant.runtime.token_counter``: each
model's profile says which).

Without a model: which counter each backend gets, a compatible server's ``/tokenize`` over a real
local HTTP server, the embedded model's own tokenizer read from its GGUF file (no server), and the
terminal's and the sidebar's imports of one file storing the same counts. Marked ``llm``: the
embedded model's own counts checked against the prompt token counts the model itself reports
(``usage.prompt_tokens``).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assistant import runtime
from assistant.config import LOCAL_MODEL_ALIAS
from assistant.errors import LLMError
from assistant.models import embedded, local_model
from assistant.models.llm import LLMConfig, make_llm
from assistant.models.model_tokens import CachedCounter, ServerTokenCounter
from assistant.models.tokens import make_token_counter
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM

# texts whose SmolLM2 and cl100k counts differ (so a check that they match can fail)
TEXTS = [
    "My cat is called Miso.",
    "Où est la gare ? 東京 🚄 ok",
    "I'm flying to Lisbon on May 3rd, seat 14C.",
    "def f(x):\n    return x ** 2  # squares",
]


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
    counter = runtime.token_counter(llm)
    assert counter.exact and "own tokenizer" in counter.describe()
    try:
        sdk = llm._client()
        texts = TEXTS[:3]

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


def test_the_embedded_model_is_counted_with_its_own_tokenizer_without_its_server():
    """Nothing configured: the counter is SmolLM2's own tokenizer, read from the GGUF file in this
    process; counting starts no model server (the first message is stored without waiting for it)."""
    local_model.stop_server()
    counter = runtime.token_counter()
    assert counter.exact and counter.name == f"{LOCAL_MODEL_ALIAS} tokenizer"
    assert "own tokenizer" in counter.describe()
    counts = [counter.count(t) for t in TEXTS]
    assert all(n > 0 for n in counts) and counter.count("") == 0
    assert counts != [make_token_counter(LOCAL_MODEL_ALIAS).count(t) for t in TEXTS]  # not cl100k's
    assert local_model._server is None


def test_an_unreadable_model_file_is_a_clear_error(tmp_path):
    junk = tmp_path / "broken.gguf"
    junk.write_bytes(b"not a gguf file")
    with pytest.raises(LLMError, match="tokenizer could not be read"):
        embedded.GGUFTokenCounter(junk).count("hello")


def test_the_terminal_and_the_sidebar_import_a_file_at_the_same_token_counts(tmp_path):
    """With the embedded model, `lagmem import` and the sidebar's import of one file store the same
    token counts (the model's own) and the same default budget."""
    from cli import main as cli
    from web.sidebar import import_text

    saved = tmp_path / "c.jsonl"
    saved.write_text(
        "".join(json.dumps({"role": ("user", "assistant")[i % 2], "content": t}) + "\n" for i, t in enumerate(TEXTS)),
        encoding="utf-8",
    )
    term = f"sqlite:///{tmp_path / 'terminal.db'}"
    assert cli.main(["import", str(saved), "--db", term]) == 0
    svc = runtime.get_service(f"sqlite:///{tmp_path / 'app.db'}", embedder=HashEmbedder())
    conv, message = import_text(svc, saved.read_text(encoding="utf-8"), "c.jsonl")
    assert conv is not None, message

    from_terminal = runtime.get_store(term).layer(1).turns()
    from_sidebar = svc.store.layer(conv).turns()
    assert (
        [t.tokens for t in from_terminal] == [t.tokens for t in from_sidebar] == [svc.counter.count(t) for t in TEXTS]
    )
    assert [t.tokens for t in from_terminal] != [make_token_counter(LOCAL_MODEL_ALIAS).count(t) for t in TEXTS]
    budgets = runtime.get_store(term).conversation(1).budget, svc.store.conversation(conv).budget
    assert budgets == (embedded.DEFAULT_BUDGET, embedded.DEFAULT_BUDGET)
