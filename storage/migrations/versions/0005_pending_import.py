"""Conversations being imported (or deleted) are ``pending``; an answer names the turn it answers.

``conversations.pending``: an import is written in short chunks, invisible until revealed.

An import writes its rows in many short transactions (no write lock held for long) into a
conversation marked pending; every read and every unit of work skips pending conversations, and
one short final transaction reveals it. A failed import deletes its pending rows; one cut off by a
crash is swept by the next import. Existing conversations are not pending. A deleted conversation
is hidden the same way, then deleted in chunks.

``turns.reply_to``: the user turn an assistant turn answers, unique per conversation, so two tabs
retrying one message store one answer; the chat's "no answer yet" and the retry read it. Existing
answers are filled in: the question an ``answer`` event names (a retry of an earlier question),
else the user turn just before the answer; an answer that follows no question keeps NULL (NULLs
never collide).

Revision ID: 0005
Revises: 0004
"""
import json

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("pending", sa.Boolean, nullable=False, server_default=sa.false()))
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("reply_to", sa.Integer, nullable=True))
    _fill_reply_to(op.get_bind())
    with op.batch_alter_table("turns") as batch:
        batch.create_unique_constraint("uq_turn_reply_to", ["conversation_id", "reply_to"])


def _fill_reply_to(conn) -> None:
    """Each existing answer's question: an ``answer`` event's ``reply_to`` first, then the user
    turn just before it; never two answers for one question."""
    turns = sa.table("turns", sa.column("id"), sa.column("conversation_id"), sa.column("seq"),
                     sa.column("role"), sa.column("reply_to"))
    events = sa.table("memory_events", sa.column("conversation_id"), sa.column("turn"),
                      sa.column("kind"), sa.column("detail"))
    noted: dict[tuple[int, int], int] = {}
    for conv, turn, detail in conn.execute(sa.select(events.c.conversation_id, events.c.turn, events.c.detail)
                                           .where(events.c.kind == "answer")):
        try:
            q = json.loads(detail or "{}").get("reply_to")
        except (ValueError, AttributeError):
            continue
        if isinstance(q, int):
            noted[(conv, turn)] = q
    rows = conn.execute(sa.select(turns.c.id, turns.c.conversation_id, turns.c.seq, turns.c.role)
                        .order_by(turns.c.conversation_id, turns.c.seq)).all()
    role = {(r.conversation_id, r.seq): r.role for r in rows}
    taken = {(conv, q) for (conv, _), q in noted.items()}
    updates, done = [], set()
    for r in rows:
        if r.role != "assistant":
            continue
        q = noted.get((r.conversation_id, r.seq))
        if q is None and role.get((r.conversation_id, r.seq - 1)) == "user" and (r.conversation_id, r.seq - 1) not in taken:
            q = r.seq - 1
            taken.add((r.conversation_id, q))
        if q is not None and role.get((r.conversation_id, q)) == "user" and (r.conversation_id, q) not in done:
            done.add((r.conversation_id, q))
            updates.append({"row_id": r.id, "q": q})
    if updates:
        conn.execute(turns.update().where(turns.c.id == sa.bindparam("row_id")).values(reply_to=sa.bindparam("q")), updates)


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_constraint("uq_turn_reply_to", type_="unique")
        batch.drop_column("reply_to")
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("pending")
