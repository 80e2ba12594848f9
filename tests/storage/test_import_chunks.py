"""An import's write transactions are bounded by time, not by a row count: each chunk is as many
rows as the last chunk of its table wrote in ``TARGET_S``. Time here is a fake clock advanced by a
chosen cost per row (a slow disk, a busy CPU), so the bound is checked without timing anything."""

from __future__ import annotations

from datetime import datetime

import pytest

from assistant import importer
from assistant import replay as R
from assistant.importer import ChunkSizer
from assistant.replay import replay, settings_from
from memory import transcript as T
from tests.conftest import CONVERSATIONS


class SlowWrites:
    """Wraps the store's ``write_rows``: the rows are really written, and the fake clock advances by
    ``cost[table]`` seconds per row (times ``slowdown`` after ``slow_after`` chunks)."""

    def __init__(self, store, cost: dict[str, float], slow_after: int | None = None, slowdown: float = 1.0):
        self.now, self.cost, self.slow_after, self.slowdown = 0.0, cost, slow_after, slowdown
        self.chunks: list[tuple[str, int, float]] = []  # (table, rows, seconds)
        self._write = store.write_rows
        store.write_rows = self.write_rows

    def __call__(self) -> float:
        return self.now

    def write_rows(self, table, rows):
        self._write(table, rows)
        factor = self.slowdown if self.slow_after is not None and len(self.chunks) >= self.slow_after else 1.0
        seconds = self.cost.get(table, 0.0001) * len(rows) * factor
        self.now += seconds
        self.chunks.append((table, len(rows), seconds))


def _file(turns: int) -> T.Transcript:
    lines = ['{"lagmem": 1, "budget": 200, "lag": 2}']
    for i in range(1, turns + 1):
        if i % 2:
            lines.append(f'{{"role": "user", "content": "question {i} about the garden?"}}')
        else:
            lines.append(f'{{"role": "assistant", "content": "answer {i}: the garden.", "cites": [{i - 1}]}}')
    return T.parse("\n".join(lines) + "\n")


def _import(store, counter, t, clock, monkeypatch):
    original = R.write_import
    monkeypatch.setattr(R, "write_import", lambda *a: original(*a, clock=clock))
    return replay(store, t, counter, settings_from(t.header), title="long", atomic=True)


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch):
    monkeypatch.setattr(importer, "PAUSE_S", 0.0)


def test_slow_rows_make_small_chunks_so_no_write_transaction_passes_the_target(store, counter, monkeypatch):
    t = _file(3000)
    # 1,000 turn rows (a fixed-size chunk) would hold the lock for 10 targets; a table's first
    # chunk, written before its rate is known, at most one
    per_row = importer.TARGET_S / importer.FIRST_ROWS
    clock = SlowWrites(store, {"turns": per_row / 2, "citations": per_row / 4, "evictions": per_row})
    log = _import(store, counter, t, clock, monkeypatch)
    assert log.write.longest_s <= importer.TARGET_S + 1e-9, clock.chunks
    assert {name for name, _, _ in clock.chunks} >= {"turns", "citations", "evictions"}
    assert sum(n for name, n, _ in clock.chunks if name == "turns") == 3000  # every row, once
    assert [line.content for line in store.transcript(log.conversation_id).items] == [i.content for i in t.items]


def test_a_slowdown_midway_shrinks_the_next_chunks_back_under_the_target(store, counter, monkeypatch):
    clock = SlowWrites(store, {"turns": 0.0002, "citations": 0.0002, "evictions": 0.0002}, slow_after=6, slowdown=10.0)
    _import(store, counter, _file(6000), clock, monkeypatch)
    seconds = [s for _, _, s in clock.chunks]
    # the chunk that met the slowdown could not know; the one after it is sized by the new rate
    late = [s for i, s in enumerate(seconds) if i > 6 and clock.chunks[i][0] == clock.chunks[i - 1][0]]
    assert late and max(late) <= importer.TARGET_S + 1e-9, clock.chunks


def test_chunk_size_follows_the_rate_grows_at_most_twofold_and_is_capped():
    sizer = ChunkSizer(target=0.2, first=50, most=5000)
    sizer.timed(50, 0.001)  # fast: could take 10,000 rows, grows only to 100
    assert sizer.rows == 100
    for _ in range(10):
        sizer.timed(sizer.rows, 0.0001)
    assert sizer.rows == 5000
    sizer.timed(5000, 2.0)  # suddenly 10x over the target: 500 rows fit in 0.2 s
    assert sizer.rows == 500
    sizer.timed(1, 100.0)  # never zero rows
    assert sizer.rows == 1


