"""The token counter for the model in use: its own tokenizer wherever it is known.

A budget should mean what the model will actually receive, so turns are counted with:

* the embedded model (backend ``local``): SmolLM2's own tokenizer through the local server
  (``LocalTokenCounter``), exact;
* an OpenAI model tiktoken knows: tiktoken with that model's encoding, exact;
* a compatible server that tokenizes for its model (llama.cpp's ``POST /tokenize``,
  llama-cpp-python's ``POST /extras/tokenize/count``): that server, exact for the model it serves;
* anything else: tiktoken's cl100k_base, labelled an estimate (``describe()`` says which).

``exact_counter`` gives the model's own counter (the first and third cases) or None; the caller
then counts with tiktoken (``assistant.models.tokens``: exact for OpenAI models, else the estimate). This
module imports neither, so the tiktoken side can call it. A compatible server is asked once, when
the counter is chosen; one that does not answer there (or answers something else) gets the
labelled estimate, never a guess presented as exact.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from collections.abc import Callable

from memory.tokens import TokenCounter

PROBE_TIMEOUT = 2.0


def _post(url: str, payload: dict, timeout: float) -> dict:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"content-type": "application/json"})
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=timeout) as resp:
        return json.loads(resp.read())


class ServerTokenCounter:
    """Counts with a compatible server's own tokenizer (one HTTP request per count)."""

    exact = True

    def __init__(self, root_url: str, model: str, route: str, timeout: float = 10.0):
        self.root_url, self.model, self.route, self.timeout = root_url.rstrip("/"), model, route, timeout
        self.name = f"{model} tokenizer (server {route})"

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self.route == "/tokenize":  # llama.cpp's server
            return len(_post(self.root_url + "/tokenize", {"content": text, "add_special": False}, self.timeout)["tokens"])
        out = _post(self.root_url + "/extras/tokenize/count", {"input": text, "model": self.model, "add_special": False}, self.timeout)
        return int(out["count"])

    def describe(self) -> str:
        return f"exact ({self.model}'s own tokenizer, via the server's {self.route})"


def root_of(base_url: str) -> str:
    """``http://host:8080/v1`` -> ``http://host:8080`` (tokenize routes live beside ``/v1``)."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def probe_server(base_url: str, model: str, timeout: float = PROBE_TIMEOUT) -> ServerTokenCounter | None:
    """A counter for the server at ``base_url`` if it tokenizes (checked on a short text)."""
    for route in ("/tokenize", "/extras/tokenize/count"):
        counter = ServerTokenCounter(root_of(base_url), model, route, timeout)
        try:
            n = counter.count("Hello, world")
        except (OSError, urllib.error.URLError, ValueError, KeyError, TypeError):
            continue  # not this route (404, not JSON, another shape): try the next, then estimate
        if isinstance(n, int) and n > 0:
            return counter
    return None


class CachedCounter:
    """Remembers the last counts of a counter that asks a server: the answer's context counts the
    same turns at every exchange, and each count would otherwise be an HTTP round trip."""

    def __init__(self, counter, size: int = 4096):
        self.counter, self.size = counter, size
        self.name, self.exact = counter.name, counter.exact
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._counts.get(text)
        if n is None:
            n = self.counter.count(text)
            if len(self._counts) >= self.size:
                self._counts.pop(next(iter(self._counts)))  # the oldest first
            self._counts[text] = n
        return n

    def describe(self) -> str:
        return self.counter.describe()


def exact_counter(llm, local_counter: Callable[[], TokenCounter]) -> TokenCounter | None:
    """The model's own tokenizer for the client ``llm`` when one is at hand, else None (then the
    caller counts with tiktoken: exact for OpenAI models, a labelled estimate otherwise).

    ``local_counter`` builds the embedded model's counter (asked only for the ``local`` backend);
    a compatible server is asked once whether it tokenizes."""
    backend = getattr(llm, "backend", "")
    if backend == "local":
        return CachedCounter(local_counter())
    base_url = getattr(getattr(llm, "config", None), "base_url", None)
    if backend == "compatible" and base_url:
        server = probe_server(base_url, getattr(llm, "model", None) or "")
        return CachedCounter(server) if server else None
    return None
