"""Streamlit pieces both pages share: the cached service, the conversation sidebar, safe text and
the actions that change memory (pin, unpin, restore, feedback), each stored at once.

State across pages: ``st.session_state["conv_id"]`` is the selected conversation (a plain key, so
it survives page switches); widgets get their own keys and are synced from it before they render.
Changes run in ``on_click``/``on_change`` callbacks, so the rerun that follows already reads the
new state from the database: both pages always show what is stored.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator

import streamlit as st

from memory import transcript as T
from memory.policies import POLICIES
from memory.types import MemorySettings

from .. import runtime
from ..errors import LLMError
from ..replay import export_transcript, replay, settings_from
from ..service import ChatService
from ..store import MemoryStore, OwnerScope, default_url
from .views import policy_description, shorten

NEW_TITLE = "New conversation"
SINGLE_USER_NOTE = ("Single-user mode: there is no sign-in, so anyone who can open this address sees "
                    "and changes these conversations.")
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


# ----- the service, once per process --------------------------------------------------------


class _Loading:
    """The ChatService, built in a background thread: loading the embedding model takes seconds
    (tens of seconds on a busy 2-core machine), and the pages can show stored conversations
    without it. Only sending a message waits for it."""

    def __init__(self, url: str):
        self.url = url
        self.ready = threading.Event()
        self.service: ChatService | None = None
        self.error: BaseException | None = None
        threading.Thread(target=self._load, name="lagmem-load-service", daemon=True).start()

    def _load(self) -> None:
        try:
            self.service = runtime.get_service(self.url)
            if getattr(self.service.llm, "backend", "") == "local":
                # Start the embedded model server now, so the first answer does not also wait for
                # it. A failure is not lost: the first answer retries and shows it with a Retry.
                from ..local_model import ensure_server

                try:
                    ensure_server()
                except LLMError:
                    pass
        except BaseException as exc:  # shown (and raised) by the page that needs the service
            self.error = exc
        finally:
            self.ready.set()

    def get(self) -> ChatService:
        if not self.ready.is_set():
            with st.spinner("Loading the embedding model and the language model (first time only)…"):
                self.ready.wait()
        if self.service is None:
            _loading.clear()  # the next page view tries again
            raise self.error or RuntimeError("the chat service did not load")
        return self.service


@st.cache_resource(show_spinner=False)
def _loading(url: str) -> _Loading:
    return _Loading(url)


def store() -> MemoryStore:
    """The process's MemoryStore for the configured database (fast: no model is loaded), scoped
    to the signed-in user when sign-in is configured."""
    url = default_url()
    _loading(url)  # start loading the service in the background on the first page view
    shared = runtime.get_store(url)
    owner = current_owner()
    if owner:
        return OwnerScope(shared, owner)
    if shared.any_owned():  # private conversations exist, but sign-in is off: refuse, do not guess
        st.title("lagmem", anchor=False)
        st.error("This database holds private conversations, but sign-in is not configured (is the app's "
                 "secrets file missing?). Configure sign-in to use the app; nothing was shown or changed.")
        st.stop()
    return shared


# ----- sign-in (private conversations) ------------------------------------------------------


def auth_configured() -> bool:
    """Sign-in is on when the app's secrets configure ``st.login`` (an ``[auth]`` section)."""
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, KeyError, st.errors.StreamlitSecretNotFoundError):
        return False


def signed_in_user() -> str | None:
    """The signed-in user's stable identity (email, else the provider's subject), or None."""
    if not st.user.is_logged_in:
        return None
    return st.user.get("email") or st.user.get("sub")


def current_owner() -> str | None:
    """None in single-user mode. With sign-in configured, the signed-in user; a visitor who is not
    signed in sees only a sign-in button (the script stops there: nothing else is read)."""
    if not auth_configured():
        return None
    user = signed_in_user()
    if user is None:
        st.title("lagmem", anchor=False)
        st.write("Sign in to see your conversations. Each conversation is private to the person who started it.")
        st.button("Sign in", icon=":material/login:", on_click=st.login, type="primary")
        st.stop()
    return user


def service() -> ChatService:
    """The process's ChatService (one per database URL, shared by sessions); waits for loading."""
    return _loading(default_url()).get()


def service_if_ready() -> ChatService | None:
    loading = _loading(default_url())
    return loading.service if loading.ready.is_set() else None


# ----- text -------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~<$:&])")


def md_text(text: str) -> str:
    """User or model text as Markdown that renders literally: every Markdown (and Streamlit
    directive, LaTeX, HTML-entity) character is escaped, and line breaks are kept."""
    escaped = _MD_SPECIAL.sub(r"\\\1", text)
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")


def md_stream(deltas: Iterable[str]) -> Iterator[str]:
    """Escape a stream chunk by chunk (escaping is per character, so chunks can split anywhere)."""
    for d in deltas:
        yield md_text(d)


def show_text(text: str) -> None:
    st.markdown(md_text(text))


def flash(message: str, kind: str = "info") -> None:
    """A message for the next run (set by callbacks, shown by ``show_flash``)."""
    st.session_state.setdefault("flash", []).append((kind, message))


def show_flash() -> None:
    for kind, message in st.session_state.pop("flash", []):
        getattr(st, kind)(message)


# ----- memory actions (callbacks) -------------------------------------------------------------


def _evicted_note(records) -> str:
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
        flash(f"Turn #{number} {'pinned' if want else 'unpinned'}.{_evicted_note(records)}", "success")


def restore(store: MemoryStore, conv_id: int, number: int) -> None:
    with store.transaction(conv_id) as tx:
        records = tx.restore(number)
    flash(f"Turn #{number} is back in memory (protected for the lag window).{_evicted_note(records)}", "success")


