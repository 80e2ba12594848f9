"""How the chat draws its messages: each with its turn number, a badge when it is evicted or pinned
(with a link to that turn in the inspector), the model's Markdown made safe, what an answer cited
and pushed out, and "no answer yet" with a Retry on every question that has no answer.

Which question an answer answers is stored with the answer (its turn's ``reply_to``; a retry of an
earlier question arrives later than the turn after it). The token limit that cut an answer short is
an ``answer`` event's note.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import streamlit as st

from assistant.store import MemoryView
from web.actions import set_feedback
from web.answering import Answering
from web.chat_history import Message, eviction_line
from web.markdown import answer_markdown
from web.text import md_text, show_plain

INSPECTOR = "pages/inspector_page.py"
NO_ANSWER = "No answer yet."


def answer_notes(view: MemoryView) -> dict[int, dict]:
    """Answer turn -> its note (``cut_at``), from the conversation's events."""
    notes: dict[int, dict] = {}
    for e in view.events:
        if e.kind == "answer":
            try:
                notes[e.turn] = json.loads(e.detail or "{}")
            except ValueError:
                continue
    return notes


def questions(view: MemoryView) -> dict[int, int]:
    """Answer turn -> the user turn it answers (the answer's ``reply_to``)."""
    return {t.seq: t.reply_to for t in view.turns if t.role == "assistant" and t.reply_to is not None}


def unanswered(view: MemoryView) -> list[int]:
    """User turns with no answer: a failed or interrupted exchange left them so."""
    answered = set(questions(view).values())
    return [t.seq for t in view.turns if t.role == "user" and t.seq not in answered]


def waiting_note(view) -> str:
    """When more questions have no answer than the chat draws: how many, and which are shown."""
    shown, count = len(view.waiting), getattr(view, "waiting_count", len(view.waiting))
    if count <= shown:
        return ""
    return (
        f"{count:,} questions have no answer (an import of questions alone, or failed exchanges); the newest "
        f"{shown} are shown with a Retry. Asking again answers from the memory as it is now."
    )


def header(view: MemoryView, m: Message, reply_to: int | None) -> str:
    """The message's number and badges, in Streamlit's Markdown (no user text in it)."""
    state = view.layer.turn(m.number)
    parts = [f":gray-badge[#{m.number}]"]
    if not state.active:
        parts.append(":orange-badge[:material/inventory_2: evicted]")
    if state.pinned:
        parts.append(":violet-badge[:material/keep: pinned]")
    if reply_to is not None and reply_to != m.number - 1:
        parts.append(f"answer to #{reply_to}")
    return " ".join(parts)


def show_message(
    view: MemoryView,
    m: Message,
    store,
    conv_id: int,
    *,
    notes: dict[int, dict],
    reply_to: int | None = None,
    pending: tuple[str | None, Callable[[int], None], bool] | None = None,
) -> None:
    """One message. ``pending`` = (error or None, retry callback, retry disabled) for a question
    without an answer."""
    state = view.layer.turn(m.number)
    with st.chat_message(m.role):
        if m.role == "assistant":
            st.markdown(answer_markdown(m.content))
        else:
            st.markdown(md_text(m.content))
        st.caption(header(view, m, reply_to))
        cut = notes.get(m.number, {}).get("cut_at")
        if cut:
            st.caption(f"(cut at {cut} tokens: the answer reached the length limit)")
        if not state.active or state.pinned:
            what = "evicted from memory" if not state.active else "pinned"
            st.page_link(
                INSPECTOR,
                label=f"#{m.number} is {what}: open it in the Memory inspector",
                icon=":material/insights:",
                query_params={"turn": str(m.number)},
            )
        if pending is not None:
            error, retry, disabled = pending
            show_plain(error or NO_ANSWER, kind="error", icon=":material/error:")  # the model's words, not markup
            st.button(
                "Retry",
                key=f"retry-{conv_id}-{m.number}",
                icon=":material/refresh:",
                type="primary",
                on_click=retry,
                args=(m.number,),
                disabled=disabled,
            )
        if m.role == "assistant":
            _answer_details(view, m, store, conv_id)


def _answer_details(view: MemoryView, m: Message, store, conv_id: int) -> None:
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
                st.markdown(md_text(turn.content))
    else:
        st.caption("No earlier turn cited.")
    key = f"fb-{conv_id}-{m.number}"
    default = None if m.feedback in (None, 0.0) else (1 if m.feedback > 0 else 0)
    st.feedback("thumbs", key=key, default=default, on_change=set_feedback, args=(store, conv_id, m.number, key))
    if m.evicted:
        st.caption(eviction_line(m.evicted))


def follow(job: Answering, spinner_text: str) -> None:
    """Show an answer being generated (by its worker) as it arrives; returns when it is stored."""
    with st.chat_message("assistant"):
        box = st.empty()
        deltas = job.follow(idle=True)
        with st.spinner(spinner_text):  # the retrieval step and the wait for the first token
            first = ""
            for first in deltas:
                if first:
                    break
                box.empty()  # control back to Streamlit while the model is silent: a Stop gets through
        text, shown = first or "", 0.0
        for d in deltas:
            text += d
            if time.monotonic() - shown > 0.1:  # redraw at most ten times a second
                box.markdown(answer_markdown(text))
                shown = time.monotonic()
        box.markdown(answer_markdown(text))
