"""The chat as a person uses it, headless (AppTest) with the scripted fake model: no answer is lost
to a second message, every unanswered question has its Retry, messages carry their numbers and
badges, action messages are toasts, the Title box follows the selection, an over-budget memory
says what holds it, a cut answer says so, and the first screen explains the app."""

from __future__ import annotations

import threading
import time

from sqlalchemy import select
from sqlalchemy.orm import Session

from assistant import runtime
from assistant.answering.cleaning import answer_cap
from assistant.errors import ServerUnreachable
from assistant.models import embedded
from bench.fakes.llm import FakeLLM
from memory.policies import POLICIES
from memory.types import MemorySettings
from storage.models import Conversation, MemoryEvent, Turn
from tests.web.test_app import INSPECTOR, app, literal, rows, send, small_memory, svc  # noqa: F401  (svc: fixture)
from web.text import md_text
from web.views import load_view


def turns(svc, conv):
    with Session(svc.store.engine) as s:
        return [
            (t.seq, t.role, t.content)
            for t in s.scalars(select(Turn).where(Turn.conversation_id == conv).order_by(Turn.seq))
        ]


def button(at, label):
    return [b for b in at.button if b.label == label]


# ----- no answer is lost ----------------------------------------------------------------------


def test_a_message_sent_while_an_answer_is_generated_waits_and_both_are_answered(svc):
    from web import answering

    at = app()
    conv = at.session_state["conv_id"]
    gate = threading.Event()
    svc.llm.enqueue(lambda _messages: (gate.wait(20), "The first answer.")[1])  # the model is still writing
    job = answering.start(str(runtime.get_store().engine.url), svc.send(conv, "First question?"))
    assert not job.done
    threading.Timer(1.5, gate.set).start()
    svc.llm.enqueue('{"turns": [1]}', "The second answer.")
    send(at, "Second question?")  # typed while the first answer was still being generated
    assert turns(svc, conv) == [
        (1, "user", "First question?"),
        (2, "assistant", "The first answer."),
        (3, "user", "Second question?"),
        (4, "assistant", "The second answer."),
    ]
    assert not button(at, "Retry")
    assert at.chat_input[0].proto.disabled is False  # usable again once both answers are stored


def test_every_unanswered_question_has_its_retry_which_answers_that_question(svc):
    at = app()
    conv = at.session_state["conv_id"]
    svc.llm.enqueue(ServerUnreachable())
    send(at, "First question?")
    send(at, "Second question?")  # answered: "OK."
    assert [r for _, r, _ in turns(svc, conv)] == ["user", "user", "assistant"]
    # the first question still says why it has no answer, and offers its own Retry
    assert any("could not be reached" in e.value for e in at.error)
    assert [b.key for b in button(at, "Retry")] == [f"retry-{conv}-1"]
    svc.llm.enqueue('{"turns": []}', "The first, answered late.")
    at.button(key=f"retry-{conv}-1").click().run()
    assert not at.exception
    assert turns(svc, conv)[-1] == (4, "assistant", "The first, answered late.")
    assert not button(at, "Retry") and not at.error
    assert "answer to #1" in [c.value for c in at.chat_message[-1].caption][0]
    # each answer stores the question it answers; nothing else (no event) says so
    assert [(t.seq, t.reply_to) for t in rows(svc, Turn, conversation_id=conv) if t.role == "assistant"] == [
        (3, 2),
        (4, 1),
    ]
    assert [(e.kind, e.turn) for e in rows(svc, MemoryEvent, conversation_id=conv)] == []
    assert svc.answer_pending(conv, turn=1) is None  # answered: nothing left to retry


