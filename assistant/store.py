"""MemoryStore: the memory layer and the database, kept in step.

Every change happens in a unit of work (``store.transaction(conv_id)``): the conversation row is
locked (``BEGIN IMMEDIATE`` on SQLite, ``SELECT ... FOR UPDATE`` elsewhere), the in-RAM layer is
taken from a cache only if the stored ``version`` says nobody else changed the conversation
(otherwise rebuilt from the database alone), the layer decides, and the rows it implies are written
in the same transaction. If anything fails, the transaction rolls back and the cached layer is
dropped, so the next unit of work rebuilds from what was committed: no half-written state survives.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, Row
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from memory.layer import CiteOutcome, MemoryLayer
from memory.types import EvictionRecord, MemorySettings, PinRefused, TurnState
from storage import repo
from storage.db import read_engine
from storage.models import Conversation, utcnow

from . import need
from .embeddings import unpack_vector
from .errors import StorageError


def load_layer(s: Session | Connection, conv: Conversation | Row) -> MemoryLayer:
    """Rebuild a conversation's memory state from the database alone."""
    return MemoryLayer.from_state(
        repo.settings_of(conv),
        repo.load_turn_states(s, conv.id),
        repo.load_citations(s, conv.id),
        repo.load_feedback(s, conv.id),
        step=conv.step,
    )


def _prior(conn: Connection, conv_id: int, content: str, row: dict) -> float:
    """The need estimator's prior for a turn about to be stored, from the turns stored before it."""
    vectors = need.load_model().uses_vectors
    prev = [need.Previous(c, at, unpack_vector(e, d) if vectors and e else None)
            for c, at, e, d in repo.recent_turns(conn, conv_id, need.CONTEXT_TURNS)]
    vec = unpack_vector(row["embedding"], row.get("embedding_dim")) if vectors and row.get("embedding") else None
    return need.prior_for(content, prev, vec, utcnow())


@dataclass
class Tx:
    """One unit of work on one conversation: layer operations that also write their rows.

    ``conn`` is the transaction's Core connection; ``conv`` the conversation's row as it was when
    the unit of work began (change it with ``update``)."""

    conn: Connection
    conv: Row
    layer: MemoryLayer
    dropped: int = 0

    def update(self, **values) -> None:
        """Change the conversation's own columns (title, settings) in this transaction."""
        repo.update_conversation(self.conn, self.conv_id, **values)

    @property
    def conv_id(self) -> int:
        return self.conv.id

    def add_turn(self, role: str, content: str, tokens: int, **row) -> TurnState:
        """Store a turn; its prior expected need is computed now, once (``assistant/need.py``)."""
        t = self.layer.add_turn(role, tokens, prior=_prior(self.conn, self.conv_id, content, row))
        repo.insert_turn(self.conn, self.conv_id, t, content, **row)
        return t

    def cite(self, turns: Iterable[int | tuple[int, float]], *, offered=None, source="retrieval", answer_turn=None) -> CiteOutcome:
        out = self.layer.cite(turns, offered=offered, source=source, answer_turn=answer_turn)
        repo.insert_citations(self.conn, self.conv_id, out.recorded)
        self.dropped += out.dropped
        return out

    def enforce(self, reason: str | None = None) -> list[EvictionRecord]:
        return self._evicted(self.layer.enforce_budget(reason))

    def _evicted(self, records: list[EvictionRecord]) -> list[EvictionRecord]:
        repo.insert_evictions(self.conn, self.conv_id, records)
        return records

    def _sync(self, number: int) -> None:
        repo.sync_turn(self.conn, self.conv_id, self.layer.turn(number))

    def pin(self, number: int) -> tuple[list[EvictionRecord], str | None]:
        """Pin (restoring an evicted turn first). Returns (evictions, refusal message or None):
        a pin past the cap changes nothing but is logged, so the user can see why it was refused."""
        if self.layer.turn(number).pinned:
            return [], None
        try:
            records = self.layer.pin(number)
        except PinRefused as exc:
            repo.insert_event(self.conn, self.conv_id, "pin_refused", number, self.layer.step, str(exc))
            return [], str(exc)
        self._sync(number)
        repo.insert_event(self.conn, self.conv_id, "pin", number, self.layer.step)
        return self._evicted(records), None

    def unpin(self, number: int) -> list[EvictionRecord]:
        if not self.layer.turn(number).pinned:
            return []
        records = self.layer.unpin(number)
        self._sync(number)
        repo.insert_event(self.conn, self.conv_id, "unpin", number, self.layer.step)
        return self._evicted(records)

    def restore(self, number: int, kind: str = "restore") -> list[EvictionRecord]:
        if self.layer.turn(number).active:
            return []
        records = self.layer.restore(number)
        self._sync(number)
        repo.insert_event(self.conn, self.conv_id, kind, number, self.layer.step)
        return self._evicted(records)

    def feedback(self, answer_turn: int, value: float) -> None:
        self.layer.turn(answer_turn)  # raises UnknownTurn for a turn that does not exist
        self.layer.feedback(answer_turn, value)
        repo.insert_feedback(self.conn, self.conv_id, answer_turn, self.layer.step, value)
        # also in the event log, so an export keeps its order among pins and restores
        repo.insert_event(self.conn, self.conv_id, "feedback", answer_turn, self.layer.step, repr(float(value)))

    def miss(self, turn: int, similarity: float, restored: bool) -> None:
        repo.insert_miss(self.conn, self.conv_id, turn, self.layer.step, similarity, restored)


