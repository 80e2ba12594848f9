"""The service's reads of turns as retrieval candidates: the cheap flags of every turn, the text
and vector of the turns a process has not cached yet, and vectors stored once per model.

``Reader`` holds one read-only session, so what it returns is one consistent moment.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sqlalchemy import Row, bindparam, select, update
from sqlalchemy.orm import Session

from storage.models import Turn

_TURNS = Turn.__table__


def turn_flags(s: Session, conv_id: int, *, exclude: int | None = None):
    """(seq, state, pinned, id, created_at) of every turn, in order: the cheap part of a turn."""
    q = select(Turn.seq, Turn.state, Turn.pinned, Turn.id, Turn.created_at).where(Turn.conversation_id == conv_id)
    if exclude is not None:
        q = q.where(Turn.seq != exclude)
    return s.execute(q.order_by(Turn.seq)).all()


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

    def turn_flags(self, conv_id: int, *, exclude: int | None = None) -> list[Row]:
        """(seq, state, pinned, id, created_at) of every turn but ``exclude``, in order."""
        return turn_flags(self._session, conv_id, exclude=exclude)

    def turn_texts(self, conv_id: int, seqs: list[int]) -> Iterator[Row]:
        """(seq, role, content, embedding, embedding_dim, id, created_at, embedding_model) of the turns ``seqs``."""
        return turn_texts(self._session, conv_id, seqs)
