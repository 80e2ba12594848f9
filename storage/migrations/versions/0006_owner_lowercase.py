"""Owners compare without case: stored email (and CLI name) owners are lower-cased.

A signed-in person's owner is their verified email, stripped and lower-cased, or, without one,
``"<iss>#<sub>"`` (``assistant.identity``). Owners stored before that rule were the raw ``email``
claim (or a ``--user`` name) as typed, so ``Ana@Example.org`` would no longer see their
conversations; here every owner that is not an ``"<iss>#<sub>"`` identity (an issuer is a URL:
``://`` before the first ``#``) becomes its stripped, lower-cased form (Python's ``str.lower``, the
same the app applies; SQL's ``lower()`` is ASCII-only on SQLite). Two owners differing only in case
become one, which is the point: they were one person split in two. Subjects keep their case. The
rule is copied here, not imported, so this revision means the same thing whatever the app becomes.

Downgrade changes nothing: the original case is not kept, and lower-cased owners work either way.

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _normal(owner: str) -> str:
    head, sep, tail = owner.strip().partition("#")
    if sep and tail and "://" in head:
        return owner.strip()
    return owner.strip().lower()


def upgrade() -> None:
    conn = op.get_bind()
    convs = sa.table("conversations", sa.column("id"), sa.column("owner"))
    rows = conn.execute(sa.select(convs.c.id, convs.c.owner).where(convs.c.owner.is_not(None))).all()
    # a blank owner stays as it is: made empty it would read as owner-less, visible without sign-in
    updates = [{"row_id": i, "normal": _normal(o)} for i, o in rows if _normal(o) and _normal(o) != o]
    if updates:
        conn.execute(convs.update().where(convs.c.id == sa.bindparam("row_id")).values(owner=sa.bindparam("normal")), updates)


def downgrade() -> None:
    pass
