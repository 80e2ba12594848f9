"""Builds the running parts from the configuration (``assistant.config``), once per process: the
database (migrated), the memory store, the model client and its profile, the embedder, the token
counter and the ChatService.

The app wraps ``get_service()`` in ``st.cache_resource``; the CLI calls it directly, and prices
turns with :func:`token_counter`, as the app does. Tests inject fakes by calling
``get_service(url, llm=..., embedder=...)`` first: later calls for the same database share that
service.
"""

from __future__ import annotations

import logging
import threading

from assistant.config import current
from assistant.errors import ConfigError
from assistant.models.backends import profile_for
from assistant.models.llm import make_llm
from assistant.models.profile import profile_of
from assistant.redact import redact
from assistant.service import ChatService
from assistant.store import MemoryStore, default_url, open_store
from memory.tokens import TokenCounter
from memory.types import MemorySettings

log = logging.getLogger(__name__)

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
                store.default_settings = default_settings()
            except ConfigError as exc:  # reported to the user when the service is built
                log.warning("new conversations get the memory's default settings: %s", exc.message)
            _stores[url] = store
        return _stores[url]


def default_settings() -> MemorySettings:
    """The settings of new and imported conversations: the configured model's profile says (a
    small model answers faster from a smaller memory)."""
    return profile_for(current().llm).default_settings


def token_counter(llm=None) -> TokenCounter:
    """The token counter for the model in use: the configured model's (``llm`` None) or the
    client ``llm``'s, as its profile declares it. Every shell prices turns here (the app's service,
    ``lagmem import``, ``replay`` and ``whatif``), so a file stores the same token counts whether it
    is imported from the terminal or from the sidebar. The saved-conversation test library names
    its counter explicitly instead, so its snapshots do not follow the machine's configuration."""
    client = make_llm(llm)
    return profile_of(client).counter(client)


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
    profile = profile_of(client)
    if profile.default_budget is not None:  # a client injected for another model than configured
        store.default_settings = profile.default_settings
    svc = ChatService(store, client, embedder or make_embedder(), token_counter(client), profile=profile)
    log.info("answers from %s; token counts: %s", client.model, svc.counter.describe())
    with _lock:
        _services[url] = svc
    return svc


def model_note(svc: ChatService) -> str:
    """Which model answers, what the token counts are and, for a small model, that a larger one
    can be connected: for people."""
    describe = getattr(svc.llm, "describe", None)
    who = redact(describe() if describe else svc.llm.model)  # a server's address may carry credentials
    counts = "exact" if svc.counter.exact else "an estimate"
    note = f"Answers come from {who}. Token counts: {svc.counter.name} ({counts})."
    return f"{note} {svc.profile.upgrade_note}" if svc.profile.upgrade_note else note
