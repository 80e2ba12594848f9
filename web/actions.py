"""The actions that change memory from a page (pin, unpin, restore, feedback), run as callbacks.

Each is an ``on_click``/``on_change`` callback that stores the change at once, so the rerun that
follows already reads the new state from the database: both pages always show what is stored. What
happened (and which turns a pin or restore pushed out) is told on the next run as a toast
(``notices.flash``).
"""

from __future__ import annotations

import streamlit as st

from assistant.store import MemoryStore
from web.notices import flash


def evicted_note(records) -> str:
    """The sentence naming the turns a change pushed out of memory ("" when none)."""
    return (" It pushed " + ", ".join(f"#{r.turn}" for r in records) + " out of memory.") if records else ""


def set_pin(store: MemoryStore, conv_id: int, number: int, want: bool) -> None:
    with store.transaction(conv_id) as tx:
        if want:
            records, refused = tx.pin(number)
        else:
            records, refused = tx.unpin(number), None
    if refused:
        flash(refused, "warning")
    else:
        flash(f"Turn #{number} {'pinned' if want else 'unpinned'}.{evicted_note(records)}", "success")


def restore(store: MemoryStore, conv_id: int, number: int) -> None:
    with store.transaction(conv_id) as tx:
        records = tx.restore(number)
    flash(f"Turn #{number} is back in memory (protected for the lag window).{evicted_note(records)}", "success")


def set_feedback(store: MemoryStore, conv_id: int, answer_turn: int, key: str) -> None:
    value = st.session_state.get(key)
    score = {1: 1.0, 0: -1.0}.get(value, 0.0)  # cleared thumbs: neutral again
    with store.transaction(conv_id) as tx:
        tx.feedback(answer_turn, score)
