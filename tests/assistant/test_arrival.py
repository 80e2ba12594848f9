"""Per-turn work before the write lock: a turn's need prior (and its token count) is computed
before its unit of work, from a read or from the context the last unit of work left, and the
transaction uses it only if the conversation is still at that clock. Same priors either way; and
an exchange reads its budget from the user turn's unit of work, not from another read."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from assistant import need
from assistant import store as store_module
from assistant.replay import replay, settings_from
from memory import transcript as T
from memory.types import MemorySettings
from storage.models import Turn
from tests.assistant.test_service import make_service

MESSAGES = [
    "My sister Ana lives in Lisbon.",
    "What is the capital of Peru?",
    "I fly to Lisbon on May 3rd.",
    "When do I fly?",
    "hello",
    "Where does Ana live?",
]


def priors(store, conv_id) -> list[tuple[int, str, float | None]]:
    with Session(store.engine) as s:
        return [
            (t.seq, t.role, t.prior)
            for t in s.scalars(select(Turn).where(Turn.conversation_id == conv_id).order_by(Turn.seq))
        ]


def watch_the_lock(store, monkeypatch) -> list[str]:
    """Records each need-prior computation and each read of the recent turns made while the
    conversation's unit of work (its lock, and the database's write lock) is held."""
    inside: list[str] = []

    def held() -> bool:
        return any(lock.locked() for lock in store._locks.values())

    prior_for, recent_turns = need.prior_for, store_module.repo.recent_turns

    def watched_prior(*a, **kw):
        if held():
            inside.append("prior")
        return prior_for(*a, **kw)

    def watched_recent(*a, **kw):
        if held():
            inside.append("recent turns read")
        return recent_turns(*a, **kw)

    monkeypatch.setattr(need, "prior_for", watched_prior)
    monkeypatch.setattr(store_module.repo, "recent_turns", watched_recent)
    return inside


def test_an_exchange_computes_priors_outside_the_write_lock(store, counter, monkeypatch):
    from bench.fakes.llm import FakeLLM

    svc = make_service(store, FakeLLM(), counter)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    inside = watch_the_lock(store, monkeypatch)
    for m in MESSAGES:
        svc.ask(conv, m)
    assert inside == []
    assert all(p is not None for _, _, p in priors(store, conv))


def test_priors_are_the_same_as_computed_inside_the_transaction(store, counter, monkeypatch):
    from bench.fakes.llm import FakeLLM

    svc = make_service(store, FakeLLM(), counter)
    outside = store.create("outside", MemorySettings(budget=400, lag=2))
    for m in MESSAGES:
        svc.ask(outside, m)
    # the same exchanges with every prepared prior refused: the transaction computes each itself
    inside = store.create("inside", MemorySettings(budget=400, lag=2))
    add_turn = store_module.Tx.add_turn
    monkeypatch.setattr(store_module.Tx, "add_turn", lambda self, *a, arrival=None, **kw: add_turn(self, *a, **kw))
    svc = make_service(store, FakeLLM(), counter)
    for m in MESSAGES:
        svc.ask(inside, m)
    assert [p for *_, p in priors(store, outside)] == [p for *_, p in priors(store, inside)]


def test_a_turn_stored_in_between_makes_the_transaction_compute_the_prior_again(store, counter):
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    twin = store.create("twin", MemorySettings(budget=400, lag=2))
    for c in (conv, twin):
        with store.transaction(c) as tx:
            tx.add_turn("user", "My sister Ana lives in Lisbon.", 8)
    early = store.arrival(conv, "Where does Ana live?")  # prepared, then another tab stores a turn
    for c in (conv, twin):
        with store.transaction(c) as tx:
            tx.add_turn("user", "What is the capital of Peru?", 8)
    with store.transaction(conv) as tx:
        tx.add_turn("user", "Where does Ana live?", 6, arrival=early)
    with store.transaction(twin) as tx:
        tx.add_turn("user", "Where does Ana live?", 6)
    got, want = priors(store, conv)[-1][2], priors(store, twin)[-1][2]
    assert got == want and got != early.prior  # the stale prior was not used


def test_a_replay_stores_the_same_priors_as_an_import(store, counter):
    lines = ['{"lagmem": 1, "budget": 300, "lag": 2}'] + [
        f'{{"role": "{"user" if i % 2 else "assistant"}", "content": "{m}"}}' for i, m in enumerate(MESSAGES * 3, 1)
    ]
    t = T.parse("\n".join(lines) + "\n")
    replayed = replay(store, t, counter, settings_from(t.header))  # one unit of work per line
    imported = replay(store, t, counter, settings_from(t.header), atomic=True)  # built in RAM, nothing read
    assert [p for *_, p in priors(store, replayed.conversation_id)] == [
        p for *_, p in priors(store, imported.conversation_id)
    ]


def test_every_path_stores_the_prior_of_the_turn_s_role(store, counter):
    from bench.fakes.llm import FakeLLM

    lines = ['{"lagmem": 1, "budget": 300, "lag": 2}'] + [
        f'{{"role": "{"user" if i % 2 else "assistant"}", "content": "{m}"}}' for i, m in enumerate(MESSAGES, 1)
    ]
    replayed = replay(store, T.parse("\n".join(lines) + "\n"), counter, settings_from({"budget": 300, "lag": 2}))
    svc = make_service(store, FakeLLM(), counter)
    asked = store.create("asked", MemorySettings(budget=400, lag=2))
    for m in MESSAGES[:3]:
        svc.ask(asked, m)
    for conv in (replayed.conversation_id, asked):
        with Session(store.engine) as s:
            rows = list(s.scalars(select(Turn).where(Turn.conversation_id == conv).order_by(Turn.seq)))
        previous, want = [], []
        for t in rows:
            want.append(need.prior_for(t.content, previous, role=t.role))
            previous.append(need.Previous(t.content, role=t.role))
        assert {t.role for t in rows} == {"user", "assistant"}
        assert [t.prior for t in rows] == want


def test_an_exchange_reads_no_conversation_row_for_its_budget(store, counter, monkeypatch):
    from bench.fakes.llm import FakeLLM

    svc = make_service(store, FakeLLM(), counter)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    calls = []
    conversation = store.conversation
    monkeypatch.setattr(store, "conversation", lambda *a, **kw: calls.append(a) or conversation(*a, **kw))
    svc.ask(conv, "My sister Ana lives in Lisbon.")
    assert calls == []
