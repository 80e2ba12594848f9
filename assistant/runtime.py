"""Builds the running parts from the configuration (``assistant.config``), once per process: the database (migrated), the
memory store, the model client, the embedder, the token counter and the ChatService.

The app wraps ``get_service()`` in ``st.cache_resource``; the CLI calls it directly. Tests inject
fakes by calling ``get_service(url, llm=..., embedder=...)`` first: later calls for the same
database share that service.
"""

from __future__ import annotations

import threading

from assistant.models.tokens import counter_for
from memory.types import MemorySettings

from assistant.config import current
from assistant.models.llm import make_llm
from assistant.models.model_tokens import exact_counter
from assistant.models.tokens import LocalTokenCounter
from assistant.service import ChatService
from assistant.store import MemoryStore, default_url, open_store

LOCAL_DEFAULT_BUDGET = 1000
_lock = threading.Lock()
_services: dict[str, ChatService] = {}
_stores: dict[str, MemoryStore] = {}


def get_store(url: str | None = None) -> MemoryStore:
    url = url or default_url()
    with _lock:
        if url not in _stores:
            store = open_store(url)
            # decided from the settings now, not when the model is loaded: a conversation created
            # on the first page view (before the service exists) gets the same default budget
            try:
                store.default_settings = default_settings(current().llm.backend)
            except ValueError:  # a bad model setting is reported when the service is built
                pass
            _stores[url] = store
        return _stores[url]


def default_settings(backend: str) -> MemorySettings:
    """The one default for new and imported conversations: the embedded 135M model reads prompts
    slowly on a CPU, so a smaller memory answers faster."""
    return MemorySettings(budget=LOCAL_DEFAULT_BUDGET) if backend == "local" else MemorySettings()


def make_embedder():
    from assistant.models.embeddings import get_embedder

    return get_embedder()


def get_service(url: str | None = None, *, llm=None, embedder=None) -> ChatService:
    """The process's ChatService for ``url`` (built on first use; later calls share it)."""
    url = url or default_url()
    with _lock:
        svc = _services.get(url)
    if svc is not None and llm is None and embedder is None:
        return svc
    store = get_store(url)
    client = make_llm(llm)
    if getattr(client, "backend", "") == "local":
        store.default_settings = default_settings("local")
    counter = exact_counter(client, LocalTokenCounter) or counter_for(client)
    svc = ChatService(store, client, embedder or make_embedder(), counter)
    with _lock:
        _services[url] = svc
    return svc


def model_note(svc: ChatService) -> str:
    """Which model answers and what the token counts are, for people."""
    describe = getattr(svc.llm, "describe", None)
    who = describe() if describe else svc.llm.model
    counts = "exact" if svc.counter.exact else "an estimate"
    return f"Answers come from {who}. Token counts: {svc.counter.name} ({counts})."
