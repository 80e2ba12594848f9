"""A unit of work writes through a sink: the database (its transaction) or an import's buffer
(rows kept in RAM, written later in chunks). The same operations through either give the same rows,
and the reads a unit of work makes of its own writes (is this question answered? the last turns)
give the same answers, so a new read on a ``Tx`` path works in an import too."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from assistant import importer
from assistant.importer import write_import
from assistant.store import RowBuffer, Tx
from memory.layer import MemoryLayer
from memory.types import MemorySettings, UnknownTurn

SETTINGS = MemorySettings(budget=40, lag=1, pin_share=0.3)
TABLES = ("turns", "citations", "evictions", "memory_events", "feedback", "misses")
VOLATILE = {"id", "conversation_id", "created_at"}


def _script(tx: Tx) -> list:
    """Every kind of write a unit of work makes, and its two reads after each step."""
    seen = []
    for n in range(1, 13):
        user = n % 2 == 1
        t = tx.add_turn(
            "user" if user else "assistant",
            f"turn {n} " + "words " * (n % 4),
            5 + n % 4,
            reply_to=None if user else n - 1,
            model=None if user else "fake",
        )
        if not user:
            tx.cite([n - 1, (n - 3, 0.5), 999], answer_turn=t.number, source="replay")
        tx.enforce("arrival", t.number)
        seen.append((tx.answered(n), tx.answered(n - 1), [row[0] for row in tx.sink.recent_turns(3)]))
    tx.pin(2)
    tx.pin(3)  # past the cap: refused and logged
    tx.unpin(2)
    tx.restore(next(t.number for t in tx.layer.turns() if not t.active))
    tx.feedback(4, -1.0)
    tx.miss(5, 0.8125, restored=False)
    tx.answer_note(12, cut_at=40)
    return seen


def _dump(store, conv_id: int) -> dict:
    out = {}
    with store.engine.connect() as conn:
        for table in TABLES:
            rows = conn.execute(
                text(f"SELECT * FROM {table} WHERE conversation_id = :c ORDER BY id"), {"c": conv_id}
            ).mappings()
            out[table] = [{k: v for k, v in row.items() if k not in VOLATILE} for row in rows]
    return out


def test_the_database_and_the_buffer_store_the_same_rows_and_read_the_same(store, monkeypatch):
    monkeypatch.setattr(importer, "PAUSE_S", 0.0)
    live = store.create("live", SETTINGS)
    with store.transaction(live) as tx:
        live_seen = _script(tx)

    buffered = Tx(RowBuffer(), None, MemoryLayer(SETTINGS))
    buffer_seen = _script(buffered)
    conv = store.begin_import("imported", SETTINGS)
    stats = write_import(store, conv, buffered.sink, buffered.layer, buffered.dropped)

    assert buffer_seen == live_seen
    assert live_seen[1][1] and not live_seen[0][1]  # the reads changed as turns were written
    live_rows, imported = _dump(store, live), _dump(store, conv.id)
    assert imported == live_rows
    assert [t["state"] for t in live_rows["turns"]].count("evicted") >= 3
    assert {e["kind"] for e in live_rows["memory_events"]} == {
        "pin",
        "pin_refused",
        "unpin",
        "restore",
        "feedback",
        "answer",
    }
    assert live_rows["misses"] and live_rows["feedback"]
    assert stats.rows == {t: len(imported[t]) for t in TABLES}
    assert store.layer(conv.id).snapshot() == store.layer(live).snapshot()


def test_a_buffer_writes_into_the_conversation_it_is_given_with_turns_first():
    buffer = Tx(RowBuffer(), None, MemoryLayer(SETTINGS))
    buffer.add_turn("user", "hello", 30)
    buffer.cite([1], answer_turn=1)
    buffer.add_turn("user", "again", 30)
    buffer.enforce("arrival", 2)  # evicts turn 1; its row is written once, with that state
    rows = buffer.sink.rows(77, buffer.layer.turn)
    assert list(rows) == ["turns", "citations", "evictions"]
    assert {r["conversation_id"] for table in rows.values() for r in table} == {77}
    assert [(r["seq"], r["state"]) for r in rows["turns"]] == [(1, "evicted"), (2, "active")]
    with pytest.raises(UnknownTurn):
        buffer.sink.rows(77, MemoryLayer(SETTINGS).turn)  # a layer that never saw these turns
