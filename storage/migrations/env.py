"""Alembic environment: always runs on the connection handed over by ``storage.db.upgrade``."""

from alembic import context

from storage.models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - only via storage.db.upgrade
    raise RuntimeError("run migrations through storage.db.upgrade(engine)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,
    transactional_ddl=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
