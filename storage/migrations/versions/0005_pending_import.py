"""Conversations being imported (or deleted) are ``pending``; an answer names the turn it answers.

``conversations.pending``: an import is written in short chunks, invisible until revealed.

An import writes its rows in many short transactions (no write lock held for long) into a
conversation marked pending; every read and every unit of work skips pending conversations, and
one short final transaction reveals it. A failed import deletes its pending rows; one cut off by a
crash is swept by the next import. Existing conversations are not pending. A deleted conversation
is hidden the same way, then deleted in chunks.

``turns.reply_to``: the user turn an assistant turn answers, unique per conversation, so two tabs
retrying one message store one answer. Existing answers keep NULL (NULLs never collide).

Revision ID: 0005
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("pending", sa.Boolean, nullable=False, server_default=sa.false()))
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("reply_to", sa.Integer, nullable=True))
        batch.create_unique_constraint("uq_turn_reply_to", ["conversation_id", "reply_to"])


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_constraint("uq_turn_reply_to", type_="unique")
        batch.drop_column("reply_to")
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("pending")
