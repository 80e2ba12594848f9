"""The chat page: the conversation's messages, the message box, answers as they are written.

A thin layout over ``web``: the messages drawn are read from the database whenever the conversation
changed (so a pin made in the inspector shows here at once), and only those: the latest messages and
every question without an answer (a long conversation is not read or drawn whole: "Show earlier
messages"). A sent message goes to the session's outbox (the chat input's callback); the run stores
it (``service.send``: the user's turn is stored before the model is called) and hands the exchange
to a worker thread (``web.answering``), which stores the answer whatever the page does meanwhile.
A message leaves the outbox only once it is stored: one that could not be (any lagmem error) stays
on the page with why, to send again or discard.
While an answer is generated the chat input stays disabled, the page follows the text, and Stop
ends it (nothing of it is stored; the question keeps its Retry and what had been written). A
question left without an answer (a model error) shows "No answer yet" and a Retry, wherever it is.
"""

from __future__ import annotations

import logging
from functools import partial

import streamlit as st

from assistant.errors import LagmemError
from assistant.service import EmptyMessage
from web import answering, notices, onboarding
from web.chat_history import chat_history
from web.chat_view import INSPECTOR, answer_notes, follow, questions, show_message, waiting_note
from web.inspector_tables import budget_summary
from web.loading import progress, service
from web.over_budget import over_budget_text
from web.page_view import chat_view
from web.settings import settings_panel
from web.shell import Shell, current
from web.sidebar import NEW_TITLE
from web.signin import current_owner
from web.text import md_text, show_text
from web.view_cache import current_view
from web.views import shorten

log = logging.getLogger(__name__)

MESSAGES_PER_PAGE = 50  # the chat draws the latest messages; "Show earlier messages" adds as many again
ERRORS = "answer_errors"  # session state: (conversation, user turn) -> the model error that left it unanswered
UNSENT = "unsent"  # session state: conversation -> why the first message of its outbox could not be stored


def render(shell: Shell) -> None:
    store, conv_id = shell.store, shell.conv_id
    st.set_page_config(page_title="lagmem · chat", page_icon=":material/forum:", layout="centered")
    settings_panel(store, conv_id)
    job = answering.current(shell.db, conv_id)
    if job is not None and job.done:
        collect(shell, job)
        job = None
    outbox = st.session_state.setdefault("outbox", {}).setdefault(conv_id, [])
    # rendered before anything slow, disabled while an answer is generated: a second message
    # cannot interrupt the first (one that arrives anyway waits in the outbox)
    st.chat_input(
        "Message lagmem",
        key="chat_box",
        max_chars=200_000,
        submit_mode="disable",
        disabled=job is not None or bool(outbox),
        on_submit=queue_message,
        args=(conv_id,),
    )

    shown = st.session_state.setdefault(f"chat_shown-{conv_id}", MESSAGES_PER_PAGE)
    # the messages drawn, read again only when the stored version moved or more are asked for
    view = current_view(store, conv_id, lambda: chat_view(store, conv_id, shown), lambda: ("chat", shown))
    st.title(md_text(view.conv.title), anchor=False)
    b = budget_summary(view)
    st.caption(
        f"Memory: {view.layer.used_tokens:,} of {view.conv.budget:,} tokens · lag {view.layer.lag} steps · "
        f"{view.conv.policy} policy · step {view.conv.step}"
    )
    warning = over_budget_text(b, view.layer.lag)
    if warning:
        st.warning(warning, icon=":material/warning:")
    cap = context_cap_text(view.layer.used_tokens)
    if cap:
        st.caption(cap)
    notices.show()
    if not view.turn_count:
        onboarding.show_intro(view.conv.budget, view.layer.lag)

    if note := waiting_note(view):
        st.caption(note)
    notes = answer_notes(view)
    asked = questions(view)
    waiting = set(view.waiting) - ({job.user_turn} if job else set())
    errors = st.session_state.get(ERRORS, {})
    for m in chat_history(view, shown_numbers(view, shown, waiting, conv_id)):
        pending = (
            (errors.get((conv_id, m.number)), partial(retry, shell), job is not None or bool(outbox))
            if m.number in waiting
            else None
        )
        show_message(view, m, store, conv_id, notes=notes, reply_to=asked.get(m.number), pending=pending)

    if b["evicted"]:
        st.page_link(INSPECTOR, label="See and steer the memory in the inspector", icon=":material/insights:")

    if job is not None:
        stopping = job.stopped_text is not None
        st.button(
            "Stopping…" if stopping else "Stop",
            key=f"stop-{conv_id}",
            icon=":material/stop_circle:",
            on_click=job.stop,
            disabled=stopping,
            help="End this answer now: nothing of it is stored, and your message keeps its Retry.",
        )
        follow(job, spinner_text())
        collect(shell, job)
        st.rerun()
    elif outbox:
        unsent = st.session_state.setdefault(UNSENT, {})
        if conv_id not in unsent and send(shell, view, outbox):
            st.rerun()
        if conv_id in unsent:
            show_unsent(conv_id, outbox[0], unsent[conv_id])


def context_cap_text(used: int) -> str:
    """When the memory holds more than the answering model may be shown (the service's
    ``context_tokens``), say what it is shown instead. Read without waiting for the models."""
    loaded = progress()
    cap = getattr(loaded.service, "context_tokens", None) if loaded.ready.is_set() else None
    if cap is None or used <= cap:
        return ""
    return (
        f"The model is shown at most about {cap:,} tokens of this memory's {used:,}: the turns the "
        "question cites first, then the newest that fit."
    )


