"""What an action says ("Settings saved", "Renamed", "Conversation deleted", an import refused),
shown as a toast: where the eye is, whatever part of a long chat is on screen.

Actions run in callbacks, before the page redraws, so they queue their message (``flash``) and the
page shows the queue once (``show``). Errors and warnings stay up longer: they must be read.
"""

from __future__ import annotations

import streamlit as st

ICONS = {
    "success": ":material/check_circle:",
    "info": ":material/info:",
    "warning": ":material/warning:",
    "error": ":material/error:",
}


def flash(message: str, kind: str = "info") -> None:
    """A message for the next run of the page."""
    st.session_state.setdefault("flash", []).append((kind, message))


def show() -> None:
    for kind, message in st.session_state.pop("flash", []):
        st.toast(
            message, icon=ICONS.get(kind, ICONS["info"]), duration="long" if kind in ("error", "warning") else "short"
        )
