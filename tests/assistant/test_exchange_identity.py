"""An exchange belongs to one conversation: its answer is stored there or nowhere. A conversation
deleted while its answer streams, and a new one created meanwhile (SQLite used to give it the
deleted one's id), never receives the old answer."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from assistant.errors import ConversationGone, ServerUnreachable
from assistant.retrieval.step import CiteCheck, RetrievalConfig
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM

SECRET = "Noted: your bank PIN is 4321, and I will keep it safe for you."


@pytest.fixture
def svc(store, counter):
    llm = FakeLLM(default=SECRET, chunk_size=8)
    return ChatService(store, llm, HashEmbedder(), counter, retrieval=RetrievalConfig(check=CiteCheck(None)))


def _contents(store, conv_id: int) -> list[tuple[str, str]]:
    return [(t.role, t.content) for t in store.view(conv_id).turns]


def test_a_conversation_deleted_while_its_answer_streams_never_gives_it_to_the_next_one(svc, store):
    old = store.create("old")
    stream = svc.send(old, "Remember my bank PIN: 4321.").stream()
    assert next(stream)  # the answer is streaming
    store.delete(old)
    new = store.create("someone else's")
    svc.send(new, "What is the capital of France?")  # its own question, not answered yet
    with pytest.raises(ConversationGone):
        list(stream)
    assert new != old  # ids are never reused
    assert _contents(store, new) == [("user", "What is the capital of France?")]


def test_an_id_given_again_by_an_old_database_is_refused_under_the_lock(svc, store):
    """A database from before ids were never reused: the deleted conversation's id now names
    another conversation (written here as such a database would); the exchange's identity (its
    conversation's creation time) tells them apart."""
    old = store.create("old")
    for retry in (False, True):
        if retry:  # the same for a retried question (``answer_pending``)
            old = store.create("old again")
            svc.llm.enqueue(ServerUnreachable())
            with pytest.raises(ServerUnreachable):
                svc.ask(old, "Remember my bank PIN: 4321.")
            stream = svc.answer_pending(old).stream()
        else:
            stream = svc.send(old, "Remember my bank PIN: 4321.").stream()
        assert next(stream)
        store.delete(old)
        with store.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark,"
                    " pin_share, policy_params, step, version, dropped_cites, auto_restore, pending) VALUES (:id,"
                    " 'reused', '2030-01-01 00:00:00', '2030-01-01 00:00:00', 2000, 4, 'measured', 1.0, 0.5, '{}',"
                    " 0, 0, 0, :no, :no)"
                ),
                {"id": old, "no": False},
            )
        svc.send(old, "What is the capital of France?")
        with pytest.raises(ConversationGone):
            list(stream)
        assert _contents(store, old) == [("user", "What is the capital of France?")]
