"""Repository functions: rows in, memory value types out. No decisions are made here.

Writes on the exchange's hot path are SQLAlchemy Core statements (executemany where there are
several rows): they take a Session or a Connection and skip the ORM's unit-of-work bookkeeping,
which cost more than the memory layer's decision itself.

``storage`` knows ``memory``'s value types (TurnState, Citation, EvictionRecord, MemorySettings) and
nothing else of it; the wiring of layer and database lives in ``assistant.store``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.orm import Session, defer

from memory.types import Citation, EvictionRecord, MemorySettings, TurnState
from storage.models import CitationRow, Conversation, EvictionRow, FeedbackRow, MemoryEvent, MissRow, Turn, utcnow


class NotFound(LookupError):
    """No such conversation (or not visible to this user)."""


def settings_of(conv: Conversation) -> MemorySettings:
    return MemorySettings.of(conv)


def create_conversation(
    conn,
    title: str,
    settings: MemorySettings,
    *,
    owner: str | None = None,
    auto_restore: bool = False,
    pending: bool = False,
):
    """Insert a conversation; returns its row (see ``conversation_row``). A ``pending`` one is
    invisible to every other query until ``reveal`` (an import being written in chunks)."""
    now = utcnow()
    result = conn.execute(
        insert(Conversation.__table__).values(
            title=title,
            owner=owner or None,  # "" is no owner, stored as NULL like None
            created_at=now,
            updated_at=now,
            **settings.to_dict(),
            auto_restore=auto_restore,
            step=0,
            version=0,
            dropped_cites=0,
            pending=pending,
        )
    )
    return conn.execute(_SELECT_CONV, {"b_conv": result.inserted_primary_key[0]}).first()


def _owned_by(owner: str | None):
    """The owner condition; there is always one. No owner (``None`` or ``""``) sees only
    owner-less rows, never everyone's: a missing sign-in fails closed."""
    owned = Conversation.owner.is_(None) if not owner else Conversation.owner == owner
    return owned & Conversation.pending.is_(False)


def get_conversation(s: Session, conv_id: int, *, owner: str | None = None, lock: bool = False) -> Conversation:
    q = select(Conversation).where(Conversation.id == conv_id, _owned_by(owner))
    if lock:
        q = q.with_for_update()
    conv = s.scalars(q).first()
    if conv is None:
        raise NotFound(f"conversation {conv_id} does not exist")
    return conv


def list_conversations(s: Session, *, owner: str | None = None) -> list[Conversation]:
    q = select(Conversation).where(_owned_by(owner)).order_by(Conversation.updated_at.desc(), Conversation.id.desc())
    return list(s.scalars(q))


def any_owned(s) -> bool:
    """Does any conversation have an owner? (Then running without sign-in would hide them, or,
    if the owner filter were skipped, show them to everyone: the pages refuse to run unscoped.)"""
    q = select(Conversation.id).where(Conversation.owner.is_not(None), Conversation.pending.is_(False)).limit(1)
    return s.execute(q).first() is not None


def claim_conversation(conn, conv_id: int, owner: str, holder: str | None = None) -> None:
    """Give a conversation that belongs to ``holder`` (default: nobody, an owner-less one) to
    ``owner``; ``NotFound`` if it does not exist or has another owner (a claim takes a conversation
    only from the owner it names)."""
    if not owner:
        raise ValueError("a claim needs an owner")
    held = _CONVS.c.owner.is_(None) if holder is None else _CONVS.c.owner == holder
    result = conn.execute(
        update(_CONVS).where(_CONVS.c.id == conv_id, held, _CONVS.c.pending.is_(False)).values(owner=owner)
    )
    if result.rowcount != 1:
        raise NotFound(
            f"conversation {conv_id} does not exist or already has an owner"
            + (f" other than {holder}" if holder is not None else "")
        )


def load_turn_states(s: Session, conv_id: int) -> list[TurnState]:
    rows = s.execute(
        select(Turn.seq, Turn.role, Turn.tokens, Turn.protected_since, Turn.state, Turn.pinned, Turn.prior)
        .where(Turn.conversation_id == conv_id)
        .order_by(Turn.seq)
    )
    return [
        TurnState(seq, role, tokens, seq, since, state == "active", pinned, prior)
        for seq, role, tokens, since, state, pinned, prior in rows
    ]


def load_citations(s: Session, conv_id: int) -> list[Citation]:
    rows = s.execute(
        select(CitationRow.turn, CitationRow.step, CitationRow.weight, CitationRow.source, CitationRow.answer_turn)
        .where(CitationRow.conversation_id == conv_id)
        .order_by(CitationRow.id)
    )
    return [Citation(t, st, w, src, a) for t, st, w, src, a in rows]


def load_feedback(s: Session, conv_id: int) -> dict[int, float]:
    rows = s.execute(
        select(FeedbackRow.answer_turn, FeedbackRow.value)
        .where(FeedbackRow.conversation_id == conv_id)
        .order_by(FeedbackRow.id)
    )
    return {a: v for a, v in rows}  # the latest feedback on an answer wins


_TURNS = Turn.__table__
_CONVS = Conversation.__table__
# Statements built once: executing a prebuilt statement with parameters skips SQLAlchemy's
# per-call statement construction and cache-key work, the largest cost of a small transaction.
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
_BUMP = (
    update(_CONVS)
    .where(_CONVS.c.id == bindparam("b_conv"))
    .values(
        step=bindparam("b_step"),
        version=bindparam("b_version"),
        dropped_cites=_CONVS.c.dropped_cites + bindparam("b_dropped"),
        updated_at=bindparam("b_at"),
    )
)