def set_feedback(store: MemoryStore, conv_id: int, answer_turn: int, key: str) -> None:
    value = st.session_state.get(key)
    score = {1: 1.0, 0: -1.0}.get(value, 0.0)  # cleared thumbs: neutral again
    with store.transaction(conv_id) as tx:
        tx.feedback(answer_turn, score)


# ----- the conversation sidebar ---------------------------------------------------------------


def _select(conv_id: int) -> None:
    st.session_state["conv_id"] = conv_id
    st.session_state["conv_pick"] = conv_id
    st.session_state.pop("confirm_delete", None)


def _new(store: MemoryStore) -> None:
    _select(store.create(NEW_TITLE))


def _picked() -> None:
    st.session_state["conv_id"] = st.session_state["conv_pick"]
    st.session_state.pop("confirm_delete", None)


def _rename(store: MemoryStore, conv_id: int) -> None:
    title = (st.session_state.get("rename_to") or "").strip()
    if title:
        store.rename(conv_id, title[:200])
        flash(f"Renamed to “{md_text(title[:200])}”.", "success")


def _delete(store: MemoryStore, conv_id: int) -> None:
    store.delete(conv_id)
    st.session_state.pop("conv_id", None)
    st.session_state.pop("confirm_delete", None)
    flash("Conversation deleted.", "success")


def import_text(svc: ChatService, text: str, name: str, target: MemoryStore | None = None) -> tuple[int | None, str]:
    """Import a saved conversation: it lands whole or not at all. Returns (id or None, message)."""
    try:
        transcript = T.parse(text)
        settings = settings_from(transcript.header)
    except T.TranscriptError as exc:
        return None, f"“{name}” was not imported: line {exc.line}: {exc.reason}. Nothing was stored."
    except ValueError as exc:
        return None, f"“{name}” was not imported: {exc}. Nothing was stored."
    # atomic: the conversation and all its turns commit together, or nothing is stored
    log = replay(target or svc.store, transcript, svc.counter, settings,
                 title=transcript.header.get("title") or name.rsplit(".", 1)[0], atomic=True)
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
    conv_id, message = import_text(service(), text, upload.name, target=store())
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
        st.selectbox("Conversation", ids, key="conv_pick", on_change=_picked,
                     format_func=lambda i: labels.get(i, f"#{i}"))
        with st.expander("Rename, delete, export, import"):
            st.text_input("Title", value=titles[conv_id], key="rename_to", max_chars=200)
            st.button("Rename", on_click=_rename, args=(store, conv_id))
            st.download_button("Export (saved-conversation file)", export_transcript(store, conv_id),
                               file_name=f"lagmem-{conv_id}.jsonl", mime="application/jsonl",
                               icon=":material/download:")
            st.file_uploader("Import a saved conversation", type=["jsonl", "json", "txt"],
                             key=f"import-{st.session_state.get('import_n', 0)}", on_change=_import)
            if st.session_state.get("confirm_delete") == conv_id:
                st.warning(f"Delete “{md_text(titles[conv_id])}” and its whole memory? This cannot be undone.")
                c1, c2 = st.columns(2)
                c1.button("Delete", type="primary", on_click=_delete, args=(store, conv_id), key="delete_yes")
                c2.button("Cancel", on_click=lambda: st.session_state.pop("confirm_delete", None), key="delete_no")
            else:
                st.button("Delete…", icon=":material/delete:", key="delete_ask",
                          on_click=lambda: st.session_state.update(confirm_delete=conv_id))
    return conv_id


def settings_panel(store: MemoryStore, conv_id: int) -> None:
    conv = store.conversation(conv_id)
    with st.sidebar.expander("Memory settings"):
        with st.form(f"settings-{conv_id}", border=False):
            budget = st.number_input("Budget (tokens)", min_value=1, max_value=1_000_000, step=100, value=int(conv.budget),
                                     help="The most tokens of conversation the model sees at once.")
            lag = st.number_input("Lag (steps)", min_value=0, max_value=1000, value=int(conv.lag),
                                  help="How many steps a new turn is protected from eviction while evidence about it accrues.")
            names = list(POLICIES)
            policy = st.selectbox("Policy", names, index=names.index(conv.policy) if conv.policy in names else 0,
                                  format_func=lambda n: f"{n} — {policy_description(n)}")
            second_chance = st.checkbox(
                "Second chance (auto-restore)", value=bool(conv.auto_restore),
                help="When a question is closer to a forgotten turn than to anything in memory, bring "
                     "that turn back instead of only logging the miss.")
            if st.form_submit_button("Save settings"):
                params = dict(conv.policy_params or {}) if policy == conv.policy else {}
                settings = MemorySettings(budget=int(budget), lag=int(lag), policy=policy,
                                          low_watermark=conv.low_watermark, pin_share=conv.pin_share, policy_params=params)
                records = store.update_settings(conv_id, settings, auto_restore=second_chance)
                flash("Memory settings saved." + _evicted_note(records), "success")
                st.rerun()


def model_panel() -> None:
    svc = service_if_ready()
    with st.sidebar:
        st.caption(runtime.model_note(svc) if svc else "Loading the models…")
        with st.expander("Connect a stronger model"):
            st.markdown(STRONGER_MODEL_HELP)
        owner = current_owner()
        if owner:
            st.caption(f"Signed in as {md_text(owner)}: you see only your own conversations.")
            st.button("Sign out", icon=":material/logout:", on_click=st.logout, key="sign_out")
        else:
            st.caption(SINGLE_USER_NOTE)
