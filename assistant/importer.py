"""Bounded imports: a saved conversation built in RAM, written in short chunks, revealed at once.

In one write transaction, a large file would hold the database's write lock (SQLite has one for
the whole file) for as long as it took, and every other user's message would fail with "database
is locked". So:

1. the memory layer runs the whole file with a ``Recorder`` standing in for the connection: the
   same ``Tx`` methods a live exchange uses decide what is stored (token counts, citations,
   evictions, events), but nothing touches the database and no lock is held;
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

from memory.layer import MemoryLayer

from assistant.store import MemoryStore

TARGET_S = 0.1  # write-lock time one chunk aims at (`lagmem bench pages` reports the longest)
FIRST_ROWS, MAX_ROWS = 50, 5000  # a table's first chunk (before its rate is known); any chunk's cap
CHUNK_CHARS = 1_000_000  # text per write transaction (turns can hold megabytes each)
# SQLite has no queue for its write lock: a waiting writer's busy handler sleeps and retries (at
# most 100 ms apart), so chunks written back to back could starve it for the whole import. A pause
# longer than the longest retry interval between chunks lets every waiting writer in.
PAUSE_S = 0.1


class Draft:
    """The conversation row a draft is built against, before it exists (``Tx`` reads its id)."""

    id = 0
    version = 0
    auto_restore = False


class Recorder:
    """A connection look-alike that keeps the rows a unit of work would insert, per table, in
    order. Updates of turns are dropped: turns are written with their final state instead."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict]] = {}

    def execute(self, statement, params=None):
        table = statement.table.name
        if statement.is_insert:
            self.rows.setdefault(table, []).extend(params if isinstance(params, list) else [params])
        elif not (statement.is_update and table == "turns"):
            raise TypeError(f"an import does not run {type(statement).__name__} on {table}")


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


def write_import(store: MemoryStore, conv, recorder: Recorder, layer: MemoryLayer, dropped: int,
                 clock=time.perf_counter) -> WriteStats:
    """Write what ``recorder`` kept into the pending conversation ``conv``, then reveal it; on any
    failure discard the pending rows and re-raise. ``clock`` times the chunks."""
    stats = WriteStats()
    turns = recorder.rows.get("turns", [])
    for row in turns:  # the final state, as the layer has it after the whole file
        t = layer.turn(row["seq"])
        row.update(state="active" if t.active else "evicted", pinned=t.pinned, protected_since=t.protected_since)
    for rows in recorder.rows.values():  # built before the conversation existed
        for row in rows:
            row["conversation_id"] = conv.id
    order = ["turns"] + [name for name in recorder.rows if name != "turns"]  # logs name turns: turns first
    pause = PAUSE_S if store.engine.dialect.name == "sqlite" else 0.0  # elsewhere locks are per row
    try:
        for name in order:
            rows, sizer, start = recorder.rows.get(name, []), ChunkSizer(), 0
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
