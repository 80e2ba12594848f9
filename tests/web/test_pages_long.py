"""Long conversations on the pages, headless (AppTest): the chat draws the latest messages and
shows earlier ones on request (a question without an answer keeps its Retry wherever it is), the
inspector pages its turn table and eviction history; and text from outside is shown literally:
a model's error is not Markdown, a server address's credentials are redacted."""

from __future__ import annotations

import json

from assistant.errors import ServerUnreachable
from assistant.redact import redact
from tests.web.test_app import INSPECTOR, app, literal, send, svc  # noqa: F401  (svc: fixture)
from web.inspector_tables import page_bounds, page_count
from web.sidebar import import_text
from web.views import load_view

PER_PAGE = 50  # app.MESSAGES_PER_PAGE, written out: the test states what a person sees


def long_conversation(svc, turns: int, *, unanswered_first: bool = False) -> int:
    """A saved conversation of ``turns`` short turns (small budget: many evictions), imported.
    With ``unanswered_first`` turns 1 and 2 are questions that were never answered (turn 2 is a
    question where an answer would be, and turn 4 answers turn 3)."""
    lines = [json.dumps({"lagmem": 1, "title": "long", "budget": 120, "lag": 2})]
    for i in range(1, turns + 1):
        if i % 2 or (unanswered_first and i == 2):
            lines.append(json.dumps({"role": "user", "content": f"message {i} about the {i % 7} crates"}))
        else:
            lines.append(json.dumps({"role": "assistant", "content": f"answer {i}", "cites": [i - 1]}))
    conv, message = import_text(svc, "\n".join(lines) + "\n", "long.jsonl")
    assert conv is not None, message
    return conv


def numbers_drawn(at) -> list[int]:
    """The turn numbers of the chat's messages, read from each message's badge caption."""
    out = []
    for m in at.chat_message:
        badge = m.caption[0].value
        out.append(int(badge.split("#", 1)[1].split("]", 1)[0]))
    return out


def open_chat(conv: int):
    at = app()
    at.session_state["conv_id"] = conv
    return at.run()


def test_the_chat_draws_the_latest_messages_and_shows_earlier_ones_on_request(svc):
    conv = long_conversation(svc, 130)
    at = open_chat(conv)
    assert not at.exception
    assert numbers_drawn(at) == list(range(81, 131))
    earlier = at.button(key="show_earlier")
    assert "80 not shown" in earlier.label
    earlier.click().run()
    assert numbers_drawn(at) == list(range(31, 131))
    at.button(key="show_earlier").click().run()
    assert numbers_drawn(at) == list(range(1, 131))
    assert not [b for b in at.button if b.key == "show_earlier"]  # nothing left to show


def test_a_question_without_an_answer_keeps_its_retry_outside_the_latest_messages(svc):
    conv = long_conversation(svc, 130, unanswered_first=True)
    at = open_chat(conv)
    assert numbers_drawn(at) == [1, 2] + list(range(81, 131))
    assert [b.key for b in at.button if b.label == "Retry"] == [f"retry-{conv}-1", f"retry-{conv}-2"]


def test_a_new_message_is_drawn_after_the_latest_ones(svc):
    conv = long_conversation(svc, 130)
    at = open_chat(conv)
    send(at, "one more question")
    drawn = numbers_drawn(at)
    assert drawn[-2:] == [131, 132] and len(drawn) == PER_PAGE


def test_the_inspector_pages_the_turn_table_newest_last(svc):
    conv = long_conversation(svc, 250)
    at = app()
    at.session_state["conv_id"] = conv
    at.switch_page(INSPECTOR).run()
    assert not at.exception
    assert list(at.data_editor[0].value.index) == list(range(201, 251))  # opens on the last page
    at.number_input(key=f"turns_page-{conv}").set_value(1).run()
    assert not at.exception
    assert list(at.data_editor[0].value.index) == list(range(1, 101))
    at.number_input(key=f"turns_page-{conv}").set_value(2).run()
    assert list(at.data_editor[0].value.index) == list(range(101, 201))


def test_the_inspector_pages_the_eviction_history_newest_first(svc):
    conv = long_conversation(svc, 250)
    evictions = load_view(svc.store, conv).evictions
    assert len(evictions) > 100  # more than one page
    at = app()
    at.session_state["conv_id"] = conv
    at.switch_page(INSPECTOR).run()
    history = at.dataframe[-1].value
    newest = evictions[::-1]
    assert list(history["turn"]) == [r.turn for r in newest[:100]]
    at.number_input(key=f"history_page-{conv}").set_value(2).run()
    assert list(at.dataframe[-1].value["turn"]) == [r.turn for r in newest[100:200]]


