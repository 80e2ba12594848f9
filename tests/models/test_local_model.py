"""The embedded model for real: llama-cpp-python's server running SmolLM2-135M-Instruct.

Marked ``llm``: these start a real model (a second or two) and generate a few dozen tokens.
They assert structure, never wording -- a 135M model's sentences are not a contract; that an
answer exists, that constrained JSON parses and names only offered ids, that errors map, are.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from assistant.config import current
from assistant.errors import ContextTooLong, ServerUnreachable
from assistant.models import local_model
from assistant.models.llm import LLMClient, LLMConfig, make_llm
from assistant.runtime import token_counter

pytestmark = pytest.mark.llm

OFFERED = [3, 7, 12]
RETRIEVAL_PROMPT = [
    {
        "role": "system",
        "content": 'You pick which earlier turns are needed to answer. Reply with JSON: {"turns": [ids]}.',
    },
    {
        "role": "user",
        "content": "[T3] user: my dog is called Rex\n[T7] assistant: nice name\n"
        "[T12] user: I live in Lyon\n\nMessage: what is my dog's name?",
    },
]


@pytest.fixture(scope="module")
def client():
    """One real server for the module, stopped afterwards (not left to atexit)."""
    local_model.stop_server()
    llm = make_llm(LLMConfig(backend="local"))
    assert isinstance(llm, LLMClient) and llm.backend == "local"
    yield llm
    local_model.stop_server()


def test_short_exchange_gives_an_answer(client):
    text = client.complete([{"role": "user", "content": "Say hello."}], max_tokens=24)
    assert isinstance(text, str) and text.strip()
    server = local_model.ensure_server()
    assert server.alive() and server.base_url.startswith("http://127.0.0.1:")
    assert client.model == local_model.MODEL_ALIAS
    # the real server bound a port of its own choosing and lists the model we started
    assert server.process.args[server.process.args.index("--port") + 1] == "0" and server.serves_our_model()


def test_stream_gives_deltas(client):
    deltas = list(client.stream([{"role": "user", "content": "Name a colour."}], max_tokens=16))
    assert deltas and "".join(deltas).strip()


def test_json_object_schema_constrains_ids(client):
    schema = {
        "type": "object",
        "required": ["turns"],
        "properties": {"turns": {"type": "array", "items": {"enum": OFFERED}, "maxItems": 3}},
    }
    text = client.complete(RETRIEVAL_PROMPT, max_tokens=48, response_format={"type": "json_object", "schema": schema})
    ids = json.loads(text)["turns"]
    assert isinstance(ids, list) and set(ids) <= set(OFFERED)


def test_gbnf_grammar_constrains_ids(client):
    grammar = 'root ::= "[" ( id ( ", " id )* )? "]"\nid ::= ' + " | ".join(f'"{i}"' for i in OFFERED) + "\n"
    text = client.complete(RETRIEVAL_PROMPT, max_tokens=24, extra_body={"grammar": grammar})
    ids = json.loads(text)
    assert isinstance(ids, list) and set(ids) <= set(OFFERED)


def test_token_counts_are_exact_and_the_servers_own(client):
    """The app counts in-process with the GGUF's tokenizer; the server it answers from agrees."""
    counter = token_counter(client)
    assert counter.exact and "exact" in counter.describe()
    server = local_model.ensure_server()
    for text in (
        "Eviction as estimation: a fixed-lag smoothing view.",
        "Où est la gare ? 東京 🚄 ok",
        "a <|im_start|> marker and code: def f(x): return x**2",
    ):
        n = counter.count(text)
        assert n == len(server.tokenize(text)) == server.count_tokens(text) and n > 5, text
    assert counter.count("") == 0


def test_prompt_longer_than_context_is_context_too_long(client):
    long = "memory " * (current().local.n_ctx + 200)
    with pytest.raises(ContextTooLong):
        client.complete([{"role": "user", "content": long}], max_tokens=8)


def test_dead_server_is_restarted_on_next_use(client):
    first = local_model.ensure_server()
    first.process.kill()
    first.process.wait(5)
    # The long-lived client follows the restarted server to its new port.
    assert client.complete([{"role": "user", "content": "Hi"}], max_tokens=4) is not None
    second = local_model.ensure_server()
    assert second is not first and second.alive()


def test_a_server_that_dies_while_starting_reports_its_log(tmp_path, monkeypatch):
    junk = tmp_path / "broken.gguf"
    junk.write_bytes(b"not a gguf file")
    monkeypatch.setenv("LAGMEM_LOCAL_MODEL", str(junk))
    with pytest.raises(ServerUnreachable, match="exited with code") as info:
        local_model.start_server(deadline=30)
    assert "Its last output" in str(info.value)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _gone(pid: int) -> bool:
    """Exited, or a zombie (reparented to init and reaped there)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_serve_model_answers_and_does_not_outlive_a_killed_parent():
    """`lagmem serve-model` prints the base URL and serves; SIGKILL skips atexit and finally,
    yet the server process (its child) must notice its parent is gone and exit."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant.models.local_model"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=os.path.dirname(os.path.dirname(__file__)),
    )
    try:
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        served = LLMClient(
            LLMConfig(backend="compatible", base_url=base_url, model=local_model.MODEL_ALIAS, max_retries=0)
        )
        assert served.complete([{"role": "user", "content": "Hi"}], max_tokens=4) is not None
        children = _children(proc.pid)
        assert len(children) == 1
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)
    deadline = time.monotonic() + 10
    while not _gone(children[0]):
        if time.monotonic() > deadline:
            os.kill(children[0], signal.SIGKILL)
            pytest.fail("the model server outlived its parent")
        time.sleep(0.2)


def test_the_server_is_started_with_the_configured_context_and_threads(monkeypatch):
    monkeypatch.setenv("LAGMEM_LOCAL_N_CTX", "1024")
    monkeypatch.setenv("LAGMEM_LOCAL_THREADS", "1")
    server = local_model.start_server(deadline=60)
    try:
        cmd = server.process.args
        assert cmd[cmd.index("--n_ctx") + 1] == "1024" and cmd[cmd.index("--n_threads") + 1] == "1"
        with pytest.raises(ContextTooLong):  # the server holds 1,024 tokens, not the default 4,096
            LLMClient(
                LLMConfig(backend="compatible", base_url=server.base_url, model=local_model.MODEL_ALIAS, max_retries=0)
            ).complete([{"role": "user", "content": "memory " * 1500}], max_tokens=8)
    finally:
        server.stop()
