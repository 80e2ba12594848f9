"""Email owners compare without case: stored email owners are stripped and lower-cased.

A signed-in person's owner is their verified email, stripped and lower-cased, or, without one,
``"<iss>#<sub>"`` (``assistant.identity``). Owners stored before that rule were the raw ``email``
claim (or a ``--user`` value) as typed, so ``Ana@Example.org`` would no longer see their
conversations; here every email owner (an ``@`` with text on both sides, no white space, and not an
``"<iss>#<sub>"`` identity, whose issuer is a URL: ``://`` before the first ``#``) becomes its
stripped, lower-cased form (Python's ``str.lower``, as the app applies it; SQL's ``lower()`` is
ASCII-only on SQLite). Two email owners differing only in case become one, which is the point: they
were one person split in two. Other owners (names, bare subjects: case-sensitive) are left as they
are. The rule is copied here, not imported, so this revision means the same whatever the app becomes.

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
    text = owner.strip()
    head, sep, tail = text.partition("#")
    local, at, domain = text.rpartition("@")
    email = bool(at and local and domain) and not any(c.isspace() for c in text)
    return text.lower() if email and not (sep and tail and "://" in head) else owner


def upgrade() -> None:
    conn = op.get_bind()
    convs = sa.table("conversations", sa.column("id"), sa.column("owner"))
    rows = conn.execute(sa.select(convs.c.id, convs.c.owner).where(convs.c.owner.is_not(None))).all()
    updates = [{"row_id": i, "normal": _normal(o)} for i, o in rows if _normal(o) != o]
    if updates:
        conn.execute(convs.update().where(convs.c.id == sa.bindparam("row_id")).values(owner=sa.bindparam("normal")), updates)


def downgrade() -> None:
    pass
