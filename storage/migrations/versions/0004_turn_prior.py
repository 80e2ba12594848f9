"""The need estimator's prior on turns: expected need at arrival, computed once, stored with the turn.

NULL for turns stored before the estimator existed (the policy treats them as of average need).

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("prior", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("prior")
