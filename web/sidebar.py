"""The sidebar both pages share: pick, create, rename, delete, export and import conversations;
which model answers; who is signed in.

State across pages: ``st.session_state["conv_id"]`` is the selected conversation (a plain key, so
it survives page switches); widgets get their own keys and are synced from it before they render.
Every change runs in a callback, so the rerun that follows already shows what is stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial

import streamlit as st

from assistant import runtime
from assistant.errors import TooMuchWork
from assistant.replay import export_transcript, per_percent, replay, settings_from
from assistant.service import ChatService
from assistant.store import MemoryStore
from assistant.work_budget import Deadline
from memory import transcript as T
from web import loading
from web.notices import flash
from web.signin import current_owner
from web.text import md_text, show_plain
from web.views import shorten

NEW_TITLE = "New conversation"
SLOW_LINES = 2000  # a file of more lines shows a progress bar while it is imported
IMPORT_SECONDS = 120.0  # an import's time limit inside the page; `lagmem import` has none
IMPORT_HINT = (
    "Lower the budget in the file's header (the memory it keeps is what each turn's arrival measures), "
    "or import it in a terminal with `lagmem import FILE`, which has no time limit."
)
SINGLE_USER_NOTE = (
    "Single-user mode: there is no sign-in, so anyone who can open this address sees and changes these conversations."
)
STRONGER_MODEL_HELP = """\
The embedded model (SmolLM2-135M) needs no key and no network, but it is tiny: its answers and
citations are rough. To use a stronger model, set these before `make run` (or `streamlit run app.py`):

