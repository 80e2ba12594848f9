"""Token counts from a compatible server's own tokenizer.

A budget should mean what the model will actually receive, so a server that tokenizes for the model
it serves (llama.cpp's ``POST /tokenize``, llama-cpp-python's ``POST /extras/tokenize/count``) is
asked. :func:`probe_server` asks once, when the counter is chosen (``assistant.models.compatible``);
a server that does not answer there (or answers something else) gets tiktoken's labelled estimate,
never a guess presented as exact. Counts are cached (:class:`CachedCounter`, bounded by bytes,
thread-safe): each is an HTTP round trip.
"""

from __future__ import annotations

import hashlib
import json
import logging
import urllib.error
import urllib.request

from assistant.cache import ByteCache

log = logging.getLogger(__name__)

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
            return len(
                _post(self.root_url + "/tokenize", {"content": text, "add_special": False}, self.timeout)["tokens"]
            )
        out = _post(
            self.root_url + "/extras/tokenize/count",
            {"input": text, "model": self.model, "add_special": False},
            self.timeout,
        )
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
        except (OSError, urllib.error.URLError, ValueError, KeyError, TypeError) as exc:
            # not this route (404, not JSON, another shape): try the next, then estimate
            log.debug("%s%s does not count tokens: %r", counter.root_url, route, exc)
            continue
        if isinstance(n, int) and n > 0:
            return counter
    return None


class CachedCounter:
    """Remembers recent counts of a counter that asks a server: the answer's context counts the
    same turns at every exchange, and each count would otherwise be an HTTP round trip.

    Keyed by a 128-bit digest of the text, never the text (a turn may hold 8 MB), in a thread-safe
    least-recently-used cache bounded by bytes (``assistant.cache.ByteCache``): answer workers and
    page reruns count at once. A text is counted outside the lock; two threads counting the same
    new text both ask the server and store the same number."""

    ENTRY_BYTES = 160  # a digest key, an int and the cache's bookkeeping, per count

    def __init__(self, counter, max_bytes: int = 2_000_000):
        self.counter = counter
        self.name, self.exact = counter.name, counter.exact
        self._counts = ByteCache(max_bytes)

    def count(self, text: str) -> int:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        n = self._counts.get(key)
        if n is None:
            n = self.counter.count(text)
            self._counts.put(key, n, self.ENTRY_BYTES)
        return n

    @property
    def cached_bytes(self) -> int:
        return self._counts.bytes

    def describe(self) -> str:
        return self.counter.describe()