def shown_numbers(view, shown: int, waiting: set[int], conv_id: int) -> set[int]:
    """The latest ``shown`` messages (``MESSAGES_PER_PAGE``, more after each "Show earlier
    messages"), plus the newest questions still without an answer, wherever they are (their Retry
    must stay reachable; ``waiting_note`` counts the rest)."""
    hidden = max(view.turn_count - shown, 0)
    if hidden:
        st.button(
            f"Show earlier messages ({hidden:,} not shown)",
            icon=":material/expand_less:",
            key="show_earlier",
            on_click=lambda: st.session_state.update({f"chat_shown-{conv_id}": shown + MESSAGES_PER_PAGE}),
        )
    return set(view.latest) | waiting


def queue_message(conv: int) -> None:
    """The chat input's callback: keep the message for the run (nothing is sent from a callback)."""
    text = st.session_state.get("chat_box") or ""
    if not text.strip():  # nothing to send, and no empty bubble drawn for it
        notices.flash("The message is empty: nothing was sent.", "warning")
        return
    st.session_state.setdefault("outbox", {}).setdefault(conv, []).append(text)


def send(shell: Shell, view, outbox: list[str]) -> bool:
    """Store the outbox's first message as the user's turn and start its answer in a worker thread.
    The message leaves the outbox only once it is stored: if storing fails (a busy or full
    database, a model that did not load, a setting the memory refuses) it stays, marked ``UNSENT``
    with the reason, for the person to send again or discard. True when it was stored."""
    store, conv_id, text = shell.store, shell.conv_id, outbox[0]
    bubble = st.empty()
    with bubble.container(), st.chat_message("user"):
        show_text(text)
    try:
        ex = service().send(conv_id, text, owner=current_owner())
    except EmptyMessage as exc:  # nothing to keep
        outbox.pop(0)
        notices.flash(str(exc), "warning")
        return True
    except (LagmemError, ValueError) as exc:
        bubble.empty()
        st.session_state[UNSENT][conv_id] = getattr(exc, "message", None) or str(exc)
        log.warning("conversation %d: a message was not stored: %s", conv_id, exc)
        return False
    except Exception:
        bubble.empty()
        st.session_state[UNSENT][conv_id] = "It could not be stored (an unexpected error, in the server's log)."
        raise
    outbox.pop(0)
    if view.conv.title == NEW_TITLE and view.conv.step == 0:
        try:
            store.rename(conv_id, shorten(text, 48))
        except LagmemError as exc:  # the message is stored; only its title waits for the next message
            log.warning("conversation %d: not renamed: %s", conv_id, exc)
    try:
        answering.start(shell.db, ex)
    except answering.Busy:  # another tab's message is being answered: this one is stored, with its Retry
        notices.flash(
            "Another answer in this conversation is being written; your message is stored. "
            "Use its Retry once that answer is in.",
            "warning",
        )
    except answering.Full as exc:  # too many answers at once on this server: stored, with its Retry
        notices.flash(str(exc), "warning")
    return True


def show_unsent(conv_id: int, text: str, why: str) -> None:
    """A message that could not be stored: shown with why, kept until sent again or discarded
    (the message box stays disabled meanwhile, so the order of the messages is kept)."""
    with st.chat_message("user"):
        show_text(text)
        st.error(f"Not sent: {why} The message is kept here.", icon=":material/error:")
        again, drop = st.columns(2)
        again.button(
            "Send again", key=f"resend-{conv_id}", icon=":material/send:", on_click=_resend, args=(conv_id, False)
        )
        drop.button(
            "Discard", key=f"discard-{conv_id}", icon=":material/delete:", on_click=_resend, args=(conv_id, True)
        )


def _resend(conv_id: int, discard: bool) -> None:
    """Send again (the run stores it) or discard the outbox's unsent message."""
    st.session_state.get(UNSENT, {}).pop(conv_id, None)
    outbox = st.session_state.get("outbox", {}).get(conv_id, [])
    if discard and outbox:
        outbox.pop(0)


def retry(shell: Shell, number: int) -> None:
    """A Retry button's callback: answer that question in a worker thread (the run follows it)."""
    conv_id = shell.conv_id
    st.session_state.get(ERRORS, {}).pop((conv_id, number), None)
    if answering.current(shell.db, conv_id) is not None:
        return  # another answer is on its way; the button comes back when it is stored
    ex = service().answer_pending(conv_id, owner=current_owner(), turn=number)
    if ex is not None:
        try:
            answering.start(shell.db, ex)
        except answering.Busy:  # another tab started one meanwhile: the Retry stays
            log.info("conversation %d: turn %d's retry waits, another answer is being written", conv_id, number)
        except answering.Full as exc:  # the Retry stays
            notices.flash(str(exc), "warning")


def collect(shell: Shell, job: answering.Answering) -> None:
    """A finished answer: forget the worker, keep a model error beside its question."""
    answering.collect(shell.db, job.conv_id)
    if job.crash is not None:
        raise job.crash
    if job.error:
        error = job.error
        if job.stopped_text:  # what it had written, as plain text beside the question
            error += f" It had written: “{shorten(job.stopped_text, 2000)}”"
        st.session_state.setdefault(ERRORS, {})[(job.conv_id, job.user_turn)] = error


def spinner_text() -> str:
    note = service().profile.wait_note
    return f"Thinking… {note}" if note else "Thinking…"


render(current())  # the router (app.py) chose the conversation for this run