def test_two_failed_questions_are_answered_each_by_its_own_retry(svc):
    at = app()
    conv = at.session_state["conv_id"]
    svc.llm.enqueue(ServerUnreachable())
    send(at, "First question?")
    svc.llm.enqueue('{"turns": []}', ServerUnreachable())  # the retrieval step works, the answer fails
    send(at, "Second question?")
    assert [b.key for b in button(at, "Retry")] == [f"retry-{conv}-1", f"retry-{conv}-2"]
    svc.llm.enqueue('{"turns": []}', "First answer.")
    at.button(key=f"retry-{conv}-1").click().run()
    # turn 3 answers #1, so #2 (just before it) still has no answer, and keeps its Retry
    assert [b.key for b in button(at, "Retry")] == [f"retry-{conv}-2"]
    svc.llm.enqueue('{"turns": []}', "Second answer.")
    at.button(key=f"retry-{conv}-2").click().run()
    assert not button(at, "Retry")
    assert turns(svc, conv)[2:] == [(3, "assistant", "First answer."), (4, "assistant", "Second answer.")]
    captions = [m.caption[0].value for m in at.chat_message]
    assert "answer to #1" in captions[2] and "answer to #2" in captions[3]


def test_a_whitespace_message_leaves_no_bubble(svc):
    at = app()
    send(at, "   \n ")
    assert not at.chat_message
    assert any("empty" in t.value for t in at.toast)
    assert rows(svc, Turn) == []


# ----- what the page says ---------------------------------------------------------------------


def test_the_first_screen_explains_the_app_until_dismissed(svc):
    at = app()
    text = " ".join(m.value for m in at.markdown)
    for word in ("Memory budget", "Lag", "Eviction", "Pin", "Memory inspector"):
        assert word in text
    conv = svc.store.conversation(at.session_state["conv_id"])
    assert f"a budget of {conv.budget:,} tokens, a lag of {conv.lag} steps" in text
    at.button(key="intro_ok").click().run()
    assert "Memory budget" not in " ".join(m.value for m in at.markdown)


def test_messages_show_their_numbers_and_evicted_ones_link_to_the_inspector(svc):
    conv = small_memory(svc, 3)
    at = app()
    layer = svc.store.layer(conv)
    gone = layer.snapshot().evicted
    assert gone
    headers = [m.caption[0].value for m in at.chat_message]
    assert [h.split("]")[0] for h in headers] == [f":gray-badge[#{n}" for n in range(1, 7)]
    for n in range(1, 7):
        assert ("evicted" in headers[n - 1]) == (n in gone)
    links = [(p.value, p.proto.query_string) for p in at.page_link]
    for n in gone:
        assert (f"#{n} is evicted from memory: open it in the Memory inspector", f"turn={n}") in links


def test_the_inspector_opens_on_the_linked_turn(svc):
    conv = small_memory(svc, 3)
    n = svc.store.layer(conv).snapshot().evicted[0]
    at = app()
    at.query_params["turn"] = str(n)
    at.switch_page(INSPECTOR).run()
    assert not at.exception
    assert at.number_input(key="detail_pick").value == n


def test_action_messages_are_toasts(svc):
    at = app()
    [b for b in at.button if b.label == "Save settings"][0].click().run()
    assert any("Memory settings saved" in t.value for t in at.toast)
    [t for t in at.text_input if t.label == "Title"][0].set_value("Trip")
    button(at, "Rename")[0].click().run()
    assert any("Renamed" in t.value for t in at.toast)
    at.button(key="delete_ask").click().run()
    at.button(key="delete_yes").click().run()
    assert any("Conversation deleted" in t.value for t in at.toast)
    assert not at.success  # nothing at the top of the chat


def title_box(at):
    return [t for t in at.text_input if t.label == "Title"][0].value


def test_the_title_box_follows_the_selected_conversation(svc):
    first = svc.store.create("Cats")
    at = app()
    button(at, "New conversation")[0].click().run()
    assert title_box(at) == "New conversation"
    [t for t in at.text_input if t.label == "Title"][0].set_value("Holiday plans")
    button(at, "Rename")[0].click().run()
    assert title_box(at) == "Holiday plans"
    [s for s in at.selectbox if s.label == "Conversation"][0].set_value(first).run()
    assert title_box(at) == "Cats"
    button(at, "New conversation")[0].click().run()
    assert title_box(at) == "New conversation"
    at.button(key="delete_ask").click().run()
    at.button(key="delete_yes").click().run()
    assert title_box(at) == svc.store.conversation(at.session_state["conv_id"]).title


