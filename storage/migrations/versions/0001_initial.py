"""Initial schema: conversations, turns, citations, evictions, memory events, feedback.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _turn_fk():
    return sa.ForeignKeyConstraint(["conversation_id", "turn"], ["turns.conversation_id", "turns.seq"], ondelete="CASCADE")


def _conv_fk():
    return sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("budget", sa.Integer, nullable=False),
        sa.Column("lag", sa.Integer, nullable=False),
        sa.Column("policy", sa.String(40), nullable=False),
        sa.Column("low_watermark", sa.Float, nullable=False),
        sa.Column("pin_share", sa.Float, nullable=False),
        sa.Column("policy_params", sa.JSON, nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("dropped_cites", sa.Integer, nullable=False),
    )
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("pinned", sa.Boolean, nullable=False),
        sa.Column("protected_since", sa.Integer, nullable=False),
        sa.Column("incomplete", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _conv_fk(),
        sa.UniqueConstraint("conversation_id", "seq", name="uq_turn_seq"),
    )
    op.create_index("ix_turns_conversation_id", "turns", ["conversation_id"])
    op.create_table(
        "citations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("source", sa.String(40), nullable=False),
        sa.Column("answer_turn", sa.Integer, nullable=True),
        _conv_fk(),
        _turn_fk(),
    )
    op.create_index("ix_citations_conv_turn", "citations", ["conversation_id", "turn"])
    op.create_table(
        "evictions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("importance", sa.Float, nullable=False),
        sa.Column("runners_up", sa.JSON, nullable=False),
        sa.Column("budget", sa.Integer, nullable=False),
        sa.Column("tokens_before", sa.Integer, nullable=False),
        sa.Column("tokens_after", sa.Integer, nullable=False),
        sa.Column("policy", sa.String(40), nullable=False),
        sa.Column("reason", sa.String(300), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _conv_fk(),
        _turn_fk(),
    )
    op.create_index("ix_evictions_conv_step", "evictions", ["conversation_id", "step"])
    op.create_table(
        "memory_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("detail", sa.String(500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _conv_fk(),
        _turn_fk(),
    )
    op.create_index("ix_events_conv", "memory_events", ["conversation_id", "id"])
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("answer_turn", sa.Integer, nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _conv_fk(),
        sa.ForeignKeyConstraint(["conversation_id", "answer_turn"], ["turns.conversation_id", "turns.seq"], ondelete="CASCADE"),
    )
    op.create_index("ix_feedback_conversation_id", "feedback", ["conversation_id"])


def downgrade() -> None:
    for table in ("feedback", "memory_events", "evictions", "citations", "turns", "conversations"):
        op.drop_table(table)
