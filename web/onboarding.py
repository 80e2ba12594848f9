"""The first-run explanation: what lagmem is and what its words mean, on the chat page of an empty
conversation until the person dismisses it (for their session)."""

from __future__ import annotations

import streamlit as st

INTRO = """\
**lagmem is a chat whose memory you can see and steer.**

* **Memory budget**: the model sees only as many tokens of this conversation as the budget allows
  (set it under *Memory settings* in the sidebar). Everything is still stored.
* **Lag**: each new message is *protected* for a few steps, so it is not dropped before anyone
  knows whether it matters.
* **Eviction**: when the memory is over budget, the message that has proved least useful so far
  leaves the model's view. It stays in the database, and you can bring it back.
* **Pin**: a pinned message is never evicted.

Each message shows its number (**#3**); evicted and pinned ones carry a badge that opens them in
the **Memory inspector** (in the page list at the top of the sidebar), where you can pin, restore
and see why something was forgotten.
"""


def show_intro(budget: int, lag: int) -> None:
    if st.session_state.get("intro_dismissed"):
        return
    with st.container(border=True, key="intro"):
        st.markdown(
            INTRO + f"\nThis conversation: a budget of {budget:,} tokens, a lag of {lag} step{'s' if lag != 1 else ''}."
        )
        st.button(
            "Got it",
            key="intro_ok",
            icon=":material/check:",
            on_click=lambda: st.session_state.update(intro_dismissed=True),
        )