def test_over_budget_says_the_lag_holds_it_not_pins(svc):
    conv = svc.store.create("tight", MemorySettings(budget=20, lag=4))
    svc.ask(conv, "My name is Marta and I have a cat called Pickles who sleeps all day long.")
    assert svc.store.layer(conv).used_tokens > 20
    at = app()
    (warning,) = [w.value for w in at.warning]
    assert "over budget" in warning and "protected for the lag of 4 steps" in warning
    assert "pin" not in warning.lower() and "raise the budget" in warning
    at.switch_page(INSPECTOR).run()
    assert [w.value for w in at.warning] == [warning]  # the inspector says the same, no "Unpin"


def test_evicted_turns_show_importance_at_eviction_beside_importance_now(svc):
    conv = small_memory(svc)
    at = app()
    at.switch_page(INSPECTOR).run()
    table = at.data_editor[0].value
    evicted = table[table["state"] == "evicted"]
    kept = table[table["state"] == "in memory"]
    assert len(evicted) and evicted["at eviction"].notna().all() and kept["at eviction"].isna().all()
    last = {r.turn: r.importance for r in load_view(svc.store, conv).evictions}  # the records, oldest first
    for n, row in evicted.iterrows():
        assert abs(row["at eviction"] - last[n]) < 1e-3
    assert "importance at eviction" in [c for c in at.dataframe[-1].value.columns]  # the history says which


def test_the_policy_box_shows_names_and_the_descriptions_are_in_its_help(svc):
    at = app()
    box = [s for s in at.selectbox if s.label == "Policy"][0]
    assert list(box.options) == list(POLICIES)
    assert "measured" in box.help and all(name in box.help for name in POLICIES)


def test_new_and_imported_conversations_share_one_default_budget(svc):
    svc.store.default_settings = MemorySettings(budget=embedded.DEFAULT_BUDGET)  # as with the embedded model
    at = app()
    button(at, "New conversation")[0].click().run()
    new = svc.store.conversation(at.session_state["conv_id"])
    at.file_uploader[0].set_value(("empty.jsonl", b"", "application/jsonl")).run()
    assert not at.exception
    imported = svc.store.conversation(at.session_state["conv_id"])
    assert imported.id != new.id
    assert imported.budget == new.budget == embedded.DEFAULT_BUDGET


# ----- what the answer says ---------------------------------------------------------------------


def test_an_answer_cut_by_the_length_limit_says_so(svc):
    at = app()
    svc.llm.enqueue_cut("Here are the products: first, the")
    send(at, "List the products.")
    (answer,) = [t for t in rows(svc, Turn) if t.role == "assistant"]
    assert answer.incomplete and answer.content == "Here are the products: first, the"
    # the limit is the smaller of the service's and the budget's cap (a quarter of it, at most 150)
    limit = min(svc.answer_tokens, answer_cap(svc.store.conversation(at.session_state["conv_id"]).budget))
    assert any(f"(cut at {limit} tokens" in c.value for c in at.chat_message[-1].caption)
    svc.llm.enqueue("A whole answer.")
    send(at, "Thanks.")
    assert not any("cut at" in c.value for c in at.chat_message[-1].caption)


def test_conversations_without_a_title_still_get_one_from_the_first_message(svc):
    at = app()
    send(at, "Plan a weekend in Porto")
    with Session(svc.store.engine) as s:
        assert s.scalars(select(Conversation.title)).all() == ["Plan a weekend in Porto"]


def test_the_terminal_says_an_answer_was_cut_too():
    from assistant.service import ExchangeResult
    from cli.chat import _summary

    assert "cut at 37 tokens" in _summary(ExchangeResult(1, 1, cut_at=37))
    assert "cut at" not in _summary(ExchangeResult(1, 1))


