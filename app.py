"""lagmem's web app: `streamlit run app.py`. The entry point routes between the chat (here) and
the memory inspector (``pages/``); the conversation picker in the sidebar is shared by both.

The chat page is a thin layout over ``assistant.ui``: the sidebar picks the conversation, the history
is read from the database on every run (so a pin made in the inspector shows here at once), and
one exchange is ``service.send`` (the user's turn is stored before the model is called) followed by
``Exchange.stream`` into ``st.write_stream``. A model failure leaves the stored message without an
answer; the page then shows the error in plain words and a Retry button (``answer_pending``).
"""

from __future__ import annotations

import streamlit as st

from assistant.errors import ConfigError, LLMError
from assistant.service import EmptyMessage, Exchange
from assistant.ui.actions import set_feedback, show_flash
from assistant.ui.loading import service, store as open_store
from assistant.ui.settings import settings_panel
from assistant.ui.sidebar import NEW_TITLE, conversation_sidebar, model_panel
from assistant.ui.signin import current_owner, require_sign_in
from assistant.ui.text import md_stream, md_text, show_text
from assistant.ui.views import Message, chat_history, eviction_line, load_view, pending_user_turn, shorten

INSPECTOR = "pages/1_Memory_inspector.py"


def chat_page() -> None:
    st.set_page_config(page_title="lagmem · chat", page_icon=":material/forum:", layout="centered")
    settings_panel(store, conv_id)
    view = load_view(store, conv_id)
    st.title(md_text(view.conv.title), anchor=False)
    st.caption(f"Memory: {view.layer.used_tokens:,} of {view.conv.budget:,} tokens · lag {view.layer.lag} steps · "
               f"{view.conv.policy} policy · step {view.conv.step}")
    show_flash()
    history = chat_history(view)
    for m in history:
        show_message(view, m)

    if pending_user_turn(view) is not None:
        error = st.session_state.get(f"error-{conv_id}")
        st.error(error or "This message has no answer yet.", icon=":material/error:")
        if st.button("Retry", icon=":material/refresh:", type="primary"):
            st.session_state.pop(f"error-{conv_id}", None)
            ex = service().answer_pending(conv_id, owner=current_owner())
            if ex is not None:
                run_exchange(ex)

    if any(m.evicted for m in history):
        st.page_link(INSPECTOR, label="See and steer the memory in the inspector", icon=":material/insights:")

    if prompt := st.chat_input("Message lagmem", submit_mode="disable", max_chars=200_000):
        with st.chat_message("user"):
            show_text(prompt)
        try:
            ex = service().send(conv_id, prompt, owner=current_owner())
        except EmptyMessage as exc:
            st.warning(str(exc))
            return
        st.session_state.pop(f"error-{conv_id}", None)
        if view.conv.title == NEW_TITLE and view.conv.step == 0:
            store.rename(conv_id, shorten(prompt, 48))
        run_exchange(ex)


def show_message(view, m: Message) -> None:
    with st.chat_message(m.role):
        show_text(m.content)
        if m.role != "assistant":
            return
        if m.cited:
            by = view.by_number
            label = "Cited " + ", ".join(f"#{t}" for t, _ in m.cited)
            with st.expander(label, icon=":material/format_quote:"):
                for t, weight in m.cited:
                    turn = by.get(t)
                    if turn is None:
                        continue
                    state = "in memory" if view.layer.turn(t).active else "evicted"
                    st.caption(f"#{t} · {turn.role} · confidence {weight:.2f} · {state}")
                    show_text(turn.content)
        else:
            st.caption("No earlier turn cited.")
        key = f"fb-{conv_id}-{m.number}"
        default = None if m.feedback in (None, 0.0) else (1 if m.feedback > 0 else 0)
        st.feedback("thumbs", key=key, default=default, on_change=set_feedback, args=(store, conv_id, m.number, key))
        if m.evicted:
            st.caption(eviction_line(m.evicted))


def spinner_text() -> str:
    if getattr(service().llm, "backend", "") == "local":
        return "Thinking… the embedded model's first answer takes a few seconds."
    return "Thinking…"


def run_exchange(ex: Exchange) -> None:
    """Stream one answer; on a model error keep the stored message and offer a retry."""
    with st.chat_message("assistant"):
        gen = ex.stream()
        try:
            with st.spinner(spinner_text()):
                first = next(gen, None)  # the retrieval step and the wait for the first token

            def deltas():
                if first is not None:
                    yield first
                yield from gen

            st.write_stream(md_stream(deltas()))
        except LLMError as exc:
            st.session_state[f"error-{conv_id}"] = exc.message
    st.rerun()


require_sign_in()  # a visitor who is not signed in sees only the sign-in button
try:
    store = open_store()
except ConfigError as exc:  # a bad setting: say which, instead of a traceback
    st.error(exc.message, icon=":material/settings:")
    st.stop()
conv_id = conversation_sidebar(store)
page = st.navigation([
    st.Page(chat_page, title="Chat", icon=":material/forum:", default=True),
    st.Page(INSPECTOR, title="Memory inspector", icon=":material/insights:", url_path="inspector"),
])
page.run()
model_panel()
