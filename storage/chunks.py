"""Pending conversations written and removed in chunks: an import's rows, its reveal, and the
deletion of a pending (imported or deleted) conversation a few thousand rows per transaction, so
no write lock is held for long. Rows are converted for the driver before their transaction begins
(``prepare_rows``), so a chunk's transaction holds the lock only for SQLite's own work.
``assistant.store`` decides when; nothing here decides anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC

from sqlalchemy import delete, insert, select, update

from storage.models import Base, CitationRow, Conversation, EvictionRow, FeedbackRow, MemoryEvent, MissRow, Turn, utcnow
from storage.repo import NotFound

_CONVS = Conversation.__table__


@dataclass(frozen=True)
class Prepared:
    """Rows of one table ready for one executemany: on SQLite, the INSERT's text and each row's
    values already converted by the columns' bind processors (dates, booleans, JSON), so the write
    transaction does only the driver's loop; elsewhere (or when a row leaves a column to its
    default), the Core insert and the rows as given."""

    statement: object
    params: list


def prepare_rows(dialect, table_name: str, rows: list[dict]) -> Prepared:
    """``rows`` as ``insert_prepared`` writes them; the work done here needs no transaction."""
    table = Base.metadata.tables[table_name]
    keys = list(rows[0]) if rows else []
    given = set(keys) | {c.name for c in table.primary_key.columns if c.autoincrement}
    if dialect.name != "sqlite" or not rows or any(c.name not in given for c in table.c):
        return Prepared(insert(table), rows)
    procs = [table.c[k].type.bind_processor(dialect) for k in keys]
    sql = f"INSERT INTO {table.name} ({', '.join(keys)}) VALUES ({', '.join('?' * len(keys))})"
    return Prepared(sql, [tuple(p(row[k]) if p else row[k] for k, p in zip(keys, procs)) for row in rows])


def insert_prepared(conn, prepared: Prepared) -> None:
    """One executemany of prepared rows (in the caller's transaction)."""
    if not prepared.params:
        return
    if isinstance(prepared.statement, str):
        conn.exec_driver_sql(prepared.statement, prepared.params)
    else:
        conn.execute(prepared.statement, prepared.params)


def reveal(conn, conv_id: int, step: int, dropped: int) -> int:
    """Make a pending conversation visible with its final clock; returns its version."""
    result = conn.execute(
        update(_CONVS)
        .where(_CONVS.c.id == conv_id, _CONVS.c.pending.is_(True))
        .values(pending=False, step=step, version=1, dropped_cites=dropped, updated_at=utcnow())
    )
    if result.rowcount != 1:
        raise NotFound(f"pending conversation {conv_id} does not exist")
    return 1


def touch(conn, conv_ids) -> None:
    """A pending import is still being written: its ``updated_at`` moves on with every chunk, so the
    sweep (which discards pending conversations untouched for an hour) leaves a long import alone.
    ``NotFound`` if one of them is no longer pending (discarded meanwhile): its rows must not land."""
    ids = sorted(set(conv_ids))
    n = conn.execute(
        update(_CONVS).where(_CONVS.c.id.in_(ids), _CONVS.c.pending.is_(True)).values(updated_at=utcnow())
    ).rowcount
    if n != len(ids):
        raise NotFound(f"pending conversation {ids} was discarded while it was being written")


def pending_conversations(conn, before) -> list[int]:
    """Ids of pending conversations untouched since ``before`` (imports or deletions cut off by a crash)."""
    return list(
        conn.execute(select(_CONVS.c.id).where(_CONVS.c.pending.is_(True), _CONVS.c.updated_at < before)).scalars()
    )


def delete_some(conn, conv_id: int, limit: int, *, untouched_since=None) -> int:
    """Delete up to ``limit`` rows of a pending conversation's children (logs first, turns last), or
    the conversation itself when none are left; returns how many rows went (0: nothing was left).

    Checked in the same transaction (the row locked): only while the conversation is still pending
    (a revealed import is never deleted by a sweep that listed it a moment before) and, for the
    sweep (``untouched_since``), only while no chunk of it has been written since."""
    query = select(_CONVS.c.pending, _CONVS.c.updated_at).where(_CONVS.c.id == conv_id)
    if conn.dialect.name != "sqlite":  # SQLite's write transaction (BEGIN IMMEDIATE) already locks
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None or not row.pending:
        return 0
    if untouched_since is not None and _aware(row.updated_at) >= untouched_since:
        return 0
    for model in (MissRow, FeedbackRow, MemoryEvent, EvictionRow, CitationRow, Turn):
        table = model.__table__
        ids = select(table.c.id).where(table.c.conversation_id == conv_id).limit(limit).scalar_subquery()
        n = conn.execute(delete(table).where(table.c.id.in_(ids))).rowcount
        if n:
            return n
    return conn.execute(delete(_CONVS).where(_CONVS.c.id == conv_id)).rowcount


def _aware(when):
    """SQLite hands back naive datetimes (stored as UTC): compare them as UTC."""
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
