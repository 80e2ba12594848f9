"""An import's write transactions are bounded by time, not by a row count: each chunk is as many
rows as the last chunk of its table wrote in ``TARGET_S``. Time here is a fake clock advanced by a
chosen cost per row (a slow disk, a busy CPU), so the bound is checked without timing anything."""

from __future__ import annotations

import pytest

from assistant import importer
from assistant.importer import ChunkSizer
from assistant import replay as R
from assistant.replay import replay, settings_from
from memory import transcript as T


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
    clock = SlowWrites(store, {"turns": 0.002, "citations": 0.001, "evictions": 0.004})  # 1,000 turn rows: 2 s
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