# ----- storage errors (issue 6): what the database said, in words a user can act on ------------
_FULL = ("database or disk is full", "no space left", "disk full", "could not extend file")
_READ_ONLY = ("readonly database", "read-only", "read only")
_LOCKED = ("database is locked", "database table is locked", "lock timeout")
_PG_STATES = {"53100": "full", "25006": "read_only", "55P03": "locked"}  # disk_full, read_only_sql_transaction, lock_not_available


def storage_error(exc: DBAPIError) -> StorageError | None:
    """The ``StorageError`` for a full, read-only or locked database; None for anything else."""
    text = str(getattr(exc, "orig", exc)).lower()
    kind = _PG_STATES.get(getattr(getattr(exc, "orig", None), "sqlstate", None) or "")
    if kind is None:
        kind = next((k for k, words in (("full", _FULL), ("read_only", _READ_ONLY), ("locked", _LOCKED))
                     if any(w in text for w in words)), None)
    if kind == "full":
        return StorageError("The disk holding the database is full: the change was not saved "
                            "(nothing half-written). Free some space and try again.", kind)
    if kind == "read_only":
        return StorageError("The database is read-only: the change was not saved. Check the file's "
                            "permissions or the database URL (mode=ro?).", kind)
    if kind == "locked":
        return StorageError("The database stayed busy (locked by another writer) for too long: the "
                            "change was not saved. Try again.", kind)
    return None


@contextmanager
def _storage_errors() -> Iterator[None]:
    """Map the database's full/read-only/locked errors to ``StorageError`` (the cause is kept)."""
    try:
        yield
    except DBAPIError as exc:
        mapped = storage_error(exc)
        if mapped is None:
            raise
        raise mapped from exc


