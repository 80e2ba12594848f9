"""Answer worker threads are capped per server process: past the cap a message is stored, keeps
its Retry, and the page says why; once a worker finishes, answers start again."""

from __future__ import annotations

import threading

import pytest

from storage.models import Turn
from tests.web.test_app import app, rows, send, svc  # noqa: F401  (svc: fixture)
from web import answering


def test_no_more_answer_threads_than_the_cap(svc, monkeypatch):
    monkeypatch.setattr(answering, "MAX_WORKERS", 2)
    gate = threading.Event()
    convs = [svc.store.create(f"c{i}") for i in range(3)]
    for _ in range(2):
        svc.llm.enqueue(lambda _m: (gate.wait(20), "Answer.")[1])
    jobs = [answering.start("db-cap", svc.send(c, "hi")) for c in convs[:2]]
    threads = threading.active_count()
    with pytest.raises(answering.Full, match="writing 2 answers at once.*stored.*Retry"):
        answering.start("db-cap", svc.send(convs[2], "and me?"))
    assert threading.active_count() == threads  # no thread was started for it
    assert [t.role for t in rows(svc, Turn, conversation_id=convs[2])] == ["user"]  # the message is kept
    gate.set()
    assert all(j.wait(20) for j in jobs)
    svc.llm.enqueue("Now you.")
    late = answering.start("db-cap", svc.answer_pending(convs[2]))  # a finished worker frees its place
    assert late.wait(20)
    assert [t.content for t in rows(svc, Turn, conversation_id=convs[2])] == ["and me?", "Now you."]
    for c in convs:
        answering.collect("db-cap", c)


def test_the_chat_page_says_the_server_is_full_and_keeps_the_retry(svc, monkeypatch):
    monkeypatch.setattr(answering, "MAX_WORKERS", 0)
    at = send(app(), "Is anyone there?")
    toasts = [t.value for t in at.toast] or [t.value for t in at.run().toast]  # shown by this run or the next
    assert any("answers at once" in t for t in toasts), toasts
    assert [t.role for t in rows(svc, Turn)] == ["user"]
    assert any(b.label == "Retry" for b in at.button)