_SELECT_CONV = select(_CONVS).where(_CONVS.c.id == bindparam("b_conv"))


def _conv_select(owned: bool, lock: bool):
    q = _SELECT_CONV.where(
        _CONVS.c.owner == bindparam("b_owner") if owned else _CONVS.c.owner.is_(None), _CONVS.c.pending.is_(False)
    )
    return q.with_for_update() if lock else q


_SELECT_CONVS = {(owned, lock): _conv_select(owned, lock) for owned in (False, True) for lock in (False, True)}


def conversation_row(conn, conv_id: int, *, owner: str | None = None, lock: bool = False):
    """The conversation's row (attribute access like the model), optionally locked for update."""
    params = {"b_conv": conv_id, "b_owner": owner} if owner else {"b_conv": conv_id}
    row = conn.execute(_SELECT_CONVS[(bool(owner), lock)], params).first()
    if row is None:
        raise NotFound(f"conversation {conv_id} does not exist")
    return row


def update_conversation(conn, conv_id: int, **values) -> None:
    conn.execute(update(_CONVS).where(_CONVS.c.id == conv_id).values(**values))


# Each insert_* writes the rows its builder (turn_row, citation_rows, ...) makes; an import's
# buffer (``storage.sinks.RowBuffer``) keeps the same builders' rows to write later.


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


def answered(conn, conv_id: int, user_turn: int) -> bool:
    """Has an answer been stored for this user turn? (Its answer names it in ``reply_to``.)"""
    q = select(_TURNS.c.id).where(_TURNS.c.conversation_id == conv_id, _TURNS.c.reply_to == user_turn).limit(1)
    return conn.execute(q).first() is not None


def recent_turns(conn, conv_id: int, limit: int) -> list:
    """The last ``limit`` turns (content, created_at, embedding, embedding_dim, role), oldest first."""
    rows = conn.execute(
        select(Turn.content, Turn.created_at, Turn.embedding, Turn.embedding_dim, Turn.role)
        .where(Turn.conversation_id == conv_id)
        .order_by(Turn.seq.desc())
        .limit(limit)
    ).all()
    return rows[::-1]


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


def eviction_record(row: EvictionRow) -> EvictionRecord:
    return EvictionRecord(
        turn=row.turn,
        step=row.step,
        importance=row.importance,
        runners_up=tuple((int(t), float(sc)) for t, sc in row.runners_up),
        budget=row.budget,
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        policy=row.policy,
        reason=row.reason,
        cause=row.cause,
        cause_turn=row.cause_turn,
    )


def load_evictions(s: Session, conv_id: int) -> list[EvictionRecord]:
    rows = s.scalars(select(EvictionRow).where(EvictionRow.conversation_id == conv_id).order_by(EvictionRow.id))
    return [eviction_record(r) for r in rows]


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


def bump(conn, conv_id: int, version: int, step: int, dropped: int = 0) -> int:
    """Advance the stored clock and version (a cached memory state elsewhere is now stale)."""
    conn.execute(
        _BUMP, {"b_conv": conv_id, "b_step": step, "b_version": version + 1, "b_dropped": dropped, "b_at": utcnow()}
    )
    return version + 1


def turn_rows(s: Session, conv_id: int, *, vectors: bool = True) -> list[Turn]:
    """A conversation's turns in order; ``vectors=False`` leaves the embeddings unread."""
    q = select(Turn).where(Turn.conversation_id == conv_id).order_by(Turn.seq)
    return list(s.scalars(q if vectors else q.options(defer(Turn.embedding))))


def turn_states_of(rows: Iterable[Turn]) -> list[TurnState]:
    """The layer's view of turn rows already read (``load_turn_states`` without a second query)."""
    return [
        TurnState(t.seq, t.role, t.tokens, t.seq, t.protected_since, t.state == "active", t.pinned, t.prior)
        for t in rows
    ]


def last_turn(s: Session, conv_id: int) -> Turn | None:
    return s.scalars(select(Turn).where(Turn.conversation_id == conv_id).order_by(Turn.seq.desc()).limit(1)).first()


def load_answer_cites(s: Session, conv_id: int) -> dict[int, list[tuple[int, float]]]:
    """Answer turn -> the (turn, weight) it cited, in log order (what a saved file keeps)."""
    cites: dict[int, list[tuple[int, float]]] = {}
    rows = s.execute(
        select(CitationRow.answer_turn, CitationRow.turn, CitationRow.weight)
        .where(CitationRow.conversation_id == conv_id, CitationRow.answer_turn.is_not(None))
        .order_by(CitationRow.id)
    )
    for answer, turn, weight in rows:
        cites.setdefault(answer, []).append((turn, weight))
    return cites


# ----- the logs the pages show ----------------------------------------------------------------


def load_misses(s: Session, conv_id: int) -> list[MissRow]:
    """Every logged miss of a conversation, oldest first (the inspector's misses list)."""
    return list(s.scalars(select(MissRow).where(MissRow.conversation_id == conv_id).order_by(MissRow.id)))


def load_events(s: Session, conv_id: int) -> list[MemoryEvent]:
    """Pins, unpins, restores and refused pins, oldest first (to rebuild the memory's timeline)."""
    return list(s.scalars(select(MemoryEvent).where(MemoryEvent.conversation_id == conv_id).order_by(MemoryEvent.id)))
