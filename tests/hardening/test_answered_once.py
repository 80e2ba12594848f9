"""An answer is stored once: two tabs retrying the same turn, or interleaving their messages, each
get their answer once, and a late retry of an answered turn stores nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from assistant.errors import AlreadyAnswered
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from storage.models import Turn


def test_two_tabs_retrying_the_same_turn_store_one_answer(store, counter):
    svc = ChatService(store, FakeLLM(), HashEmbedder(), counter)
    conv = store.create("c")
    svc.send(conv, "the first message")  # its answer failed: pending
    tab_a, tab_b = svc.answer_pending(conv), svc.answer_pending(conv)
    tab_a.run()
    with pytest.raises(AlreadyAnswered):
        tab_b.run()
    assert [t.role for t in store.view(conv).turns] == ["user", "assistant"]


def test_interleaved_tabs_each_get_their_answer_once(store, counter):
    """Tab B sends while tab A streams: both messages are answered, each once; a late retry of A
    (from a third tab that still shows it unanswered) stores nothing."""
    svc = ChatService(store, FakeLLM(), HashEmbedder(), counter)
    conv = store.create("c")
    tab_a = svc.send(conv, "from tab a")
    tab_b = svc.send(conv, "from tab b, while a streams")
    assert tab_a.run().answer_turn == 3 and tab_b.run().answer_turn == 4
    late = svc.answer_pending(conv)
    assert late is None  # the last turn is an answer: nothing pending
    from assistant.service import Exchange

    stale = Exchange(svc, type(tab_a.result)(conv, 1), "from tab a", tab_a.vec, 0.0, None)
    with pytest.raises(AlreadyAnswered):
        stale.run()
    with store.engine.connect() as c:
        rows = c.execute(
            select(Turn.seq, Turn.role, Turn.reply_to).where(Turn.conversation_id == conv).order_by(Turn.seq)
        ).all()
    assert [tuple(r) for r in rows] == [(1, "user", None), (2, "user", None), (3, "assistant", 1), (4, "assistant", 2)]