def test_a_message_the_database_could_not_store_is_kept_to_send_again(svc, monkeypatch):
    from assistant.errors import StorageError

    at = app()
    conv = at.session_state["conv_id"]
    real = svc.store.transaction
    busy = StorageError("The database stayed busy (locked by another writer) for too long.", "locked")
    monkeypatch.setattr(svc.store, "transaction", lambda *a, **kw: (_ for _ in ()).throw(busy))
    at.chat_input[0].set_value("Please keep this long message I typed.").run()
    assert not at.exception, at.exception
    assert turns(svc, conv) == []  # not stored ...
    assert md_text("Please keep this long message I typed.") in [m.markdown[0].value for m in at.chat_message]  # kept
    assert any("Not sent: The database stayed busy" in e.value for e in at.error)
    assert at.chat_input[0].proto.disabled is True  # the message keeps its place in the order
    at.run()  # another run (any click) keeps it too, and does not try again by itself
    assert turns(svc, conv) == [] and button(at, "Send again")
    monkeypatch.setattr(svc.store, "transaction", real)
    svc.llm.enqueue("Kept and answered.")
    at.button(key=f"resend-{conv}").click().run()
    assert not at.exception, at.exception
    assert turns(svc, conv) == [
        (1, "user", "Please keep this long message I typed."),
        (2, "assistant", "Kept and answered."),
    ]
    assert not at.error and not button(at, "Send again") and at.chat_input[0].proto.disabled is False


def test_an_unsent_message_can_be_discarded(svc, monkeypatch):
    from assistant.errors import ConfigError

    at = app()
    conv = at.session_state["conv_id"]
    monkeypatch.setattr(
        svc, "send", lambda *a, **kw: (_ for _ in ()).throw(ConfigError("LAGMEM_LLM_TIMEOUT must be a number"))
    )
    at.chat_input[0].set_value("never mind").run()
    assert any("Not sent: LAGMEM_LLM_TIMEOUT must be a number" in e.value for e in at.error)
    at.button(key=f"discard-{conv}").click().run()
    assert not at.exception and not at.error and turns(svc, conv) == []
    assert md_text("never mind") not in [m.markdown[0].value for m in at.chat_message]
    assert at.chat_input[0].proto.disabled is False


class SlowLLM(FakeLLM):
    """Writes a word every 0.1 s for 20 s, ending early when stopped (as the real client does);
    ``written`` is set once three words have been taken by the reader."""

    def __init__(self):
        super().__init__()
        self.written = threading.Event()

    def stream(self, messages, *, max_tokens=512, temperature=0.7, info=None, stop=None):
        if info is not None:
            info["finish_reason"] = "stop"

        def words():
            for i in range(200):
                if i == 3:
                    self.written.set()
                if stop is not None and stop.stopped:
                    return
                time.sleep(0.1)
                yield f"word{i} "

        return words()


def test_stop_ends_an_answer_and_leaves_the_question_with_its_retry_and_what_was_written(svc):
    from web import answering

    at = app()
    conv = at.session_state["conv_id"]
    svc.llm = slow = SlowLLM()
    job = answering.start(str(runtime.get_store().engine.url), svc.send(conv, "Tell me a long story?"))
    # what the Stop button's click does, once words were written (a fixed delay raced a loaded machine)
    threading.Thread(target=lambda: slow.written.wait(10) and job.stop(), daemon=True).start()
    started = time.monotonic()
    at.run()
    assert not at.exception, at.exception
    assert time.monotonic() - started < 10
    assert turns(svc, conv) == [(1, "user", "Tell me a long story?")]  # nothing of the answer stored
    error = " ".join(literal(e.value) for e in at.error)
    assert "Stopped: the answer was not stored" in error and "It had written: “word0" in error
    assert [b.key for b in button(at, "Retry")] == [f"retry-{conv}-1"]
    assert at.chat_input[0].proto.disabled is False
    svc.llm = FakeLLM()
    svc.llm.enqueue("A short one.")
    at.button(key=f"retry-{conv}-1").click().run()
    assert turns(svc, conv)[-1] == (2, "assistant", "A short one.") and not at.error
