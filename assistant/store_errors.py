"""What the database said when a change could not be saved, in words a user can act on.

The store wraps every write in ``storage_errors()``: a full, read-only or locked database (SQLite's
messages or PostgreSQL's SQLSTATE) becomes a ``StorageError`` whose text says what happened and what
to do; anything else is raised unchanged. Only SQLAlchemy's exception types are needed here, so the
mapping sits apart from the store (the only module that touches ``storage/``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError

from assistant.errors import StorageError

_FULL = ("database or disk is full", "no space left", "disk full", "could not extend file")
_READ_ONLY = ("readonly database", "read-only", "read only")
_LOCKED = ("database is locked", "database table is locked", "lock timeout")
_PG_STATES = {
    "53100": "full",
    "25006": "read_only",
    "55P03": "locked",
}  # disk_full, read_only_sql_transaction, lock_not_available


def storage_error(exc: DBAPIError) -> StorageError | None:
    """The ``StorageError`` for a full, read-only or locked database; None for anything else."""
    text = str(getattr(exc, "orig", exc)).lower()
    kind = _PG_STATES.get(getattr(getattr(exc, "orig", None), "sqlstate", None) or "")
    if kind is None:
        kind = next(
            (
                k
                for k, words in (("full", _FULL), ("read_only", _READ_ONLY), ("locked", _LOCKED))
                if any(w in text for w in words)
            ),
            None,
        )
    if kind == "full":
        return StorageError(
            "The disk holding the database is full: the change was not saved "
            "(nothing half-written). Free some space and try again.",
            kind,
        )
    if kind == "read_only":
        return StorageError(
            "The database is read-only: the change was not saved. Check the file's "
            "permissions or the database URL (mode=ro?).",
            kind,
        )
    if kind == "locked":
        return StorageError(
            "The database stayed busy (locked by another writer) for too long: the change was not saved. Try again.",
            kind,
        )
    return None


@contextmanager
def storage_errors() -> Iterator[None]:
    """Map the database's full/read-only/locked errors to ``StorageError`` (the cause is kept)."""
    try:
        yield
    except DBAPIError as exc:
        mapped = storage_error(exc)
        if mapped is None:
            raise
        raise mapped from exc