```bash
# OpenAI
export OPENAI_API_KEY=sk-...            # optional: LAGMEM_MODEL=gpt-4o-mini (the default)
# or any OpenAI-compatible server: Ollama, vLLM, llama.cpp server, LM Studio
export OPENAI_BASE_URL=http://localhost:11434/v1
export LAGMEM_MODEL=llama3.1            # the model name that server knows
export OPENAI_API_KEY=anything          # if the server wants one
```
"""


def _select(conv_id: int) -> None:
    st.session_state["conv_id"] = conv_id
    st.session_state["conv_pick"] = conv_id
    st.session_state.pop("confirm_delete", None)


def _new(store: MemoryStore) -> None:
    _select(store.create(NEW_TITLE))


def _picked() -> None:
    st.session_state["conv_id"] = st.session_state["conv_pick"]
    st.session_state.pop("confirm_delete", None)


def _rename(store: MemoryStore, conv_id: int, key: str) -> None:
    title = (st.session_state.get(key) or "").strip()
    if title:
        store.rename(conv_id, title[:200])
        flash(f"Renamed to “{md_text(title[:200])}”.", "success")


def _delete(store: MemoryStore, conv_id: int) -> None:
    store.delete(conv_id)
    st.session_state.pop("conv_id", None)
    st.session_state.pop("confirm_delete", None)
    flash("Conversation deleted.", "success")


def import_text(
    svc: ChatService,
    text: str,
    name: str,
    target: MemoryStore | None = None,
    progress: Callable[[float], None] | None = None,
) -> tuple[int | None, str]:
    """Import a saved conversation: it lands whole or not at all. Returns (id or None, message).
    ``progress(fraction)`` is called as the replay goes (each whole percent once)."""
    try:
        transcript = T.parse(text)
        settings = settings_from(transcript.header, defaults=svc.store.default_settings)
    except T.TranscriptError as exc:
        return None, f"“{name}” was not imported: line {exc.line}: {exc.reason}. Nothing was stored."
    except ValueError as exc:
        return None, f"“{name}” was not imported: {exc}. Nothing was stored."
    # atomic: the conversation and all its turns commit together, or nothing is stored; the layer's
    # work is turns x memory, so inside the page it has a time limit
    deadline = Deadline(IMPORT_SECONDS, f"the import of “{name}”", IMPORT_HINT)
    try:
        log = replay(
            target or svc.store,
            transcript,
            svc.counter,
            settings,
            title=transcript.header.get("title") or T.fit_title(name.rsplit(".", 1)[0]),
            atomic=True,
            deadline=deadline,
            progress=None
            if progress is None
            else per_percent(len(transcript.items), lambda _, pct: progress(pct / 100.0)),
        )
    except TooMuchWork as exc:
        return None, exc.message
    # an import stores no vectors: those of the turns in memory now, the others in the background
    svc.imported(log.conversation_id)
    return log.conversation_id, f"Imported {len(log.turns)} turns from “{name}”."


def _import() -> None:
    key = f"import-{st.session_state.get('import_n', 0)}"
    upload = st.session_state.get(key)
    if upload is None:
        return
    st.session_state["import_n"] = st.session_state.get("import_n", 0) + 1  # a fresh, empty uploader
    try:
        text = upload.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        flash(f"“{md_text(upload.name)}” is not UTF-8 text. Nothing was stored.", "error")
        return
    label = f"Importing “{md_text(upload.name)}”"
    bar = st.progress(0.0, text=label) if text.count("\n") >= SLOW_LINES else None
    try:
        conv_id, message = import_text(
            loading.service(),
            text,
            upload.name,
            target=loading.store(),
            progress=None if bar is None else (lambda f: bar.progress(min(max(f, 0.0), 1.0), text=label)),
        )
    finally:
        if bar is not None:
            bar.empty()
    message = md_text(message)  # it quotes the file's name and text
    if conv_id is None:
        flash(message, "error")
    else:
        _select(conv_id)
        flash(message, "success")


def option_labels(titles: dict[int, str]) -> dict[int, str]:
    """Distinct labels: the browser reports a selectbox's choice by its label, so two
    conversations both called "New conversation" must not look the same."""
    short = {i: shorten(t, 44) for i, t in titles.items()}
    seen = Counter(short.values())
    return {i: (f"{label} · #{i}" if seen[label] > 1 else label) for i, label in short.items()}


def conversation_sidebar(store: MemoryStore) -> int:
    """Pick, create, rename, delete, export and import conversations; returns the selected id."""
    # newest first, in a stable order (not by last change: a list that reorders under the
    # selectbox between runs would move the selection)
    convs = sorted(store.conversations(), key=lambda c: -c.id)
    if not convs:
        store.create(NEW_TITLE)
        convs = store.conversations()
    ids = [c.id for c in convs]
    titles = {c.id: c.title for c in convs}
    labels = option_labels(titles)
    if st.session_state.get("conv_id") not in titles:
        st.session_state["conv_id"] = ids[0]
    st.session_state["conv_pick"] = st.session_state["conv_id"]
    conv_id = st.session_state["conv_id"]
    with st.sidebar:
        st.button("New conversation", icon=":material/add:", on_click=_new, args=(store,), width="stretch")
        st.selectbox(
            "Conversation", ids, key="conv_pick", on_change=_picked, format_func=lambda i: labels.get(i, f"#{i}")
        )
        with st.expander("Rename, delete, export, import"):
            # keyed by the conversation and its stored title: the box always starts from the
            # selected conversation's title (after a switch, a new conversation, a delete, a rename)
            title_key = f"rename_to-{conv_id}-{titles[conv_id]}"
            st.text_input("Title", value=titles[conv_id], key=title_key, max_chars=200)
            st.button("Rename", on_click=_rename, args=(store, conv_id, title_key))
            # the file is written only when the button is pressed (a callable), never on every rerun
            st.download_button(
                "Export (saved-conversation file)",
                partial(export_transcript, store, conv_id),
                file_name=f"lagmem-{conv_id}.jsonl",
                mime="application/jsonl",
                icon=":material/download:",
            )
            st.file_uploader(
                "Import a saved conversation",
                type=["jsonl", "json", "txt"],
                key=f"import-{st.session_state.get('import_n', 0)}",
                on_change=_import,
            )
            if st.session_state.get("confirm_delete") == conv_id:
                st.warning(f"Delete “{md_text(titles[conv_id])}” and its whole memory? This cannot be undone.")
                c1, c2 = st.columns(2)
                c1.button("Delete", type="primary", on_click=_delete, args=(store, conv_id), key="delete_yes")
                c2.button("Cancel", on_click=lambda: st.session_state.pop("confirm_delete", None), key="delete_no")
            else:
                st.button(
                    "Delete…",
                    icon=":material/delete:",
                    key="delete_ask",
                    on_click=lambda: st.session_state.update(confirm_delete=conv_id),
                )
    return conv_id


def _model_note() -> None:
    progress = loading.progress()
    if not progress.ready.is_set():
        st.caption("Loading the models…")
    elif progress.service is None:
        show_plain(f"The models did not load ({progress.error}). Sending a message tries again.")
    else:  # the model's name and a compatible server's address come from settings: literal, redacted
        show_plain(runtime.model_note(progress.service))


def model_panel() -> None:
    """Which model answers (once loaded), how to connect a stronger one, and who is signed in."""
    with st.sidebar:
        # while loading, a fragment polls until the models are ready, so "Loading the models…"
        # is replaced as soon as it stops being true, not at the next click
        st.fragment(run_every=None if loading.progress().ready.is_set() else 1.0)(_model_note)()
        with st.expander("Connect a stronger model"):
            st.markdown(STRONGER_MODEL_HELP)
        owner = current_owner()
        if owner:
            st.caption(f"Signed in as {md_text(owner)}: you see only your own conversations.")
            st.button("Sign out", icon=":material/logout:", on_click=st.logout, key="sign_out")
        else:
            st.caption(SINGLE_USER_NOTE)
