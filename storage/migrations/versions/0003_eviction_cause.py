"""Eviction records name their cause as data: ``cause`` and ``cause_turn`` columns.

Rows written before this revision have only the reason in words; they are back-filled by reading
that text (the one place the wording is parsed): "turn N arrived" is an arrival, "pin / unpin /
restore of turn N" those actions, "settings changed" a settings change, anything else ``budget``.
A restore logged as the second chance (an ``auto_restore`` event for the same turn at the same
step) becomes ``auto_restore``, as the service now records it.

Revision ID: 0003
Revises: 0002
"""
import re

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_TURN_CAUSE = re.compile(r"^over budget after (?:turn (\d+) arrived|(pin|unpin|restore) of turn (\d+))$")


def cause_of(reason: str) -> tuple[str, int | None]:
    """(cause, cause_turn) of an old record's reason text."""
    m = _TURN_CAUSE.match(reason)
    if m and m.group(1):
        return "arrival", int(m.group(1))
    if m:
        return m.group(2), int(m.group(3))
    if reason.startswith("over budget after settings changed"):
        return "settings", None
    return "budget", None


def upgrade() -> None:
    with op.batch_alter_table("evictions") as batch:
        batch.add_column(sa.Column("cause", sa.String(20), nullable=False, server_default="budget"))
        batch.add_column(sa.Column("cause_turn", sa.Integer, nullable=True))
    conn = op.get_bind()
    evictions = sa.table("evictions", sa.column("id", sa.Integer), sa.column("conversation_id", sa.Integer),
                         sa.column("step", sa.Integer), sa.column("reason", sa.String),
                         sa.column("cause", sa.String), sa.column("cause_turn", sa.Integer))
    events = sa.table("memory_events", sa.column("conversation_id", sa.Integer), sa.column("turn", sa.Integer),
                      sa.column("step", sa.Integer), sa.column("kind", sa.String))
    second_chances = {tuple(row) for row in conn.execute(
        sa.select(events.c.conversation_id, events.c.turn, events.c.step).where(events.c.kind == "auto_restore")
    )}
    updates = []
    for row_id, conv, step, reason in conn.execute(
        sa.select(evictions.c.id, evictions.c.conversation_id, evictions.c.step, evictions.c.reason)
    ):
        cause, turn = cause_of(reason or "")
        if cause == "restore" and (conv, turn, step) in second_chances:
            cause = "auto_restore"
        if (cause, turn) != ("budget", None):
            updates.append({"b_id": row_id, "b_cause": cause, "b_turn": turn})
    if updates:
        conn.execute(
            evictions.update().where(evictions.c.id == sa.bindparam("b_id"))
            .values(cause=sa.bindparam("b_cause"), cause_turn=sa.bindparam("b_turn")),
            updates,
        )


def downgrade() -> None:
    with op.batch_alter_table("evictions") as batch:
        batch.drop_column("cause_turn")
        batch.drop_column("cause")