class MemoryStore:
    """Thread-safe access to conversations' memory, shared by the app's sessions (cache_resource)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.reader = read_engine(engine)
        self._cache: dict[int, tuple[int, MemoryLayer]] = {}
        # settings for new conversations (the runtime lowers the budget for the small local model)
        self.default_settings = MemorySettings()
        self._locks: dict[int, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, conv_id: int) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(conv_id, threading.Lock())

    # ----- conversations -------------------------------------------------------------------
    def create(self, title: str, settings: MemorySettings | None = None, *, owner: str | None = None, auto_restore: bool = False) -> int:
        with self.new(title, settings, owner=owner, auto_restore=auto_restore) as tx:
            return tx.conv_id

    @contextmanager
    def new(self, title: str, settings: MemorySettings | None = None, *, owner: str | None = None, auto_restore: bool = False) -> Iterator[Tx]:
        """Create a conversation and fill it in the same transaction: an import lands whole or
        not at all (no empty conversation is left behind by a file that fails half-way)."""
        settings = settings or self.default_settings
        layer = MemoryLayer(settings)  # validates the policy name and parameters before anything is stored
        with _storage_errors(), self.engine.begin() as conn:
            conv = repo.create_conversation(conn, title, settings, owner=owner, auto_restore=auto_restore)
            tx = Tx(conn, conv, layer)
            yield tx
            version = repo.bump(conn, conv.id, conv.version, tx.layer.step, tx.dropped)
        self._cache[conv.id] = (version, tx.layer)

    def conversations(self, owner: str | None = None) -> list[Conversation]:
        with Session(self.reader, expire_on_commit=False) as s:
            return repo.list_conversations(s, owner=owner)

    def conversation(self, conv_id: int, owner: str | None = None) -> Conversation:
        with Session(self.reader, expire_on_commit=False) as s:
            return repo.get_conversation(s, conv_id, owner=owner)

    def rename(self, conv_id: int, title: str, owner: str | None = None) -> None:
        with self.transaction(conv_id, owner=owner) as tx:
            tx.update(title=title)

    def delete(self, conv_id: int, owner: str | None = None) -> None:
        with _storage_errors(), Session(self.engine) as s, s.begin():
            repo.get_conversation(s, conv_id, owner=owner, lock=True)
            repo.delete_conversation(s, conv_id)
        self._cache.pop(conv_id, None)

    def update_settings(self, conv_id: int, settings: MemorySettings, *, auto_restore: bool | None = None, owner: str | None = None) -> list[EvictionRecord]:
        """Change budget/lag/policy; the new budget is enforced at once (and recorded)."""
        MemoryLayer(settings)
        with self.transaction(conv_id, owner=owner) as tx:
            values = dict(budget=settings.budget, lag=settings.lag, policy=settings.policy, low_watermark=settings.low_watermark,
                          pin_share=settings.pin_share, policy_params=dict(settings.policy_params))
            if auto_restore is not None:
                values["auto_restore"] = auto_restore
            tx.update(**values)
            tx.layer = MemoryLayer.from_state(settings, tx.layer.turns(), tx.layer.citations(), tx.layer.feedback_values(), step=tx.layer.step)
            return tx.enforce(f"over budget after settings changed (budget {settings.budget}, policy {settings.policy})")

    # ----- units of work -------------------------------------------------------------------
    @contextmanager
    def transaction(self, conv_id: int, *, owner: str | None = None) -> Iterator[Tx]:
        with self._lock(conv_id), _storage_errors():
            with self.engine.begin() as conn:
                conv = repo.conversation_row(conn, conv_id, owner=owner, lock=True)
                cached = self._cache.pop(conv_id, None)
                layer = cached[1] if cached and cached[0] == conv.version else load_layer(conn, conv)
                tx = Tx(conn, conv, layer)
                yield tx
                version = repo.bump(conn, conv_id, conv.version, tx.layer.step, tx.dropped)
            # committed: the layer now matches the database
            self._cache[conv_id] = (version, tx.layer)

    def layer(self, conv_id: int, owner: str | None = None) -> MemoryLayer:
        """A private copy of the current memory state, for reading (the inspector, retrieval)."""
        with Session(self.reader) as s:
            conv = repo.get_conversation(s, conv_id, owner=owner)
            return load_layer(s, conv)


class OwnerScope:
    """A MemoryStore as one signed-in user sees it: every call is limited to that user's
    conversations (another user's id is simply ``NotFound``); new conversations belong to them.
    Anything not listed here (the engine, the reader) is the shared store's."""

    def __init__(self, store: MemoryStore, owner: str):
        if not owner:
            raise ValueError("an OwnerScope needs an owner")
        self.store, self.owner = store, owner

    def __getattr__(self, name):
        return getattr(self.store, name)

    def create(self, title: str, settings: MemorySettings | None = None, *, owner=None, auto_restore: bool = False) -> int:
        return self.store.create(title, settings, owner=self.owner, auto_restore=auto_restore)

    def new(self, title: str, settings: MemorySettings | None = None, *, owner=None, auto_restore: bool = False):
        return self.store.new(title, settings, owner=self.owner, auto_restore=auto_restore)

    def conversations(self, owner=None) -> list[Conversation]:
        return self.store.conversations(owner=self.owner)

    def conversation(self, conv_id: int, owner=None) -> Conversation:
        return self.store.conversation(conv_id, owner=self.owner)

    def rename(self, conv_id: int, title: str, owner=None) -> None:
        self.store.rename(conv_id, title, owner=self.owner)

    def delete(self, conv_id: int, owner=None) -> None:
        self.store.delete(conv_id, owner=self.owner)

    def update_settings(self, conv_id: int, settings: MemorySettings, *, auto_restore: bool | None = None, owner=None):
        return self.store.update_settings(conv_id, settings, auto_restore=auto_restore, owner=self.owner)

    def transaction(self, conv_id: int, *, owner=None):
        return self.store.transaction(conv_id, owner=self.owner)

    def layer(self, conv_id: int, owner=None) -> MemoryLayer:
        return self.store.layer(conv_id, owner=self.owner)


def owner_of(store) -> str | None:
    """The user a store is scoped to (None: the unscoped, single-user store)."""
    return getattr(store, "owner", None) if isinstance(store, OwnerScope) else None