def _stored(store, conv_id):
    v = store.view(conv_id)
    turns = [
        (t.seq, t.role, t.content, t.tokens, t.state, t.pinned, t.protected_since, t.prior, t.reply_to, t.incomplete)
        for t in v.turns
    ]
    assert all(isinstance(t.created_at, datetime) for t in v.turns)
    return (
        turns,
        [r.as_dict() for r in v.evictions],
        [(e.kind, e.turn, e.step, e.detail) for e in v.events],
        [(c.turn, c.step, c.weight, c.source, c.answer_turn) for c in v.layer.citations()],
    )


@pytest.mark.parametrize("name", ["pins", "restore", "negative_feedback", "non_ascii"])
def test_rows_converted_before_the_transaction_read_back_as_a_replay_wrote_them(name, store, counter):
    """On SQLite an import's rows go to the driver pre-converted (dates, booleans, JSON); a replay
    writes the same rows through SQLAlchemy, one unit of work per line: both read back alike."""
    t = T.parse((CONVERSATIONS / f"{name}.jsonl").read_text(encoding="utf-8"))
    imported = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    replayed = replay(store, t, counter, settings_from(t.header)).conversation_id
    assert _stored(store, imported) == _stored(store, replayed)


def _pending_import(store, counter, turns: int = 6):
    """A pending conversation with its turns written (an import not yet revealed), and its layer."""
    from assistant.replay import _apply
    from assistant.store import RowBuffer, Tx
    from memory.layer import MemoryLayer

    t = _file(turns)
    settings = settings_from(t.header)
    tx = Tx(RowBuffer(), None, MemoryLayer(settings))
    log = R.ReplayLog(settings={})
    for item in t.items:
        _apply(tx, item, counter, log, timeline=False)
    conv = store.begin_import("long", settings)
    return conv, tx


def _backdate(store, conv_id: int, hours: float = 2.0) -> None:
    from datetime import UTC, timedelta

    from sqlalchemy import update

    from storage.models import Conversation

    old = datetime.now(UTC) - timedelta(hours=hours)
    with store.engine.begin() as conn:
        conn.execute(update(Conversation).where(Conversation.id == conv_id).values(created_at=old, updated_at=old))


def test_the_sweep_leaves_an_import_that_is_still_being_written(store, counter):
    conv, tx = _pending_import(store, counter)
    _backdate(store, conv.id)  # begun two hours ago: a long import
    tables = tx.sink.rows(conv.id, tx.layer.turn)
    store.write_rows("turns", tables["turns"][:2])  # a chunk now: the import is alive
    assert store.sweep_imports() == 0
    store.write_rows("turns", tables["turns"][2:])
    store.reveal_import(conv, tx.layer, tx.dropped)
    assert [t.seq for t in store.view(conv.id).turns] == [1, 2, 3, 4, 5, 6]


def test_a_sweep_that_listed_an_import_before_it_was_revealed_deletes_nothing(store, counter, monkeypatch):
    from storage import chunks

    conv, tx = _pending_import(store, counter)
    store.write_rows("turns", tx.sink.rows(conv.id, tx.layer.turn)["turns"])
    _backdate(store, conv.id)
    listed = chunks.pending_conversations

    def list_then_reveal(conn, before):
        stale = listed(conn, before)
        store.reveal_import(conv, tx.layer, tx.dropped)  # the import finishes meanwhile
        return stale

    monkeypatch.setattr(chunks, "pending_conversations", list_then_reveal)
    assert store.sweep_imports() == 1
    assert [t.seq for t in store.view(conv.id).turns] == [1, 2, 3, 4, 5, 6]  # revealed, whole
    store.discard_import(conv.id)  # and discarding a conversation that is not pending deletes nothing
    assert len(store.view(conv.id).turns) == 6


def test_a_stale_import_is_swept_and_its_next_chunk_refused(store, counter):
    from assistant.store import NotFound

    conv, tx = _pending_import(store, counter)
    tables = tx.sink.rows(conv.id, tx.layer.turn)
    store.write_rows("turns", tables["turns"][:2])
    _backdate(store, conv.id)  # nothing written for two hours: cut off by a crash
    assert store.sweep_imports() == 1
    with pytest.raises(NotFound):
        store.write_rows("turns", tables["turns"][2:])
    assert store.conversations() == []
