"""An index on turns by (conversation, state, seq): an exchange reads only what it needs.

Each exchange reads the turns in memory (``state = 'active'``: what the budget bounds) and the
newest evicted turns (the miss search's capped candidate set, newest first), never every turn of
the conversation. Without this index both reads scan all of a conversation's turns; with it each
is a range of the index, so its cost follows the memory, not the history.

Revision ID: 0008
Revises: 0007
"""
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_turns_conv_state_seq", "turns", ["conversation_id", "state", "seq"])


def downgrade() -> None:
    op.drop_index("ix_turns_conv_state_seq", table_name="turns")
