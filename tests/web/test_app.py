"""The two pages, headless (Streamlit's AppTest), with the scripted fake model and hash embeddings
injected through the runtime (``runtime.get_service(llm=..., embedder=...)`` before the page runs). Every test has its
own database (SQLite, or PostgreSQL in the suite's second run), hence its own cached service.
Plus the pages' plain-data helpers (``web.views``, ``web.chat_history``, ``web.inspector_tables``,
``web.why_forgotten``, ``web.chart_series``), tested without Streamlit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from streamlit.testing.v1 import AppTest

from assistant import runtime
from assistant.errors import ServerUnreachable
from assistant.retrieval.step import CiteCheck, RetrievalConfig
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory.types import MemorySettings
from storage.models import CitationRow, Conversation, FeedbackRow, Turn
from web.chart_series import memory_timeline
from web.chat_history import chat_history
from web.inspector_tables import pin_changes
from web.sidebar import import_text
from web.text import md_text
from web.views import load_view
from web.why_forgotten import why_forgotten

APP = str(Path(__file__).parents[2] / "app.py")
INSPECTOR = "pages/inspector_page.py"
TIMEOUT = 30  # the first run opens and migrates the database; later runs take milliseconds


@pytest.fixture
def svc(monkeypatch, db_url):
    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)  # SQLite, or PostgreSQL in the second run
    s = runtime.get_service(llm=FakeLLM(), embedder=HashEmbedder())
    # hash embeddings are not semantic: accept every offered cite so citations are predictable
    s.retrieval = RetrievalConfig(check=CiteCheck(min_similarity=None))
    return s


def literal(markdown: str) -> str:
    """What escaped Markdown renders as: each backslash-escaped character, itself."""
    return re.sub(r"\\(.)", r"\1", markdown)


def app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT).run()


def send(at: AppTest, text: str) -> AppTest:
    at.chat_input[0].set_value(text).run()
    assert not at.exception, at.exception
    return at


def rows(svc, model, **where):
    with Session(svc.store.engine) as s:
        q = select(model).order_by(model.id)  # insertion order (PostgreSQL returns heap order otherwise)
        for k, v in where.items():
            q = q.where(getattr(model, k) == v)
        return list(s.scalars(q))


def small_memory(svc, n: int = 6) -> int:
    """A conversation whose budget forces evictions: lag 1, a few tokens of budget."""
    conv = svc.store.create("small", MemorySettings(budget=40, lag=1))
    for i in range(n):
        svc.ask(
            conv,
            f"fact number {i}: the {['red', 'green', 'blue', 'gold', 'pink', 'grey'][i % 6]} box holds {i * 7} marbles",
        )
    return conv


# ----- the chat page ------------------------------------------------------------------------


def test_send_a_message_see_the_streamed_answer_and_its_citations(svc):
    at = app()
    assert not at.exception
    send(at, "My cat is called Miso.")
    svc.llm.enqueue('{"turns": [1]}', "Your cat is Miso.")
    send(at, "What is my cat called?")
    said = [(m.name, m.markdown[0].value) for m in at.chat_message]
    assert said == [
        ("user", md_text("My cat is called Miso.")),
        ("assistant", "OK."),
        ("user", md_text("What is my cat called?")),
        ("assistant", "Your cat is Miso."),
    ]
    cited = [e for e in at.expander if e.label.startswith("Cited")]
    assert [e.label for e in cited] == ["Cited #1"]
    assert md_text("My cat is called Miso.") in [m.value for m in cited[0].markdown]
    assert [(c.turn, c.answer_turn) for c in rows(svc, CitationRow)] == [(1, 4)]
    # the new conversation took its title from the first message
    assert rows(svc, Conversation)[0].title == "My cat is called Miso."


def test_user_text_is_literal_and_the_models_markdown_is_rendered_safely(svc):
    at = app()
    # first message: nothing to cite, no retrieval call
    svc.llm.enqueue(
        "**Products**\n\n<b>bold</b> :red[alarm] $x$ [click](javascript:alert(1)) "
        "[docs](https://example.org) ![pic](http://example.org/x.png)\n```\n<kept>\n```"
    )
    send(at, "**hi** <script>alert(1)</script> [x](javascript:alert(1))")
    user, answer = at.chat_message[0].markdown[0].value, at.chat_message[1].markdown[0].value
    assert "\\*\\*hi\\*\\*" in user and "\\<script\\>" in user and "\\[x\\]\\(javascript\\:" in user
    assert answer.startswith("**Products**\n\n")  # Markdown kept
    assert "\\<b>bold\\</b>" in answer  # HTML shown as text
    assert "\\:red\\[alarm\\] \\$x\\$" in answer  # no Streamlit directives, no LaTeX
    assert "javascript" not in answer and " click " in answer  # the unsafe link is its text alone
    assert "[docs](https://example.org)" in answer
    assert "\\[image\\: pic\\]" in answer and "example.org/x.png" not in answer  # no image is loaded
    assert "```\n<kept>\n```" in answer  # code stays code


def test_feedback_is_stored_for_the_answer(svc):
    at = app()
    send(at, "hello")
    at.feedback[0].set_value(0).run()  # thumbs down
    assert [(f.answer_turn, f.value) for f in rows(svc, FeedbackRow)] == [(2, -1.0)]
    at.feedback[0].set_value(1).run()
    assert [f.value for f in rows(svc, FeedbackRow)] == [-1.0, 1.0]


def test_a_model_error_keeps_the_message_and_retry_answers_it(svc):
    at = app()
    svc.llm.enqueue(ServerUnreachable())
    send(at, "Are you there?")
    assert [t.role for t in rows(svc, Turn)] == ["user"]  # the message is stored, not lost
    assert any("could not be reached" in e.value for e in at.error)
    retry = [b for b in at.button if b.label == "Retry"]
    assert retry
    svc.llm.enqueue("Yes, I am here.")  # nothing to cite: only the answer is asked for
    retry[0].click().run()
    assert not at.exception
    assert [t.content for t in rows(svc, Turn)] == ["Are you there?", "Yes, I am here."]
    assert not at.error
    assert at.chat_message[-1].markdown[0].value == "Yes, I am here."


def test_an_exchange_that_evicts_says_so_under_the_answer(svc):
    conv = small_memory(svc, 3)
    at = app()
    assert at.session_state["conv_id"] == conv
    send(at, "and one more fact: the tall lamp is broken")
    assert any("left memory" in c.value and "inspector" in c.value for c in at.caption)


def test_settings_are_stored_per_conversation(svc):
    at = app()
    conv = at.session_state["conv_id"]
    budget = [n for n in at.number_input if n.label == "Budget (tokens)"][0]
    budget.set_value(500)
    [s for s in at.selectbox if s.label == "Policy"][0].set_value("lru")
    [c for c in at.checkbox if c.label.startswith("Second chance")][0].check()
    [b for b in at.button if b.label == "Save settings"][0].click().run()
    c = svc.store.conversation(conv)
    assert (c.budget, c.policy, c.auto_restore) == (500, "lru", True)
    other = svc.store.create("other")
    assert svc.store.conversation(other).auto_restore is False  # per conversation, off by default


def test_new_rename_and_delete_with_confirmation(svc):
    at = app()
    first = at.session_state["conv_id"]
    [b for b in at.button if b.label == "New conversation"][0].click().run()
    second = at.session_state["conv_id"]
    assert second != first and len(svc.store.conversations()) == 2
    [t for t in at.text_input if t.label == "Title"][0].set_value("Holiday plans")
    [b for b in at.button if b.label == "Rename"][0].click().run()
    assert svc.store.conversation(second).title == "Holiday plans"
    at.button(key="delete_ask").click().run()
    assert any("cannot be undone" in w.value for w in at.warning)
    assert len(svc.store.conversations()) == 2  # nothing deleted before the confirmation
    at.button(key="delete_yes").click().run()
    assert [c.id for c in svc.store.conversations()] == [first]
    assert at.session_state["conv_id"] == first


def test_import_a_bad_file_shows_the_line_and_stores_nothing(svc):
    at = app()
    before = len(svc.store.conversations())
    bad = b'{"lagmem": 1, "title": "x"}\n{"role": "user", "content": "hi"}\n{"role": "user"}\n'
    at.file_uploader[0].set_value(("broken.jsonl", bad, "application/jsonl")).run()
    assert not at.exception
    # a toast: seen wherever the chat is scrolled to
    assert any("line 3" in t.value and "Nothing was stored" in t.value for t in at.toast)
    assert len(svc.store.conversations()) == before


def test_a_long_file_is_imported_under_a_progress_bar(svc, monkeypatch):
    from web import sidebar

    monkeypatch.setattr(sidebar, "SLOW_LINES", 2)  # this file counts as long
    at = app()
    before = len(svc.store.conversations())
    text = (
        b'{"lagmem": 1, "title": "long"}\n{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "ok"}\n'
    )
    at.file_uploader[0].set_value(("long.jsonl", text, "application/jsonl")).run()
    assert not at.exception, at.exception
    assert any("Imported 2 turns" in t.value for t in at.toast)
    assert len(svc.store.conversations()) == before + 1


def test_export_then_import_round_trips(svc):
    from assistant.replay import export_transcript

    conv = small_memory(svc, 2)
    text = export_transcript(svc.store, conv)
    new, message = import_text(svc, text, "saved.jsonl")
    assert new is not None and "Imported 4 turns" in message
    assert export_transcript(svc.store, new) == text


def test_an_import_reports_its_progress_once_per_percent_up_to_the_whole(svc):
    from assistant.replay import export_transcript

    text = export_transcript(svc.store, small_memory(svc, 2))
    seen: list[float] = []
    new, message = import_text(svc, text, "saved.jsonl", progress=seen.append)
    assert new is not None and "Imported 4 turns" in message
    assert seen == sorted(set(seen)) and seen[-1] == 1.0 and len(seen) >= 2
    assert export_transcript(svc.store, new) == text


# ----- the inspector --------------------------------------------------------------------------


def inspector(svc) -> AppTest:
    at = app()
    at.switch_page(INSPECTOR).run()
    assert not at.exception, at.exception
    return at


def test_inspector_shows_budget_turns_history_and_charts(svc):
    conv = small_memory(svc)
    at = inspector(svc)
    assert at.session_state["conv_id"] == conv
    assert [s.value for s in at.subheader] == ["Turns", "Charts", "Misses", "Eviction history"]
    table = at.data_editor[0].value
    assert list(table.index) == list(range(1, 13)) and "evicted" in set(table["state"])
    history = at.dataframe[-1].value
    assert len(history) == len(svc.store.layer(conv).snapshot().evicted) or len(history) >= 1


def test_inspector_shows_the_conversations_own_calibration(svc):
    small_memory(svc, n=10)  # 20 turns: the fates of some in memory are known
    at = inspector(svc)
    captions = [c.value for c in at.caption if "Calibration from this conversation" in c.value]
    assert len(captions) == 1 and "turns in memory" in captions[0] and "user" in captions[0]


def test_pin_a_turn_from_the_table_is_stored(svc):
    conv = small_memory(svc)
    at = inspector(svc)
    version = svc.store.conversation(conv).version
    key = f"turns-{conv}-{version}-0"  # the first (and only) page
    last = svc.store.layer(conv).turns()[-1].number
    at.session_state[key] = {"edited_rows": {last - 1: {"pinned": True}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert [t.seq for t in rows(svc, Turn, conversation_id=conv, pinned=True)] == [last]
    # the rebuilt table (new key: the conversation's version moved) shows the stored pin
    assert bool(at.data_editor[0].value.loc[last, "pinned"]) is True


def test_pin_and_restore_from_the_turn_details(svc):
    conv = small_memory(svc)
    evicted = svc.store.layer(conv).snapshot().evicted
    assert evicted
    n = evicted[0]
    at = inspector(svc)
    at.number_input(key="detail_pick").set_value(n).run()
    assert any("left memory at step" in t.value for t in at.text)  # why was this forgotten?
    at.button(key=f"restore-{n}").click().run()
    assert not at.exception
    assert rows(svc, Turn, conversation_id=conv, seq=n)[0].state == "active"
    at.button(key=f"pin-{n}").click().run()
    assert rows(svc, Turn, conversation_id=conv, seq=n)[0].pinned


# ----- plain helpers ------------------------------------------------------------------------


def test_timeline_rebuilt_from_records_ends_at_the_current_memory(svc):
    conv = small_memory(svc)
    with svc.store.transaction(conv) as tx:
        gone = tx.layer.snapshot().evicted[0]
        tx.restore(gone)
    view = load_view(svc.store, conv)
    points, markers = memory_timeline(view)
    assert points["step"].tolist() == list(range(1, view.conv.step + 1))
    assert points["tokens"].iloc[-1] == view.layer.used_tokens
    assert set(markers["step"]) == {r.step for r in view.evictions}


def test_why_forgotten_in_plain_words(svc):
    conv = small_memory(svc)
    view = load_view(svc.store, conv)
    r = view.evictions[0]
    text = why_forgotten(view, r.turn)
    assert f"Turn {r.turn}" in text and f"step {r.step}" in text and f"budget of {r.budget}" in text
    assert "Restore" in text or "back in memory" in text
    active = view.layer.snapshot().active[-1]
    assert "has never been forgotten" in why_forgotten(view, active)


def test_pin_changes_maps_editor_positions_to_turn_numbers():
    changes = pin_changes(
        {"0": {"pinned": True}, 2: {"pinned": False}, 1: {"text": "x"}}, [4, 5, 6], {4: False, 5: False, 6: True}
    )
    assert changes == [(4, True), (6, False)]


def test_chat_history_assigns_evictions_to_answers_by_their_cause(store):
    """fifo, lag 0, 10 tokens a turn, a 30-token budget: which turn leaves when is known by hand."""
    conv = store.create("t", MemorySettings(budget=30, lag=0, policy="fifo"))

    def arrive(role):
        with store.transaction(conv) as tx:
            t = tx.add_turn(role, f"{role} message", 10)
            return tx.enforce("arrival", t.number)

    for role in ("user", "assistant", "user"):
        assert arrive(role) == []
    assert [r.turn for r in arrive("assistant")] == [1]  # answer 4 arrives: turn 1 goes
    assert [r.turn for r in arrive("user")] == [2]  # message 5 arrives: turn 2 goes
    with store.transaction(conv) as tx:  # a person restores turn 1 before the answer comes
        assert [r.turn for r in tx.restore(1)] == [3]
    with store.transaction(conv) as tx:  # the answer's unit of work: the second chance, then the answer
        assert [r.turn for r in tx.restore(2, kind="auto_restore")] == [4]
        t = tx.add_turn("assistant", "answer", 10)
        assert [r.turn for r in tx.enforce("arrival", t.number)] == [1]
    view = load_view(store, conv)
    assert [(r.step, r.cause) for r in view.evictions if r.turn == 3] == [(5, "restore")]  # at the message's step
    evicted = {m.number: m.evicted for m in chat_history(view) if m.role == "assistant"}
    # the person's restore at step 5 belongs to no answer, though it happened while 6 was pending
    assert evicted == {2: [], 4: [1], 6: [2, 4, 1]}


def test_a_bad_setting_is_named_on_the_page(monkeypatch):
    monkeypatch.setenv("LAGMEM_DATABASE_URL", "lagmem.db")  # a file name, not a URL
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    # shown literally (Markdown-escaped), a URL's userinfo redacted
    assert [literal(e.value) for e in at.error] == [
        "LAGMEM_DATABASE_URL must be an SQLAlchemy database URL such as sqlite:////path/lagmem.db "
        "or postgresql+psycopg://***@host/db, got 'lagmem.db'"
    ]
    assert not at.chat_input
