"""SQLAlchemy 2.0 models: the source of truth for every conversation.

Turns are never deleted by eviction: ``state`` says whether a turn is in the model's context.
Citations, eviction records, memory events, feedback and misses are append-only logs. No running
importance score is stored anywhere: importance is measured from the citation log when needed and
snapshotted into eviction records.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class Conversation(Base):
    __tablename__ = "conversations"
    # an id is never given twice (SQLite would reuse a deleted newest conversation's id; anything
    # still holding it, such as an answer being written, would reach the new conversation)
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    owner: Mapped[str | None] = mapped_column(String(320), index=True, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # memory settings
    budget: Mapped[int] = mapped_column(Integer)
    lag: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(String(40))
    low_watermark: Mapped[float] = mapped_column(Float, default=1.0)
    pin_share: Mapped[float] = mapped_column(Float, default=0.5)
    policy_params: Mapped[dict] = mapped_column(JSON, default=dict)
    auto_restore: Mapped[bool] = mapped_column(Boolean, default=False)
    # the clock (== number of stored turns) and a version bumped by every write, so a cached
    # in-RAM memory state can tell that another session or process changed the conversation.
    step: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int] = mapped_column(Integer, default=0)
    dropped_cites: Mapped[int] = mapped_column(Integer, default=0)
    # an import still being written in chunks: invisible to every read and unit of work
    pending: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class Turn(Base):
    __tablename__ = "turns"
    # one answer per user turn: ``reply_to`` is the user turn an assistant turn answers (NULL for
    # user turns, imported turns and answers stored before it existed; NULLs never collide)
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq", name="uq_turn_seq"),
        UniqueConstraint("conversation_id", "reply_to", name="uq_turn_reply_to"),
        # an exchange reads the turns in memory and the newest evicted ones, not every turn
        Index("ix_turns_conv_state_seq", "conversation_id", "state", "seq"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    tokens: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="active")  # active | evicted
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    protected_since: Mapped[int] = mapped_column(Integer)
    incomplete: Mapped[bool] = mapped_column(Boolean, default=False)
    model: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    embedding_model: Mapped[str | None] = mapped_column(String(200), default=None)
    embedding_dim: Mapped[int | None] = mapped_column(Integer, default=None)
    reply_to: Mapped[int | None] = mapped_column(Integer, default=None)
    prior: Mapped[float | None] = mapped_column(Float, default=None)  # need estimator, at arrival


def _turn_fk() -> ForeignKeyConstraint:
    return ForeignKeyConstraint(["conversation_id", "turn"], ["turns.conversation_id", "turns.seq"], ondelete="CASCADE")


class CitationRow(Base):
    """Append-only evidence log."""

    __tablename__ = "citations"
    __table_args__ = (_turn_fk(), Index("ix_citations_conv_turn", "conversation_id", "turn"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    turn: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    source: Mapped[str] = mapped_column(String(40), default="retrieval")
    answer_turn: Mapped[int | None] = mapped_column(Integer, default=None)


class EvictionRow(Base):
    __tablename__ = "evictions"
    __table_args__ = (_turn_fk(), Index("ix_evictions_conv_step", "conversation_id", "step"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    turn: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)
    importance: Mapped[float] = mapped_column(Float)
    runners_up: Mapped[list] = mapped_column(JSON)
    budget: Mapped[int] = mapped_column(Integer)
    tokens_before: Mapped[int] = mapped_column(Integer)
    tokens_after: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(String(40))
    reason: Mapped[str] = mapped_column(String(300))
    # what pushed the memory over budget (memory.types.CAUSES) and the turn that did it, if any
    cause: Mapped[str] = mapped_column(String(20), default="budget")
    cause_turn: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MemoryEvent(Base):
    """Pin, unpin, restore (and refused pins): what a person or the second chance did; also feedback,
    and ``answer`` notes (JSON detail: the token limit that cut an answer, ``cut_at``)."""

    __tablename__ = "memory_events"
    __table_args__ = (_turn_fk(), Index("ix_events_conv", "conversation_id", "id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    turn: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(
        String(20)
    )  # pin | unpin | restore | pin_refused | auto_restore | feedback | answer
    detail: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class FeedbackRow(Base):
    __tablename__ = "feedback"
    __table_args__ = (
        ForeignKeyConstraint(
            ["conversation_id", "answer_turn"], ["turns.conversation_id", "turns.seq"], ondelete="CASCADE"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    answer_turn: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)
    value: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MissRow(Base):
    """A later retrieval step wanted an evicted turn (closer to the message than all offered)."""

    __tablename__ = "misses"
    __table_args__ = (_turn_fk(), Index("ix_misses_conv", "conversation_id", "step"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    turn: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)
    similarity: Mapped[float] = mapped_column(Float)
    restored: Mapped[bool] = mapped_column(Boolean, default=False)
