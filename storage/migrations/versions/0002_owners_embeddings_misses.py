"""Owners and second chance on conversations; embeddings and model on turns; the misses log.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("owner", sa.String(320), nullable=True))
        batch.add_column(sa.Column("auto_restore", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.create_index("ix_conversations_owner", ["owner"])
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("model", sa.String(200), nullable=True))
        batch.add_column(sa.Column("embedding", sa.LargeBinary, nullable=True))
        batch.add_column(sa.Column("embedding_model", sa.String(200), nullable=True))
        batch.add_column(sa.Column("embedding_dim", sa.Integer, nullable=True))
    op.create_table(
        "misses",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("similarity", sa.Float, nullable=False),
        sa.Column("restored", sa.Boolean, nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["conversation_id", "turn"], ["turns.conversation_id", "turns.seq"], ondelete="CASCADE"),
    )
    op.create_index("ix_misses_conv", "misses", ["conversation_id", "step"])


def downgrade() -> None:
    op.drop_table("misses")
    with op.batch_alter_table("turns") as batch:
        for col in ("embedding_dim", "embedding_model", "embedding", "model"):
            batch.drop_column(col)
    with op.batch_alter_table("conversations") as batch:
        batch.drop_index("ix_conversations_owner")
        batch.drop_column("auto_restore")
        batch.drop_column("owner")
