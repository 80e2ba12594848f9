"""The answer worker (``web.answering``), without a page: one answer at a time per
conversation, stored by the worker whatever happens to whoever follows it, and its text replayed
from the start to any later follower."""

from __future__ import annotations

import threading

import pytest

from assistant.errors import ServerUnreachable
from storage.models import Turn
from tests.web.test_app import rows, svc  # noqa: F401  (svc: fixture)
from web import answering


def test_one_answer_at_a_time_stored_even_when_nobody_follows_it(svc):
    conv = svc.store.create("c")
    gate = threading.Event()
    svc.llm.enqueue(lambda _m: (gate.wait(20), "Hello there.")[1])
    job = answering.start("db-a", svc.send(conv, "hi"))
    with pytest.raises(answering.Busy):
        answering.start("db-a", svc.answer_pending(conv))
    assert answering.collect("db-a", conv) is None  # still running: nothing to collect
    follower = job.follow()
    gate.set()
    assert next(follower)  # a follower that stops after the first delta (a page run cut off)
    follower.close()
    assert job.wait(20)
    assert [(t.role, t.content) for t in rows(svc, Turn, conversation_id=conv)] == [
        ("user", "hi"),
        ("assistant", "Hello there."),
    ]
    assert "".join(job.follow()) == "Hello there."  # a later run sees the whole answer
    assert answering.collect("db-a", conv) is job and answering.current("db-a", conv) is None


def test_a_model_error_is_kept_for_the_page_and_the_question_stays_stored(svc):
    conv = svc.store.create("c")
    svc.llm.enqueue(ServerUnreachable())
    job = answering.start("db-b", svc.send(conv, "anyone?"))
    assert job.wait(20)
    assert "could not be reached" in job.error and job.crash is None
    assert [t.role for t in rows(svc, Turn, conversation_id=conv)] == ["user"]
    assert answering.collect("db-b", conv) is job
