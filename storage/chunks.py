"""Pending conversations written and removed in chunks: an import's rows, its reveal, and the
deletion of a pending (imported or deleted) conversation a few thousand rows per transaction, so
no write lock is held for long. ``assistant.store`` decides when; nothing here decides anything.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update

from .models import Base, CitationRow, Conversation, EvictionRow, FeedbackRow, MemoryEvent, MissRow, Turn, utcnow
from .repo import NotFound

_CONVS = Conversation.__table__


def insert_rows(conn, table_name: str, rows: list[dict]) -> None:
    """Insert prepared rows into one of the conversation tables (one executemany)."""
    if rows:
        conn.execute(insert(Base.metadata.tables[table_name]), rows)


def reveal(conn, conv_id: int, step: int, dropped: int) -> int:
    """Make a pending conversation visible with its final clock; returns its version."""
    result = conn.execute(update(_CONVS).where(_CONVS.c.id == conv_id, _CONVS.c.pending.is_(True))
                          .values(pending=False, step=step, version=1, dropped_cites=dropped, updated_at=utcnow()))
    if result.rowcount != 1:
        raise NotFound(f"pending conversation {conv_id} does not exist")
    return 1


def pending_conversations(conn, before) -> list[int]:
    """Ids of pending conversations created before ``before`` (imports cut off by a crash)."""
    return list(conn.execute(select(_CONVS.c.id).where(_CONVS.c.pending.is_(True), _CONVS.c.created_at < before)).scalars())


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
