"""Conversation ids are never reused: SQLite's AUTOINCREMENT on ``conversations.id``.

Without it SQLite gives a new row the largest id in use plus one, so deleting the newest
conversation hands its id to the next one created; anything still holding the old id (an answer
being written, a page following it, a cache) would then reach the new conversation, possibly
another user's. With AUTOINCREMENT an id is used once (``sqlite_sequence`` remembers the largest
ever given; the copy below records the largest existing one). PostgreSQL's sequences never reuse
an id, so this changes nothing there. Turn ids need no change: nothing identifies a turn by its row
id across conversations (a turn is its conversation's id and its ``seq``).

Revision ID: 0007
Revises: 0006
"""
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    # rebuilt (copy, drop, rename) with the table option; storage.db.upgrade turns foreign keys off
    # meanwhile, so the children's rows stay and point at the rebuilt table by name
    with op.batch_alter_table("conversations", recreate="always", table_kwargs={"sqlite_autoincrement": True}):
        pass


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("conversations", recreate="always", table_kwargs={"sqlite_autoincrement": False}):
        pass
