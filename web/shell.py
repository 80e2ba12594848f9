"""What the router hands a page for one run: the store, the conversation picked in the sidebar, and
the database's name (answers in progress are keyed by it: conversation ids are per database).

The pages are files (``st.Page("pages/chat_page.py")``), so that Streamlit's AppTest can switch between
them; a file page cannot take arguments, so the router leaves the ``Shell`` for the run in the
session and each page reads it once, at its top, and passes it down explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from assistant.store import MemoryStore

KEY = "lagmem_shell"  # session state: the router's Shell for the current run


@dataclass(frozen=True)
class Shell:
    store: MemoryStore
    conv_id: int
    db: str


def hand_over(shell: Shell) -> None:
    """The router: the Shell the page about to run works on."""
    st.session_state[KEY] = shell


def current() -> Shell:
    """The page: the Shell the router chose for this run."""
    return st.session_state[KEY]
