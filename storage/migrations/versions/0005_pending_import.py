"""Conversations being imported are ``pending``: written in short chunks, invisible until revealed.

An import writes its rows in many short transactions (no write lock held for long) into a
conversation marked pending; every read and every unit of work skips pending conversations, and
one short final transaction reveals it. A failed import deletes its pending rows; one cut off by a
crash is swept by the next import. Existing conversations are not pending.

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


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("pending")
