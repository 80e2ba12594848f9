"""The pages' view of a conversation, read again only when it changed.

Reading a long conversation whole (every turn, eviction record and event) is the linear part of a
draw; a person paging through the inspector, switching tabs or waiting on the live refresh changes
nothing stored. So each session keeps the one view it drew last, keyed by the conversation's
identity and stored version (every write bumps the version in its transaction), and checks that
key with a one-row read before each draw. One entry per session: switching conversations replaces
it, so the memory held is one conversation per open tab.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from ..store import MemoryStore, MemoryView

T = TypeVar("T")
SLOT = "page_view"  # session state: (key, MemoryView, {name: what was computed from it})


def _key(store: MemoryStore, conv) -> tuple:
    # created_at as well as the id: a deleted conversation's id may be given to a new one
    return (str(store.engine.url), getattr(store, "owner", None), conv.id, conv.created_at, conv.version)


def current_view(store: MemoryStore, conv_id: int) -> MemoryView:
    """The conversation as stored now: the session's last view when its version has not moved,
    else read afresh (``store.view``; a signed-in user's store sees only their own)."""
    key = _key(store, store.conversation(conv_id))
    held = st.session_state.get(SLOT)
    if held is not None and held[0] == key:
        return held[1]
    st.session_state.pop(SLOT, None)  # let the old view go before the new one is read
    view = store.view(conv_id)
    st.session_state[SLOT] = (_key(store, view.conv), view, {})
    return view


def derived(view: MemoryView, name: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per view held (the chart series a draw rebuilds from the whole view);
    computed afresh, and not kept, for any other view."""
    held = st.session_state.get(SLOT)
    if held is None or held[1] is not view:
        return compute()
    if name not in held[2]:
        held[2][name] = compute()
    return held[2][name]
