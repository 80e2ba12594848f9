"""Caches are bounded by bytes and never serve a deleted conversation's state; stored vectors are
reused, and texts are embedded again only for another embedding model."""

from __future__ import annotations

from sqlalchemy import select, text

from assistant.cache import ByteCache
from assistant.replay import replay
from assistant.service import ChatService
from assistant.store import MemoryStore
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory import transcript as T
from memory.types import MemorySettings
from storage.db import make_engine
from storage.models import Turn


def test_byte_cache_is_bounded_by_bytes_and_drops_the_least_recently_used():
    c = ByteCache(100)
    c.put("a", 1, 40)
    c.put("b", 2, 40)
    assert c.get("a") == 1  # a is now the most recently used
    c.put("c", 3, 40)
    assert c.get("b") is None and c.get("a") == 1 and c.get("c") == 3 and c.bytes == 80
    c.put("huge", 4, 101)
    assert c.get("huge") is None and c.bytes == 80


def test_a_reused_id_never_gets_the_deleted_conversations_layer(db_url):
    """Ids are never given twice now, but a database from before (SQLite reused the id of the last
    deleted row) may hold a conversation under a deleted one's id: another process deletes, the id
    names a new conversation (written here as such a database would), and this process's cached
    layer (same id, same version) must not be applied to it."""
    mine, theirs = MemoryStore(make_engine(db_url)), MemoryStore(make_engine(db_url))
    conv = mine.create("old", MemorySettings(budget=1000))
    with mine.transaction(conv) as tx:
        tx.add_turn("user", "old text", 5)
    theirs.delete(conv)
    with theirs.engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark,"
                " pin_share, policy_params, step, version, dropped_cites, auto_restore, pending) VALUES (:id, 'new',"
                " '2030-01-01 00:00:00', '2030-01-01 00:00:00', 1000, 4, 'measured', 1.0, 0.5, '{}', 0, 1, 0, :no, :no)"
            ),
            {"id": conv, "no": False},
        )
    with theirs.transaction(conv) as tx:
        tx.add_turn("user", "new text", 7)
    with mine.transaction(conv) as tx:
        assert [t.tokens for t in tx.layer.turns()] == [7]


class CountingEmbedder(HashEmbedder):
    """HashEmbedder that counts the texts it embeds (under another model name and size if asked)."""

    def __init__(self, dim: int = 64, name: str = "hash-bow"):
        super().__init__(dim)
        self.model_name, self.texts = name, []

    def encode(self, texts):
        self.texts += [texts] if isinstance(texts, str) else list(texts)
        return super().encode(texts)


def _vectors(store, conv):
    with store.engine.connect() as c:
        return c.execute(
            select(Turn.seq, Turn.embedding_model, Turn.embedding_dim)
            .where(Turn.conversation_id == conv)
            .order_by(Turn.seq)
        ).all()


def test_imported_turns_are_embedded_once_and_again_only_for_another_model(store, counter):
    lines = [
        f'{{"role": "{"user" if i % 2 == 0 else "assistant"}", "content": "imported turn {i} on topic {i}"}}'
        for i in range(12)
    ]
    conv = replay(store, T.parse("\n".join(lines)), counter, MemorySettings(budget=10**6), atomic=True).conversation_id
    assert {m for _, m, _ in _vectors(store, conv)} == {None}  # an import stores no vectors

    first = CountingEmbedder()
    ChatService(store, FakeLLM(), first, counter).ask(conv, "what was turn 3 about?")
    assert sum(t.startswith("imported turn") for t in first.texts) == 12
    assert {(m, d) for _, m, d in _vectors(store, conv)} == {("hash-bow", 64)}

    again = CountingEmbedder()  # another process: reads the stored vectors, embeds only the new texts
    ChatService(store, FakeLLM(), again, counter).ask(conv, "and turn 5?")
    assert not any(t.startswith("imported turn") for t in again.texts)

    other = CountingEmbedder(dim=32, name="another-model")  # a model change: re-embedded, no mixed lengths
    result = ChatService(store, FakeLLM(), other, counter).ask(conv, "and turn 7?")
    assert result.answer_turn is not None
    assert sum(t.startswith("imported turn") for t in other.texts) == 12
    assert {(m, d) for seq, m, d in _vectors(store, conv) if seq <= 16} == {("another-model", 32)}


def test_a_retry_after_a_model_change_embeds_the_message_with_the_new_model(store, counter):
    conv = store.create("c")
    ChatService(store, FakeLLM(), HashEmbedder(), counter).ask(conv, "apples grow in the orchard")
    ChatService(store, FakeLLM(), HashEmbedder(), counter).send(conv, "where do apples grow?")  # its answer failed
    other = CountingEmbedder(dim=32, name="another-model")
    result = ChatService(store, FakeLLM(), other, counter).answer_pending(conv).run()
    assert result.answer_turn == 4 and "where do apples grow?" in other.texts
