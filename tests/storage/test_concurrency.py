"""Two sessions acting on one conversation at once end in a state that one serial order of their
units of work would have produced.

An exchange is three steps by design (the user's turn is committed first; the retrieval step reads
memory; the answer with its citations and evictions is one transaction), so another session's pin
or restore can land at four places: before the message, after it, after the retrieval read, after
the answer. Each of those serial orders is run once on a fresh copy of the same conversation; then
the two sessions run concurrently many times (random offsets, threads) and every outcome must equal
one of the serial outcomes. Sessions share one MemoryStore (Streamlit's cache_resource), or use two
stores on two engines (two processes: only the database serializes them)."""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from assistant.replay import replay
from assistant.retrieval.step import CiteCheck, RetrievalConfig
from assistant.service import ChatService
from assistant.store import MemoryStore
from bench.fakes.embedder import HashEmbedder
from memory import transcript as T
from memory.types import MemorySettings
from storage import repo
from storage.db import make_engine
from storage.models import CitationRow, MemoryEvent

RUNS = int(os.environ.get("LAGMEM_CONCURRENCY_RUNS", "10"))
SETTINGS = MemorySettings(budget=120, lag=2, policy="measured")
TOPICS = [
    "apple river garden",
    "piano lisbon orbit",
    "cable violet harbor",
    "quartz meadow signal",
    "copper lantern falcon",
    "apple piano quartz",
    "river orbit meadow",
    "garden harbor falcon",
]
MESSAGE = "tell me again about the apple river garden and the piano in lisbon"
_IDS = re.compile(r"^\[T(\d+)\]", re.MULTILINE)


class SlowEchoLLM:
    """Deterministic and a little slow (so the other session has windows to land in): cites the
    first two offered turns, streams a fixed answer."""

    model, backend, structured = "echo", "fake", "json_object_schema"

    def complete(self, messages, **_kw):
        time.sleep(0.003)
        return json.dumps({"turns": [int(n) for n in _IDS.findall(messages[-1]["content"])][:2]})

    def stream(self, messages, **_kw):
        for word in "the apple was by the river and the piano in lisbon".split():
            time.sleep(0.001)
            yield word + " "


def seed(store, counter) -> int:
    items = [
        T.TurnLine(
            i + 1,
            "user" if i % 2 == 0 else "assistant",
            f"turn {i + 1} speaks of {TOPICS[i % len(TOPICS)]} and nothing much else today",
        )
        for i in range(10)
    ]
    items.insert(6, T.EventLine("pin", 2))
    return replay(store, T.Transcript({}, items), counter, SETTINGS, atomic=True).conversation_id


def state(store, conv) -> tuple:
    """Everything observable about a conversation, relative to it (no ids, no times)."""
    with Session(store.reader) as s:
        c = repo.get_conversation(s, conv)
        turns = [
            (r.seq, r.role, r.content, r.tokens, r.state, r.pinned, r.protected_since) for r in repo.turn_rows(s, conv)
        ]
        cites = s.execute(
            select(CitationRow.turn, CitationRow.step, CitationRow.weight, CitationRow.source, CitationRow.answer_turn)
            .where(CitationRow.conversation_id == conv)
            .order_by(CitationRow.id)
        ).all()
        events = s.execute(
            select(MemoryEvent.kind, MemoryEvent.turn, MemoryEvent.step, MemoryEvent.detail)
            .where(MemoryEvent.conversation_id == conv)
            .order_by(MemoryEvent.id)
        ).all()
        evictions = [r.as_dict() for r in repo.load_evictions(s, conv)]
    return (c.step, tuple(turns), tuple(map(tuple, cites)), tuple(map(tuple, events)), repr(evictions))


def act(store, conv, kind, turn):
    with store.transaction(conv) as tx:
        if kind == "pin":
            tx.pin(turn)
        else:
            tx.restore(turn)


def serial(svc, other, conv, kind, turn, position):
    """Run the exchange with the other session's action at ``position`` (0..3)."""
    if position == 0:
        act(other, conv, kind, turn)
    ex = svc.send(conv, MESSAGE)
    if position == 1:
        act(other, conv, kind, turn)
    it = ex.stream()
    next(it)  # the retrieval step has read memory and the answer has started
    if position == 2:
        act(other, conv, kind, turn)
    for _ in it:
        pass
    if position == 3:
        act(other, conv, kind, turn)


def target(store, conv, kind) -> int:
    """pin: the turn the exchange would evict first; restore: a turn evicted while seeding."""
    layer = store.layer(conv)
    if kind == "restore":
        return layer.snapshot().evicted[0]
    return min(layer.ranking(), key=lambda ts: ts[1])[0].number


@pytest.mark.parametrize("kind", ["pin", "restore"])
@pytest.mark.parametrize("stores", ["shared", "separate"])
def test_concurrent_session_ends_in_a_serial_state(kind, stores, db_url, counter):
    engine_a = make_engine(db_url)
    engine_b = engine_a if stores == "shared" else make_engine(db_url, migrate=False)
    store_a = MemoryStore(engine_a)
    store_b = store_a if stores == "shared" else MemoryStore(engine_b)
    svc = ChatService(
        store_a, SlowEchoLLM(), HashEmbedder(), counter, retrieval=RetrievalConfig(check=CiteCheck(min_similarity=None))
    )
    try:
        serial_states = {}
        for position in range(4):
            conv = seed(store_a, counter)
            turn = target(store_a, conv, kind)
            t0 = time.perf_counter()
            serial(svc, store_b, conv, kind, turn, position)
            took = time.perf_counter() - t0
            serial_states.setdefault(state(store_a, conv), []).append(position)
        assert len(serial_states) >= 2, "the serial orders should not all agree, or the test shows nothing"

        seen = set()
        rng = random.Random(f"{kind}-{stores}")
        for run in range(RUNS):
            conv = seed(store_a, counter)
            turn = target(store_a, conv, kind)
            start = threading.Barrier(2)
            errors = []
            delay = rng.uniform(0, took * 1.2)

            def exchange():
                try:
                    start.wait()
                    svc.send(conv, MESSAGE).run()
                except Exception as exc:  # noqa: BLE001 -- surfaced by the assert below
                    errors.append(exc)

            def other():
                try:
                    start.wait()
                    time.sleep(delay)
                    act(store_b, conv, kind, turn)
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

            threads = [threading.Thread(target=exchange), threading.Thread(target=other)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            assert not errors, errors
            got = state(store_a, conv)
            assert got == state(store_b, conv)  # both sessions see the same committed state
            assert got in serial_states, f"run {run} (delay {delay * 1000:.1f} ms) ended in no serial order's state"
            seen.add(tuple(serial_states[got]))
        print(f"{kind}/{stores}: {RUNS} concurrent runs matched serial orders {sorted(seen)}")
    finally:
        engine_a.dispose()
        engine_b.dispose()
