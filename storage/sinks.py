"""Where a unit of work's rows go: ``assistant.store.Tx`` writes through a ``Sink``.

* ``DatabaseSink``: the unit of work's own transaction (a live exchange, a replay, a pin);
* ``RowBuffer``: rows kept in RAM per table, in the order they were made, for an import built
  before its conversation exists and then written in short chunks (``assistant.importer``).

Both make their rows with the same ``repo`` builders, so an import stores exactly the rows units
of work would. A sink also answers the two reads a unit of work makes about what it has written:
whether a question has its answer, and the last turns (the need prior's context).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from memory.types import Citation, EvictionRecord, TurnState
from storage import repo
from storage.models import CitationRow, EvictionRow, FeedbackRow, MemoryEvent, MissRow, Turn


class Sink(Protocol):
    """What a unit of work writes, and the two reads it makes of its own writes."""

    def add_turn(self, t: TurnState, content: str, **row) -> None: ...
    def turn_changed(self, t: TurnState) -> None: ...  # state, pin, protection start
    def add_citations(self, cites: Sequence[Citation]) -> None: ...
    def add_evictions(self, records: Sequence[EvictionRecord]) -> None: ...  # the turns' state too
    def add_event(self, kind: str, turn: int, step: int, detail: str = "") -> None: ...
    def add_feedback(self, answer_turn: int, step: int, value: float) -> None: ...
    def add_miss(self, turn: int, step: int, similarity: float, restored: bool) -> None: ...
    def answered(self, user_turn: int) -> bool: ...
    def recent_turns(self, limit: int) -> list[tuple]: ...  # (content, created_at, embedding, dim, role), oldest first


class DatabaseSink:
    """Rows written at once, in the caller's transaction on ``conn``, for conversation ``conv_id``."""

    def __init__(self, conn, conv_id: int):
        self.conn, self.conv_id = conn, conv_id

    def add_turn(self, t: TurnState, content: str, **row) -> None:
        repo.insert_turn(self.conn, self.conv_id, t, content, **row)

    def turn_changed(self, t: TurnState) -> None:
        repo.sync_turn(self.conn, self.conv_id, t)

    def add_citations(self, cites: Sequence[Citation]) -> None:
        repo.insert_citations(self.conn, self.conv_id, cites)

    def add_evictions(self, records: Sequence[EvictionRecord]) -> None:
        repo.insert_evictions(self.conn, self.conv_id, records)

    def add_event(self, kind: str, turn: int, step: int, detail: str = "") -> None:
        repo.insert_event(self.conn, self.conv_id, kind, turn, step, detail)

    def add_feedback(self, answer_turn: int, step: int, value: float) -> None:
        repo.insert_feedback(self.conn, self.conv_id, answer_turn, step, value)

    def add_miss(self, turn: int, step: int, similarity: float, restored: bool) -> None:
        repo.insert_miss(self.conn, self.conv_id, turn, step, similarity, restored)

    def answered(self, user_turn: int) -> bool:
        return repo.answered(self.conn, self.conv_id, user_turn)

    def recent_turns(self, limit: int) -> list[tuple]:
        return repo.recent_turns(self.conn, self.conv_id, limit)


class RowBuffer:
    """Rows kept per table, in order, for a conversation that does not exist yet (their
    ``conversation_id`` is set by ``rows``). A turn's later changes are not kept: turns are
    written once, with the layer's final state, so no row is updated after it is written."""

    def __init__(self) -> None:
        self.tables: dict[str, list[dict]] = {}
        self._answered: set[int] = set()

    def _add(self, table: str, rows: list[dict]) -> None:
        if rows:
            self.tables.setdefault(table, []).extend(rows)

    def add_turn(self, t: TurnState, content: str, **row) -> None:
        made = repo.turn_row(None, t, content, **row)
        self._add(Turn.__tablename__, [made])
        if made["reply_to"] is not None:
            self._answered.add(made["reply_to"])

    def turn_changed(self, t: TurnState) -> None:
        pass  # written with its final state (``rows``)

    def add_citations(self, cites: Sequence[Citation]) -> None:
        self._add(CitationRow.__tablename__, repo.citation_rows(None, cites))

    def add_evictions(self, records: Sequence[EvictionRecord]) -> None:
        self._add(EvictionRow.__tablename__, repo.eviction_rows(None, records))

    def add_event(self, kind: str, turn: int, step: int, detail: str = "") -> None:
        self._add(MemoryEvent.__tablename__, [repo.event_row(None, kind, turn, step, detail)])

    def add_feedback(self, answer_turn: int, step: int, value: float) -> None:
        self._add(FeedbackRow.__tablename__, [repo.feedback_row(None, answer_turn, step, value)])

    def add_miss(self, turn: int, step: int, similarity: float, restored: bool) -> None:
        self._add(MissRow.__tablename__, [repo.miss_row(None, turn, step, similarity, restored)])

    def answered(self, user_turn: int) -> bool:
        return user_turn in self._answered

    def recent_turns(self, limit: int) -> list[tuple]:
        turns = self.tables.get(Turn.__tablename__, [])[-limit:] if limit > 0 else []
        return [(r["content"], r["created_at"], r["embedding"], r["embedding_dim"], r["role"]) for r in turns]

    def rows(self, conv_id: int, final: Callable[[int], TurnState]) -> dict[str, list[dict]]:
        """The rows to write into conversation ``conv_id``, turns first (the logs name them), each
        turn with its state as ``final(seq)`` gives it (the layer that ran the whole file)."""
        for row in self.tables.get(Turn.__tablename__, []):
            t = final(row["seq"])
            row.update(state="active" if t.active else "evicted", pinned=t.pinned, protected_since=t.protected_since)
        for rows in self.tables.values():
            for row in rows:
                row["conversation_id"] = conv_id
        turns = Turn.__tablename__
        return {turns: self.tables.get(turns, []), **{k: v for k, v in self.tables.items() if k != turns}}
