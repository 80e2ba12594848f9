"""The running parts a page needs, once per process: the memory store at once, the ChatService in
the background.

Loading the embedding model takes seconds (tens of seconds on a busy 2-core machine), and the pages
can show stored conversations without it, so the service is built in a background thread started on
the first page view; only sending a message waits for it. Both are shared by every session
(``st.cache_resource``), one per database URL (``assistant.config.default_url()``).
"""

from __future__ import annotations

import logging
import threading

import streamlit as st

from assistant import runtime
from assistant.config import default_url
from assistant.errors import LLMError
from assistant.service import ChatService
from assistant.store import MemoryStore, OwnerScope
from web.signin import current_owner

log = logging.getLogger(__name__)

OUR_LOGGERS = ("assistant", "memory", "storage", "web", "pages")


def log_through_streamlit() -> None:
    """Our modules' log lines go through Streamlit's own logging setup: its console format and its
    level (``logger.level`` in .streamlit/config.toml, or ``--logger.level``). They still propagate,
    so any other listener (pytest's capture) hears them too; Streamlit adds no root handler, so
    nothing is printed twice. Idempotent."""
    from streamlit.logger import get_logger

    for name in OUR_LOGGERS:
        get_logger(name).propagate = True


class _Loading:
    """The ChatService for one database, being built in a background thread."""

    def __init__(self, url: str):
        self.url = url
        self.ready = threading.Event()
        self.service: ChatService | None = None
        self.error: BaseException | None = None
        threading.Thread(target=self._load, name="lagmem-load-service", daemon=True).start()

    def _load(self) -> None:
        try:
            self.service = runtime.get_service(self.url)
            # Start the model's server now if lagmem runs one, so the first answer does not also
            # wait for it. A failure is not lost: the first answer retries and shows it with a Retry.
            try:
                self.service.profile.warm_up()
            except LLMError as exc:
                log.warning("the model server did not start ahead of the first answer: %s", exc.message)
        except BaseException as exc:  # shown (and raised) by the page that needs the service
            log.warning("the chat service did not load: %r", exc)
            self.error = exc
        finally:
            self.ready.set()

    def get(self) -> ChatService:
        if not self.ready.is_set():
            with st.spinner("Loading the embedding model and the language model (first time only)…"):
                self.ready.wait()
        if self.service is None:
            _loading.clear()  # the next page view tries again
            raise self.error or RuntimeError("the chat service did not load")
        return self.service


@st.cache_resource(show_spinner=False)
def _loading(url: str) -> _Loading:
    return _Loading(url)


def store() -> MemoryStore:
    """The process's MemoryStore for the configured database (fast: no model is loaded), scoped
    to the signed-in user when sign-in is configured. Pages call ``require_sign_in()`` first.
    Without sign-in, once any conversation has an owner the page stops here with a page saying why:
    the app never runs unscoped over private conversations."""
    url = default_url()
    _loading(url)  # start loading the service in the background on the first page view
    shared = runtime.get_store(url)
    owner = current_owner()
    if owner:
        return OwnerScope(shared, owner)
    if shared.any_owned():  # private conversations exist, but sign-in is off: refuse, do not guess
        st.title("lagmem", anchor=False)
        st.error(
            "This database holds private conversations, but sign-in is not configured (is the app's "
            "secrets file missing?). Configure sign-in to use the app; nothing was shown or changed."
        )
        st.stop()
    return shared


def service() -> ChatService:
    """The process's ChatService (one per database URL, shared by sessions); waits for loading."""
    return _loading(default_url()).get()


def progress() -> _Loading:
    """The background load for the configured database, without waiting: ``ready`` (an Event),
    then ``service`` or ``error`` (for captions that must not wait)."""
    return _loading(default_url())
