"""Engine setup and migrations for the database at a given URL.

The URL is handed in: ``assistant.config`` reads LAGMEM_DATABASE_URL / LAGMEM_DATA_DIR, this module
reads no environment. SQLite is the embedded default (a file in the data directory), tuned in a
``connect`` listener: WAL, busy_timeout, foreign keys on. Write transactions start with ``BEGIN
IMMEDIATE`` so two writers queue on the lock instead of failing half-way with "database is
locked"; read-only sessions (``read_engine``) begin deferred. Any other SQLAlchemy URL (PostgreSQL via psycopg) works.
Migrations run automatically when an engine is opened.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url

MIGRATIONS = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_MS = 30_000


def _sqlite_listeners(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's implicit BEGIN is deferred).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        mode = "DEFERRED" if conn.get_execution_options().get("lagmem_readonly") else "IMMEDIATE"
        conn.exec_driver_sql(f"BEGIN {mode}")


def make_engine(url: str, *, migrate: bool = True) -> Engine:
    """Open (and by default migrate) the database at ``url``."""
    if not url:
        raise ValueError("make_engine() needs a database URL (assistant.config.default_url())")
    parsed = make_url(url)
    kwargs: dict = {"future": True}
    if parsed.get_backend_name() == "sqlite":
        db = parsed.database
        if db and db != ":memory:" and not parsed.query.get("uri"):  # a file: URI names no directory to make
            Path(db).expanduser().parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
    else:
        kwargs["pool_pre_ping"] = True
    engine = create_engine(url, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        _sqlite_listeners(engine)
    if migrate:
        upgrade(engine)
    return engine


def read_engine(engine: Engine) -> Engine:
    """The same database for read-only work: SQLite reads then do not take the write lock."""
    return engine.execution_options(lagmem_readonly=True)


def alembic_config(engine: Engine) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run migrations up to ``revision`` in one transaction (concurrent starters wait, then no-op)."""
    cfg = alembic_config(engine)
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        if sqlite:
            # Batch migrations rebuild tables (copy, drop, rename). With foreign keys on, dropping
            # the old parent table would cascade-delete every child row, so they are off while
            # migrating (the pragma only takes effect outside a transaction) and checked after.
            conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                if engine.dialect.name == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(7431001)"))
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, revision)
                if sqlite:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise RuntimeError(f"migration left rows with broken references: {broken[:5]}")
        finally:
            if sqlite:
                conn.connection.dbapi_connection.execute("PRAGMA foreign_keys=ON")


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()
