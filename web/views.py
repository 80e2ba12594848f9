"""Plain data for the pages, the part every view starts from: one conversation read for a page
(``load_view``), a line of text shortened for a table, a policy described in words.

Every view helper (``chat_history`` for the chat; ``inspector_tables``, ``why_forgotten`` and
``chart_series`` for the inspector) takes a view of one conversation read in one read-only session:
what a page shows (``page_view.PageView``) or the whole of it (``load_view``, the store's ``view``),
so one page render shows one consistent moment of the memory, and importance is computed *now* from
the citation log by the conversation's policy (never stored), exactly as the next eviction would.
None of them imports streamlit.
"""

from __future__ import annotations

from assistant.store import MemoryStore, MemoryView
from memory.policies import POLICIES


def policy_description(name: str) -> str:
    factory = POLICIES.get(name)
    return getattr(factory, "description", "") if factory else ""


def shorten(text: str, limit: int = 90) -> str:
    """One line of at most ``limit`` characters (the table's text column; full text on select)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def load_view(store: MemoryStore, conv_id: int, owner: str | None = None) -> MemoryView:
    """One conversation as the pages show it (a signed-in user's store sees only their own)."""
    return store.view(conv_id, owner=owner)
