"""What the pages read: light column reads of one conversation, bounded by what a page shows.

A page of a long conversation shows a few dozen turns, one page of the eviction history and the
memory (the active turns, which the budget bounds), never the whole history. So each read here
selects only the columns it needs (``select(...)`` of columns, no ORM objects), pages in SQL
(``ORDER BY ... LIMIT/OFFSET``, newest first where the page opens on the newest), and parses an
eviction record's runners-up JSON only for the records returned. ``PageReader`` holds one read-only
session, so what one draw reads is one consistent moment of the database.

``MemoryView`` is the other read: a conversation whole (every turn, record and event), for what must
see all of it at once (a what-if replay, the load test's checks).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Row, and_, func, select
from sqlalchemy.orm import Session

from memory.types import Citation, EvictionRecord, MemorySettings, TurnState
from storage.models import CitationRow, Conversation, EvictionRow, FeedbackRow, MemoryEvent, MissRow, Turn
from storage.repo import settings_of

CHUNK = 500  # numbers per IN (...) list
TEXT_CHARS = 400  # characters of a turn read for a table row (the full text is read for one turn)

if TYPE_CHECKING:  # the layer is built by assistant.store; storage only carries it
    from memory.layer import MemoryLayer


@dataclass
class MemoryView:
    """One conversation's stored state, whole, read at one moment.

    ``conv``, ``turns``, ``events`` and ``misses`` are rows detached from their session (attribute
    access only; turns without their embeddings); ``layer`` is the memory rebuilt from them."""

    conv: Conversation
    layer: MemoryLayer
    turns: list[Turn]
    evictions: list[EvictionRecord]
    events: list[MemoryEvent] = field(default_factory=list)
    misses: list[MissRow] = field(default_factory=list)
    feedback: dict[int, float] = field(default_factory=dict)

    @functools.cached_property
    def by_number(self) -> dict[int, Turn]:
        """Turn rows by turn number (built once per view: the pages look turns up in loops)."""
        return {t.seq: t for t in self.turns}

    @property
    def turn_count(self) -> int:
        return len(self.turns)


def _chunks(numbers: Iterable[int]) -> list[list[int]]:
    seq = sorted(set(numbers))
    return [seq[i : i + CHUNK] for i in range(0, len(seq), CHUNK)]


def _state(seq, role, tokens, since, state, pinned, prior) -> TurnState:
    return TurnState(seq, role, tokens, seq, since, state == "active", pinned, prior)


_STATE_COLUMNS = (Turn.seq, Turn.role, Turn.tokens, Turn.protected_since, Turn.state, Turn.pinned, Turn.prior)
# a turn as a page row: its text shortened in SQL (a table cell), or whole (a message, one turn)
_ROW_COLUMNS = (Turn.seq, Turn.role, Turn.tokens, Turn.state, Turn.pinned, Turn.model, Turn.reply_to, Turn.incomplete)
_EVICTION_COLUMNS = (
    EvictionRow.turn,
    EvictionRow.step,
    EvictionRow.importance,
    EvictionRow.runners_up,
    EvictionRow.budget,
    EvictionRow.tokens_before,
    EvictionRow.tokens_after,
    EvictionRow.policy,
    EvictionRow.reason,
    EvictionRow.cause,
    EvictionRow.cause_turn,
)


def _record(row) -> EvictionRecord:
    turn, step, importance, runners, budget, before, after, policy, reason, cause, cause_turn = row[:11]
    return EvictionRecord(
        turn,
        step,
        importance,
        tuple((int(t), float(sc)) for t, sc in runners),
        budget,
        before,
        after,
        policy,
        reason,
        cause,
        cause_turn,
    )


class PageReader:
    """One read-only session on one conversation (``conv``: its row, read first)."""

    def __init__(self, session: Session, conv: Row):
        self._s, self.conv = session, conv
        self._id = conv.id

    def settings(self) -> MemorySettings:
        return settings_of(self.conv)

    def _bulk(self, q) -> list:
        """Many small rows, through the session's connection (no ORM result processing)."""
        return self._s.connection().execute(q).all()

    def _turns(self, *columns):
        return select(*columns).where(Turn.conversation_id == self._id)

    # ----- turns ---------------------------------------------------------------------------
    def turn_count(self) -> int:
        return self._s.execute(self._turns(func.count())).scalar_one()

    def last_turn(self) -> int:
        """The highest turn number (0 when there is none)."""
        return self._s.execute(self._turns(func.max(Turn.seq))).scalar() or 0

    def memory_states(self) -> list[TurnState]:
        """The turns in memory (active): what the budget bounds, not the history."""
        q = self._turns(*_STATE_COLUMNS).where(Turn.state == "active").order_by(Turn.seq)
        return [_state(*r) for r in self._s.execute(q)]

    def states(self, numbers: Iterable[int]) -> list[TurnState]:
        out = []
        for part in _chunks(numbers):
            out += [_state(*r) for r in self._s.execute(self._turns(*_STATE_COLUMNS).where(Turn.seq.in_(part)))]
        return out

    def page_numbers(self, offset: int, limit: int) -> list[int]:
        """Turn numbers of rows [offset, offset + limit) in turn order, paged in SQL."""
        q = self._turns(Turn.seq).order_by(Turn.seq).offset(offset).limit(limit)
        return list(self._s.scalars(q))

    def latest_numbers(self, limit: int) -> list[int]:
        """The last ``limit`` turn numbers, oldest first."""
        q = self._turns(Turn.seq).order_by(Turn.seq.desc()).limit(limit)
        return list(self._s.scalars(q))[::-1]

    def rows(self, numbers: Iterable[int], *, whole: bool = False) -> list[Row]:
        """Rows (seq, role, tokens, state, pinned, model, reply_to, incomplete, content) of these
        turns in order; ``content`` is the first ``TEXT_CHARS`` characters unless ``whole``."""
        text = Turn.content if whole else func.substr(Turn.content, 1, TEXT_CHARS).label("content")
        out = []
        for part in _chunks(numbers):
            out += self._s.execute(self._turns(*_ROW_COLUMNS, text).where(Turn.seq.in_(part))).all()
        return sorted(out, key=lambda r: r.seq)

    def _unanswered(self, *columns):
        """User turns no answer names in ``reply_to`` (one index lookup per user turn)."""
        answer = Turn.__table__.alias("answer")
        has_answer = (
            select(answer.c.id)
            .where(answer.c.conversation_id == Turn.conversation_id, answer.c.reply_to == Turn.seq)
            .exists()
        )
        return self._turns(*columns).where(Turn.role == "user", ~has_answer)

    def unanswered(self, limit: int | None = None) -> list[int]:
        """The newest ``limit`` questions without an answer (every one when None), oldest first:
        turn numbers only, paged in SQL (an import of user-only turns has thousands)."""
        q = self._unanswered(Turn.seq).order_by(Turn.seq.desc())
        if limit is not None:
            q = q.limit(limit)
        return list(self._s.scalars(q))[::-1]

    def unanswered_count(self) -> int:
        """How many questions have no answer (a count: no row is read out)."""
        return self._s.execute(self._unanswered(func.count())).scalar_one()

    # ----- evidence ------------------------------------------------------------------------
    def citations(self, numbers: Iterable[int]) -> list[Citation]:
        """The citations of these turns, in log order."""
        return self._citations_where(CitationRow.turn, numbers)

    def cites_by(self, answers: Iterable[int]) -> list[Citation]:
        """The citations these answers made, in log order."""
        return self._citations_where(CitationRow.answer_turn, answers)

    def _citations_where(self, column, values: Iterable[int]) -> list[Citation]:
        """The citations whose ``column`` is one of ``values``, in log order."""
        rows = []
        for part in _chunks(values):
            rows += self._s.execute(
                select(
                    CitationRow.id,
                    CitationRow.turn,
                    CitationRow.step,
                    CitationRow.weight,
                    CitationRow.source,
                    CitationRow.answer_turn,
                ).where(CitationRow.conversation_id == self._id, column.in_(part))
            ).all()
        rows.sort(key=lambda r: r[0])
        return [Citation(t, st, w, src, a) for _, t, st, w, src, a in rows]

    def latest_citations(self, limit: int) -> tuple[list[Citation], int]:
        """The newest ``limit`` citations (oldest first) and how many there are in all."""
        where = CitationRow.conversation_id == self._id
        total = self._s.execute(select(func.count()).where(where)).scalar_one()
        q = (
            select(CitationRow.turn, CitationRow.step, CitationRow.weight, CitationRow.source, CitationRow.answer_turn)
            .where(where)
            .order_by(CitationRow.id.desc())
            .limit(limit)
        )
        return [Citation(*r) for r in self._s.execute(q)][::-1], total

    def feedback(self, answers: Iterable[int]) -> dict[int, float]:
        """The latest feedback on each of these answers."""
        out: dict[int, float] = {}
        for part in _chunks(answers):
            q = (
                select(FeedbackRow.answer_turn, FeedbackRow.value)
                .where(FeedbackRow.conversation_id == self._id, FeedbackRow.answer_turn.in_(part))
                .order_by(FeedbackRow.id)
            )
            out.update({a: v for a, v in self._s.execute(q)})
        return out

    # ----- eviction records, events, misses --------------------------------------------------
    def eviction_count(self) -> int:
        return self._s.execute(select(func.count()).where(EvictionRow.conversation_id == self._id)).scalar_one()

    def eviction_page(self, offset: int, limit: int) -> list[tuple[EvictionRecord, str]]:
        """Records [offset, offset + limit) of the history newest first, each with its turn's role."""
        q = (
            select(*_EVICTION_COLUMNS, Turn.role)
            .outerjoin(Turn, and_(Turn.conversation_id == EvictionRow.conversation_id, Turn.seq == EvictionRow.turn))
            .where(EvictionRow.conversation_id == self._id)
            # records are written at a step that never goes back, so (step, id) is their order;
            # it is also the index's (conversation, step) order: no sort of the whole history
            .order_by(EvictionRow.step.desc(), EvictionRow.id.desc())
            .offset(offset)
            .limit(limit)
        )
        return [(_record(r), r.role or "") for r in self._s.execute(q)]

    def evictions_of(self, numbers: Iterable[int]) -> list[EvictionRecord]:
        """Every record of these turns, oldest first."""
        rows = []
        for part in _chunks(numbers):
            # a turn leaves memory at its arrival step or later: the (conversation, step) index
            # skips the records made before the first of them
            rows += self._s.execute(
                select(EvictionRow.id, *_EVICTION_COLUMNS).where(
                    EvictionRow.conversation_id == self._id, EvictionRow.step >= part[0], EvictionRow.turn.in_(part)
                )
            ).all()
        rows.sort(key=lambda r: r[0])
        return [_record(r[1:]) for r in rows]

    def evictions_between(self, first: int, last: int) -> list[EvictionRecord]:
        """The records made at steps ``first`` .. ``last``, oldest first."""
        q = (
            select(*_EVICTION_COLUMNS)
            .where(EvictionRow.conversation_id == self._id, EvictionRow.step.between(first, last))
            .order_by(EvictionRow.id)
        )
        return [_record(r) for r in self._s.execute(q)]

    def events_of(self, numbers: Iterable[int], kinds: Sequence[str]) -> list[Row]:
        """(turn, step, kind, detail) of these turns' events of these kinds, oldest first."""
        rows = []
        for part in _chunks(numbers):
            rows += self._s.execute(
                select(MemoryEvent.id, MemoryEvent.turn, MemoryEvent.step, MemoryEvent.kind, MemoryEvent.detail).where(
                    MemoryEvent.conversation_id == self._id, MemoryEvent.turn.in_(part), MemoryEvent.kind.in_(kinds)
                )
            ).all()
        return sorted(rows, key=lambda r: r.id)

    def latest_misses(self, limit: int) -> tuple[list[Row], int]:
        """The newest ``limit`` misses (step, turn, similarity, restored), newest first, and the count."""
        where = MissRow.conversation_id == self._id
        total = self._s.execute(select(func.count()).where(where)).scalar_one()
        q = (
            select(MissRow.step, MissRow.turn, MissRow.similarity, MissRow.restored)
            .where(where)
            .order_by(MissRow.id.desc())
            .limit(limit)
        )
        return self._s.execute(q).all(), total

    # ----- the memory's timeline, read from a step on ----------------------------------------
    def arrivals_after(self, step: int) -> list[tuple[int, int]]:
        """(turn, tokens) of the turns that arrived after ``step``, in order."""
        q = self._turns(Turn.seq, Turn.tokens).where(Turn.seq > step).order_by(Turn.seq)
        return self._bulk(q)

    def tokens_of(self, numbers: Iterable[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for part in _chunks(numbers):
            out.update({q: n for q, n in self._s.execute(self._turns(Turn.seq, Turn.tokens).where(Turn.seq.in_(part)))})
        return out

    def evictions_after(self, step: int) -> list[tuple[int, int, int]]:
        """(step, turn, tokens before) of the records made after ``step``, oldest first."""
        q = (
            select(EvictionRow.step, EvictionRow.turn, EvictionRow.tokens_before)
            .where(EvictionRow.conversation_id == self._id, EvictionRow.step > step)
            .order_by(EvictionRow.step, EvictionRow.id)
        )  # the index's order, and the records' (see eviction_page)
        return self._bulk(q)

    def returns_after(self, step: int) -> list[tuple[int, int]]:
        """(step, turn) of the events after ``step`` that may bring a turn back (restores, pins)."""
        q = (
            select(MemoryEvent.step, MemoryEvent.turn)
            .where(
                MemoryEvent.conversation_id == self._id,
                MemoryEvent.step > step,
                MemoryEvent.kind.in_(("restore", "auto_restore", "pin")),
            )
            .order_by(MemoryEvent.id)
        )
        return self._bulk(q)
