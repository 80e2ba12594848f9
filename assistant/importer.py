"""Bounded imports: a saved conversation built in RAM, written in short chunks, revealed at once.

In one write transaction, a large file would hold the database's write lock (SQLite has one for
the whole file) for as long as it took, and every other user's message would fail with "database
is locked". So:

1. the memory layer runs the whole file in a unit of work whose sink is a ``RowBuffer``
   (``storage.sinks``): the same ``Tx`` methods a live exchange uses decide what is stored (token
   counts, citations, evictions, events) and the same builders make the rows, but they are kept
   in RAM: nothing touches the database and no lock is held;
2. the rows are written per table in short transactions into a *pending* conversation that no
   read or unit of work can see; turns are written once, with their final state (the layer's), so
   no row is updated afterwards. A chunk is bounded by the time it holds the write lock, not by a
   row count: a row's cost varies by table, machine and load (index depth, the WAL checkpoint a
   commit runs, a CPU shared with other processes), so each chunk's size is the rows the last
   chunk of that table wrote in ``TARGET_S`` seconds (``ChunkSizer``), at most ``MAX_ROWS`` rows
   and ``CHUNK_CHARS`` characters;
3. one short transaction reveals the conversation. If anything fails, the pending rows are
   deleted (in chunks too), so the import still lands whole or not at all.

Work is linear in the file: one layer step per line, no timeline snapshot per turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from assistant.store import MemoryStore, RowBuffer
from memory.layer import MemoryLayer

TARGET_S = 0.1  # write-lock time one chunk aims at (`lagmem bench pages` reports the longest)
FIRST_ROWS, MAX_ROWS = 50, 5000  # a table's first chunk (before its rate is known); any chunk's cap
CHUNK_CHARS = 1_000_000  # text per write transaction (turns can hold megabytes each)
# SQLite has no queue for its write lock: a waiting writer's busy handler sleeps and retries (at
# most 100 ms apart), so chunks written back to back could starve it for the whole import. A pause
# longer than the longest retry interval between chunks lets every waiting writer in.
PAUSE_S = 0.1


@dataclass
class WriteStats:
    """How the rows went in: chunks (transactions), the longest one in seconds, per table too. A
    chunk is timed around ``store.write_rows``, the rows' conversion for the driver (done before
    the transaction) included: an upper bound on the time it holds the write lock."""

    chunks: int = 0
    longest_s: float = 0.0
    rows: dict[str, int] = field(default_factory=dict)
    longest_by_table: dict[str, float] = field(default_factory=dict)

    def timed(self, table: str, seconds: float) -> None:
        self.chunks += 1
        self.longest_s = max(self.longest_s, seconds)
        self.longest_by_table[table] = round(max(self.longest_by_table.get(table, 0.0), seconds), 3)


class ChunkSizer:
    """Rows for a table's next chunk: as many as the last chunk's rate writes in ``target`` seconds,
    growing at most twofold per chunk (a small chunk's fixed cost understates the rate; a jump on
    one lucky measure would not)."""

    def __init__(self, target: float = TARGET_S, first: int = FIRST_ROWS, most: int = MAX_ROWS):
        self.target, self.most, self.rows = target, most, first

    def timed(self, rows: int, seconds: float) -> None:
        fit = int(rows * self.target / seconds) if seconds > 0 else self.most
        self.rows = max(1, min(self.most, 2 * self.rows, fit))


def _chunk(rows: list[dict], start: int, size: int) -> list[dict]:
    """Up to ``size`` rows from ``start``, fewer if their text passes ``CHUNK_CHARS`` (never none)."""
    end, chars = start, 0
    while end < len(rows) and end - start < size and (end == start or chars < CHUNK_CHARS):
        chars += len(rows[end].get("content") or "") + len(rows[end].get("detail") or "")
        end += 1
    return rows[start:end]


def write_import(
    store: MemoryStore, conv, buffer: RowBuffer, layer: MemoryLayer, dropped: int, clock=time.perf_counter
) -> WriteStats:
    """Write what ``buffer`` kept into the pending conversation ``conv`` (turns with their final
    state in ``layer``, turns first), then reveal it; on any failure discard the pending rows and
    re-raise. ``clock`` times the chunks."""
    stats = WriteStats()
    tables = buffer.rows(conv.id, layer.turn)
    pause = PAUSE_S if store.engine.dialect.name == "sqlite" else 0.0  # elsewhere locks are per row
    try:
        for name, rows in tables.items():
            sizer, start = ChunkSizer(), 0
            stats.rows[name] = len(rows)
            while start < len(rows):
                chunk = _chunk(rows, start, sizer.rows)
                if stats.chunks:
                    time.sleep(pause)
                t0 = clock()
                store.write_rows(name, chunk)
                seconds = clock() - t0
                stats.timed(name, seconds)
                sizer.timed(len(chunk), seconds)
                start += len(chunk)
        t0 = clock()
        store.reveal_import(conv, layer, dropped)
        stats.timed("conversations", clock() - t0)
    except BaseException:
        store.discard_import(conv.id)
        raise
    return stats