def test_a_pin_from_the_second_page_pins_that_turn(svc):
    conv = long_conversation(svc, 250)
    at = app()
    at.session_state["conv_id"] = conv
    at.switch_page(INSPECTOR).run()
    at.number_input(key=f"turns_page-{conv}").set_value(2).run()
    version = svc.store.conversation(conv).version
    at.session_state[f"turns-{conv}-{version}-100"] = {
        "edited_rows": {4: {"pinned": True}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    assert [t.number for t in svc.store.layer(conv).turns() if t.pinned] == [105]


def test_page_bounds_clamp_to_the_rows_there_are():
    assert page_bounds(250, 100, 1) == (0, 100)
    assert page_bounds(250, 100, 3) == (200, 250)
    assert page_bounds(250, 100, 9) == (200, 250)
    assert page_bounds(0, 100, 1) == (0, 0)
    assert page_count(250, 100) == 3 and page_count(0, 100) == 1


# ----- text from outside, shown literally ---------------------------------------------------------


def test_a_models_error_text_is_plain_text_not_markdown(svc):
    at = app()
    message = "**Down** for [maintenance](http://evil.example) :material/warning: $x$ # 1"
    svc.llm.enqueue(ServerUnreachable(message))
    send(at, "Hello?")
    errors = [e.value for e in at.error]
    assert [literal(v) for v in errors] == [message]
    assert "\\*\\*Down\\*\\*" in errors[0] and "\\[maintenance\\]" in errors[0]  # escaped: no bold, no link


def test_the_sidebar_redacts_credentials_in_the_model_servers_address(svc):
    svc.llm.describe = lambda: "llama3.1 (https://alice:s3cret@models.example:8443/v1?api-key=sk-live-9)"
    at = app()
    at.run()  # the model note appears once the service is loaded
    notes = [literal(c.value) for c in at.sidebar.caption]
    assert any("llama3.1 (https://***@models.example:8443/v1?api-key=***)" in n for n in notes), notes
    assert not any("s3cret" in n or "alice" in n or "sk-live-9" in n for n in notes)


def test_redact_removes_userinfo_secret_parameters_and_fragments():
    assert redact("https://user:pass@host/v1") == "https://***@host/v1"
    assert redact("https://user:p@ss@host:8/v1?q=a@b") == "https://***@host:8/v1?q=a@b"
    assert (
        redact("http://token@localhost:11434/v1 and http://other/v1")
        == "http://***@localhost:11434/v1 and http://other/v1"
    )
    assert redact("http://localhost:11434/v1") == "http://localhost:11434/v1"
    assert redact("write to a@b.example") == "write to a@b.example"
    assert (
        redact("gpt (https://h.example/v1?api-key=sk-123&model=x)") == "gpt (https://h.example/v1?api-key=***&model=x)"
    )
    assert redact("https://h/v1?x=1&access_token=abc;sig=zz#tok=1") == "https://h/v1?x=1&access_token=***;sig=***#***"
    assert (
        redact("https://h/v1?API_KEY=A&Token=B&secret=&page=2") == "https://h/v1?API_KEY=***&Token=***&secret=&page=2"
    )


def test_the_chat_says_when_the_model_is_shown_less_than_the_memory_holds(svc):
    conv = long_conversation(svc, 30)
    used = load_view(svc.store, conv).layer.used_tokens
    svc.context_tokens = used - 1  # the answering model's window is smaller than the memory
    at = open_chat(conv)
    assert any(f"at most about {used - 1:,} tokens of this memory's {used:,}" in c.value for c in at.caption)
    svc.context_tokens = used  # it all fits: nothing to say
    at.run()
    assert not any("at most about" in c.value for c in at.caption)


def test_lagmem_chat_prints_the_model_servers_address_redacted(monkeypatch, db_url, capsys):
    from assistant import runtime
    from bench.fakes.embedder import HashEmbedder
    from bench.fakes.llm import FakeLLM
    from cli.main import main

    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)
    llm = FakeLLM()
    llm.describe = lambda: "llama3.1 (https://alice:s3cret@models.example/v1?api-key=sk-live-9#t)"
    runtime.get_service(llm=llm, embedder=HashEmbedder())

    def leave(_prompt):
        raise EOFError

    monkeypatch.setattr("builtins.input", leave)
    assert main(["chat"]) == 0
    out = capsys.readouterr().out
    assert "llama3.1 (https://***@models.example/v1?api-key=***#***)" in out
    assert "s3cret" not in out and "sk-live-9" not in out
