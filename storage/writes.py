"""The rows a unit of work writes: one builder per log (``turn_row``, ``citation_rows``, ...) and
the insert that writes its rows in the caller's transaction, plus the turn state's write-back.

``storage.sinks.DatabaseSink`` calls the inserts; an import's ``RowBuffer`` keeps the same builders'
rows to write later, so both store exactly the same rows. SQLAlchemy Core statements built once
(executemany where there are several rows): a prebuilt statement executed with parameters skips
the per-call statement construction and cache-key work, the largest cost of a small transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import bindparam, insert, update

from memory.types import Citation, EvictionRecord, TurnState
from storage.models import CitationRow, EvictionRow, FeedbackRow, MemoryEvent, MissRow, Turn, utcnow

_TURNS = Turn.__table__
_INSERT_TURN = insert(_TURNS)
_INSERT_CITATION = insert(CitationRow.__table__)
_INSERT_EVICTION = insert(EvictionRow.__table__)
_INSERT_EVENT = insert(MemoryEvent.__table__)
_INSERT_FEEDBACK = insert(FeedbackRow.__table__)
_INSERT_MISS = insert(MissRow.__table__)
_SYNC_TURN = (
    update(_TURNS)
    .where(_TURNS.c.conversation_id == bindparam("b_conv"), _TURNS.c.seq == bindparam("b_seq"))
    .values(state=bindparam("b_state"), pinned=bindparam("b_pinned"), protected_since=bindparam("b_since"))
)
_EVICT_TURN = (
    update(_TURNS)
    .where(_TURNS.c.conversation_id == bindparam("b_conv"), _TURNS.c.seq == bindparam("b_seq"))
    .values(state="evicted")
)


def insert_turn(conn, conv_id: int, t: TurnState, content: str, **row) -> None:
    conn.execute(_INSERT_TURN, turn_row(conv_id, t, content, **row))


def turn_row(
    conv_id: int | None,
    t: TurnState,
    content: str,
    *,
    model: str | None = None,
    incomplete: bool = False,
    embedding: bytes | None = None,
    embedding_model: str | None = None,
    embedding_dim: int | None = None,
    reply_to: int | None = None,
) -> dict:
    return {
        "conversation_id": conv_id,
        "seq": t.number,
        "role": t.role,
        "content": content,
        "tokens": t.tokens,
        "state": "active" if t.active else "evicted",
        "pinned": t.pinned,
        "protected_since": t.protected_since,
        "incomplete": incomplete,
        "model": model,
        "created_at": utcnow(),
        "embedding": embedding,
        "embedding_model": embedding_model,
        "embedding_dim": embedding_dim,
        "reply_to": reply_to,
        "prior": t.prior,
    }


def sync_turn(conn, conv_id: int, t: TurnState) -> None:
    """Write the layer's view of one turn (state, pin, protection start) back to its row."""
    conn.execute(
        _SYNC_TURN,
        {
            "b_conv": conv_id,
            "b_seq": t.number,
            "b_state": "active" if t.active else "evicted",
            "b_pinned": t.pinned,
            "b_since": t.protected_since,
        },
    )


def citation_rows(conv_id: int | None, cites: Iterable[Citation]) -> list[dict]:
    return [
        {
            "conversation_id": conv_id,
            "turn": c.turn,
            "step": c.step,
            "weight": c.weight,
            "source": c.source,
            "answer_turn": c.answer_turn,
        }
        for c in cites
    ]


def insert_citations(conn, conv_id: int, cites: Iterable[Citation]) -> None:
    rows = citation_rows(conv_id, cites)
    if rows:
        conn.execute(_INSERT_CITATION, rows)


def insert_evictions(conn, conv_id: int, records: Sequence[EvictionRecord]) -> None:
    """One row per eviction and the turn's state change, in the caller's transaction (contract 4)."""
    if not records:
        return
    conn.execute(_INSERT_EVICTION, eviction_rows(conv_id, records))
    conn.execute(_EVICT_TURN, [{"b_conv": conv_id, "b_seq": r.turn} for r in records])


def eviction_rows(conv_id: int | None, records: Sequence[EvictionRecord]) -> list[dict]:
    now = utcnow()
    return [
        {
            "conversation_id": conv_id,
            "turn": r.turn,
            "step": r.step,
            "importance": r.importance,
            "runners_up": [[t, sc] for t, sc in r.runners_up],
            "budget": r.budget,
            "tokens_before": r.tokens_before,
            "tokens_after": r.tokens_after,
            "policy": r.policy,
            "reason": r.reason,
            "cause": r.cause,
            "cause_turn": r.cause_turn,
            "created_at": now,
        }
        for r in records
    ]


def insert_event(conn, conv_id: int, kind: str, turn: int, step: int, detail: str = "") -> None:
    conn.execute(_INSERT_EVENT, event_row(conv_id, kind, turn, step, detail))


def event_row(conv_id: int | None, kind: str, turn: int, step: int, detail: str = "") -> dict:
    return {
        "conversation_id": conv_id,
        "kind": kind,
        "turn": turn,
        "step": step,
        "detail": detail[:500],
        "created_at": utcnow(),
    }


def insert_feedback(conn, conv_id: int, answer_turn: int, step: int, value: float) -> None:
    conn.execute(_INSERT_FEEDBACK, feedback_row(conv_id, answer_turn, step, value))


def feedback_row(conv_id: int | None, answer_turn: int, step: int, value: float) -> dict:
    return {
        "conversation_id": conv_id,
        "answer_turn": answer_turn,
        "step": step,
        "value": value,
        "created_at": utcnow(),
    }


def insert_miss(conn, conv_id: int, turn: int, step: int, similarity: float, restored: bool) -> None:
    conn.execute(_INSERT_MISS, miss_row(conv_id, turn, step, similarity, restored))


def miss_row(conv_id: int | None, turn: int, step: int, similarity: float, restored: bool) -> dict:
    return {"conversation_id": conv_id, "turn": turn, "step": step, "similarity": similarity, "restored": restored}
