"""Pending conversations written and removed in chunks: an import's rows, its reveal, and the
deletion of a pending (imported or deleted) conversation a few thousand rows per transaction, so
no write lock is held for long. Rows are converted for the driver before their transaction begins
(``prepare_rows``), so a chunk's transaction holds the lock only for SQLite's own work.
``assistant.store`` decides when; nothing here decides anything.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def pending_conversations(conn, before) -> list[int]:
    """Ids of pending conversations created before ``before`` (imports cut off by a crash)."""
    return list(
        conn.execute(select(_CONVS.c.id).where(_CONVS.c.pending.is_(True), _CONVS.c.created_at < before)).scalars()
    )


def delete_some(conn, conv_id: int, limit: int) -> int:
    """Delete up to ``limit`` rows of a conversation's children (logs first, turns last), or the
    conversation itself when none are left; returns how many rows went (0: nothing was left)."""
    for model in (MissRow, FeedbackRow, MemoryEvent, EvictionRow, CitationRow, Turn):
        table = model.__table__
        ids = select(table.c.id).where(table.c.conversation_id == conv_id).limit(limit).scalar_subquery()
        n = conn.execute(delete(table).where(table.c.id.in_(ids))).rowcount
        if n:
            return n
    return conn.execute(delete(_CONVS).where(_CONVS.c.id == conv_id)).rowcount
