"""The pages' view of a conversation, read again only when it changed.

A page reads what it shows (``page_view``); a person switching tabs or waiting on the live refresh
changes nothing stored, so even that is read only when needed. Each session keeps the one view it
drew last, keyed by the conversation's identity, its stored version (every write bumps the version
in its transaction) and what the page asked for (which page of rows, which turn), and checks that
key with a one-row read before each draw. One entry per session: switching conversations replaces
it, so the memory held is one page of one conversation per open tab.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

from assistant.store import MemoryStore, MemoryView
from web.timeline import Timeline

T = TypeVar("T")
SLOT = "page_view"  # session state: (key, view, {name: what was computed from it})
TIMELINE = "page_timeline"  # session state: the inspector's Timeline, extended by what changed


def _key(store: MemoryStore, conv) -> tuple:
    # created_at as well as the id: a deleted conversation's id may be given to a new one
    return (str(store.engine.url), getattr(store, "owner", None), conv.id, conv.created_at, conv.version)


def current_view(
    store: MemoryStore, conv_id: int, read: Callable[[], T] | None = None, asked: Callable[[], Hashable] = tuple
) -> T | MemoryView:
    """The conversation as stored now: the session's last view when its version has not moved
    and the page asks for the same rows (``asked()``: which page, which turn; asked again after a
    read, which may settle a default), else ``read()`` afresh (default: the whole ``store.view``;
    a signed-in user's store sees only their own)."""
    key = _key(store, store.conversation(conv_id)) + (asked(),)
    held = st.session_state.get(SLOT)
    if held is not None and held[0] == key:
        return held[1]
    st.session_state.pop(SLOT, None)  # let the old view go before the new one is read
    view = read() if read is not None else store.view(conv_id)
    st.session_state[SLOT] = (_key(store, view.conv) + (asked(),), view, {})
    return view


def timeline_for(store: MemoryStore, conv) -> Timeline:
    """The session's ``Timeline`` of this conversation (a new one for another conversation)."""
    key = _key(store, conv)[:4]
    held = st.session_state.get(TIMELINE)
    if held is None or held.key != key:
        held = st.session_state[TIMELINE] = Timeline(key)
    return held


def derived(view, name: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per view held (the chart series a draw rebuilds from the whole view);
    computed afresh, and not kept, for any other view."""
    held = st.session_state.get(SLOT)
    if held is None or held[1] is not view:
        return compute()
    if name not in held[2]:
        held[2][name] = compute()
    return held[2][name]
