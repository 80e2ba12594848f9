"""The service's reads of turns as retrieval candidates, bounded by the memory, not the history:
the flags of the turns in memory and of the newest evicted turns (index ``ix_turns_conv_state_seq``),
the text and vector of those a process has not cached yet, vectors stored once per model, and the
turns still without a vector, newest first, in batches (for the background worker).

``Reader`` holds one read-only session, so what it returns is one consistent moment.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sqlalchemy import Row, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from storage.models import Turn

_TURNS = Turn.__table__


def memory_flags(s: Session, conv_id: int, *, exclude: int | None = None):
    """(seq, pinned, id, created_at) of the turns in memory (active), in order: a range of the index."""
    q = select(Turn.seq, Turn.pinned, Turn.id, Turn.created_at).where(
        Turn.conversation_id == conv_id, Turn.state == "active"
    )
    if exclude is not None:
        q = q.where(Turn.seq != exclude)
    return s.execute(q.order_by(Turn.seq)).all()


def evicted_flags(s: Session, conv_id: int, limit: int):
    """(seq, id, created_at, embedding_model) of the ``limit`` newest evicted turns, newest first."""
    q = (
        select(Turn.seq, Turn.id, Turn.created_at, Turn.embedding_model)
        .where(Turn.conversation_id == conv_id, Turn.state == "evicted")
        .order_by(Turn.seq.desc())
        .limit(limit)
    )
    return s.execute(q).all()


def _needs_vector(model: str):
    return or_(Turn.embedding.is_(None), Turn.embedding_model.is_(None), Turn.embedding_model != model)


def without_vectors(s: Session, conv_id: int, model: str, *, before: int | None, limit: int):
    """(seq, role, content, id, created_at) of up to ``limit`` turns below ``before`` with no vector of
    ``model``, newest first: one batch of the background worker (keyset paging on the turn number)."""
    q = select(Turn.seq, Turn.role, Turn.content, Turn.id, Turn.created_at).where(
        Turn.conversation_id == conv_id, _needs_vector(model)
    )
    if before is not None:
        q = q.where(Turn.seq < before)
    return s.execute(q.order_by(Turn.seq.desc()).limit(limit)).all()


def count_without_vectors(s: Session, conv_id: int, model: str) -> int:
    q = select(func.count()).select_from(Turn).where(Turn.conversation_id == conv_id, _needs_vector(model))
    return s.execute(q).scalar_one()


def turn_texts(s: Session, conv_id: int, seqs: Sequence[int], chunk: int = 500):
    """(seq, role, content, embedding, embedding_dim, id, created_at, embedding_model) of the turns ``seqs``."""
    for start in range(0, len(seqs), chunk):
        yield from s.execute(
            select(
                Turn.seq,
                Turn.role,
                Turn.content,
                Turn.embedding,
                Turn.embedding_dim,
                Turn.id,
                Turn.created_at,
                Turn.embedding_model,
            ).where(Turn.conversation_id == conv_id, Turn.seq.in_(seqs[start : start + chunk]))
        )


def turn_vectors(s: Session, conv_id: int, seqs: Sequence[int], chunk: int = 500):
    """(seq, embedding, embedding_dim) of the turns ``seqs``: no text (the miss search needs none)."""
    for start in range(0, len(seqs), chunk):
        yield from s.execute(
            select(Turn.seq, Turn.embedding, Turn.embedding_dim).where(
                Turn.conversation_id == conv_id, Turn.seq.in_(seqs[start : start + chunk])
            )
        )


_SET_VECTOR = (
    update(_TURNS)
    .where(_TURNS.c.conversation_id == bindparam("b_conv"), _TURNS.c.seq == bindparam("b_seq"))
    .values(embedding=bindparam("b_vec"), embedding_model=bindparam("b_model"), embedding_dim=bindparam("b_dim"))
)


def set_vectors(conn, conv_id: int, vectors: Sequence[tuple[int, bytes, str, int]]) -> None:
    """Store (seq, packed vector, model name, dimension) for turns stored without one, or with
    another model's: a turn's text never changes, so its vector is computed once per model."""
    if vectors:
        conn.execute(
            _SET_VECTOR,
            [{"b_conv": conv_id, "b_seq": q, "b_vec": v, "b_model": m, "b_dim": d} for q, v, m, d in vectors],
        )


class Reader:
    """One read-only session: what it returns is one consistent moment of the database."""

    def __init__(self, session: Session):
        self._session = session

    def memory_flags(self, conv_id: int, *, exclude: int | None = None) -> list[Row]:
        """(seq, pinned, id, created_at) of the turns in memory but ``exclude``, in order."""
        return memory_flags(self._session, conv_id, exclude=exclude)

    def evicted_flags(self, conv_id: int, limit: int) -> list[Row]:
        """(seq, id, created_at, embedding_model) of the ``limit`` newest evicted turns, newest first."""
        return evicted_flags(self._session, conv_id, limit)

    def without_vectors(self, conv_id: int, model: str, *, before: int | None, limit: int) -> list[Row]:
        """A batch of turns with no vector of ``model`` (``storage.candidates.without_vectors``)."""
        return without_vectors(self._session, conv_id, model, before=before, limit=limit)

    def count_without_vectors(self, conv_id: int, model: str) -> int:
        return count_without_vectors(self._session, conv_id, model)

    def turn_vectors(self, conv_id: int, seqs: list[int]) -> Iterator[Row]:
        """(seq, embedding, embedding_dim) of the turns ``seqs``."""
        return turn_vectors(self._session, conv_id, seqs)

    def turn_texts(self, conv_id: int, seqs: list[int]) -> Iterator[Row]:
        """(seq, role, content, embedding, embedding_dim, id, created_at, embedding_model) of the turns ``seqs``."""
        return turn_texts(self._session, conv_id, seqs)
