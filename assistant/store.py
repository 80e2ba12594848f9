"""MemoryStore: the memory layer and the database, kept in step; the only door to ``storage/``.

Everything above it (service, replay, pages, terminal) reads and writes conversations through
this module: ``open_store(url)`` opens (and migrates) a database, the read methods (``pages``,
``view``, ``transcript``, ``reading``, ``pending_user_turn``) give one consistent moment of it, and ``NotFound``
is the error for a conversation that does not exist or is not the caller's.

Every change happens in a unit of work (``store.transaction(conv_id)``): the conversation row is
locked (``BEGIN IMMEDIATE`` on SQLite, ``SELECT ... FOR UPDATE`` elsewhere), the in-RAM layer is
taken from a cache only if the stored ``version`` says nobody else changed the conversation
(otherwise rebuilt from the database alone), the layer decides, and the rows it implies are written
in the same transaction. If anything fails, the transaction rolls back and the cached layer is
dropped, so the next unit of work rebuilds from what was committed: no half-written state survives
(an import: many short transactions into a *pending* conversation, revealed in one). No owner sees
owner-less conversations only. Per-turn work (the need prior) is done before the lock: ``arrival``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import Connection, Engine, Row, select
from sqlalchemy.orm import Session

from assistant import need
from assistant.cache import ByteCache
from assistant.config import default_url
from assistant.scope import OwnerScope
from assistant.store_errors import storage_errors as _storage_errors
from memory import transcript as T
from memory.layer import CiteOutcome, MemoryLayer
from memory.types import EvictionRecord, MemorySettings, PinRefused, TurnState
from storage import candidates, chunks, repo
from storage.candidates import Reader
from storage.db import make_engine, read_engine
from storage.models import Conversation, Turn, utcnow
from storage.repo import NotFound
from storage.sinks import DatabaseSink, RowBuffer, Sink
from storage.views import MemoryView, PageReader

__all__ = [
    "MemoryStore",
    "MemoryView",
    "NotFound",
    "OwnerScope",
    "PageReader",
    "Reader",
    "RowBuffer",
    "Tx",
    "default_url",
    "open_store",
]


# per process; a layer's RAM per turn, rounded up from ~460 bytes traced (tracemalloc, 20,000 turns)
LAYER_CACHE_BYTES, LAYER_BYTES_PER_STEP = 256 * 1024 * 1024, 600


def open_store(url: str | None = None, *, migrate: bool = True) -> MemoryStore:
    """The store on the database at ``url`` (default: ``default_url()``, the environment's),
    migrated to the current schema unless ``migrate`` is false. ``close()`` it when done."""
    return MemoryStore(make_engine(url or default_url(), migrate=migrate))


def load_layer(s: Session | Connection, conv: Conversation | Row) -> MemoryLayer:
    """Rebuild a conversation's memory state from the database alone."""
    return MemoryLayer.from_state(
        repo.settings_of(conv),
        repo.load_turn_states(s, conv.id),
        repo.load_citations(s, conv.id),
        repo.load_feedback(s, conv.id),
        step=conv.step,
    )


def _recent(rows: Iterable[tuple]) -> list[need.Previous]:
    """Recent turns' (content, created_at, embedding, dim, role) rows as the need estimator reads them."""
    return [need.Previous(c, at, need.vector_of(e, d), role) for c, at, e, d, role in rows]


@dataclass
class Tx:
    """One unit of work on one conversation: layer operations that also write their rows to ``sink``
    (the unit of work's transaction, or an import's ``RowBuffer``). ``conv``: the row as it began;
    None for an import built before its row exists."""

    sink: Sink
    conv: Row | None
    layer: MemoryLayer
    dropped: int = 0
    recent: list[need.Previous] | None = None  # the next turn's need context, read when first needed

    def add_turn(self, role: str, content: str, tokens: int, arrival: need.Arrival | None = None, **row) -> TurnState:
        """Store a turn with its prior expected need (``assistant/need.py``): ``arrival``'s, computed
        before the unit of work, if the conversation is still at its clock; else computed now."""
        if arrival is None or self.conv is None or arrival.at != (self.conv.created_at, self.layer.step):
            if self.recent is None:
                self.recent = _recent(self.sink.recent_turns(need.CONTEXT_TURNS))
            arrival = need.arrive(need.Context(None, self.recent), content, utcnow(), role=role, **row)
        self.recent = arrival.after
        t = self.layer.add_turn(role, tokens, prior=arrival.prior)
        self.sink.add_turn(t, content, **row)
        return t

    def context(self) -> need.Context | None:
        """What the next turn's prior reads, if this unit of work knows it (it stored a turn)."""
        if self.recent is None or self.conv is None:
            return None
        return need.Context((self.conv.created_at, self.layer.step), self.recent)

    def answered(self, user_turn: int) -> bool:
        """Has ``user_turn`` an answer? (An answer stores the user turn it answers: ``reply_to``.)"""
        return self.sink.answered(user_turn)

    def cite(
        self, turns: Iterable[int | tuple[int, float]], *, offered=None, source="retrieval", answer_turn=None
    ) -> CiteOutcome:
        out = self.layer.cite(turns, offered=offered, source=source, answer_turn=answer_turn)
        self.sink.add_citations(out.recorded)
        self.dropped += out.dropped
        return out

    def enforce(self, cause: str = "budget", cause_turn: int | None = None) -> list[EvictionRecord]:
        """Enforce the budget; the records name what pushed it over (``memory.types.CAUSES``)."""
        return self._evicted(self.layer.enforce_budget(cause, cause_turn))

    def _evicted(self, records: list[EvictionRecord]) -> list[EvictionRecord]:
        self.sink.add_evictions(records)
        return records

    def _sync(self, number: int) -> None:
        self.sink.turn_changed(self.layer.turn(number))

    def pin(self, number: int) -> tuple[list[EvictionRecord], str | None]:
        """Pin (restoring an evicted turn first). Returns (evictions, refusal message or None):
        a pin past the cap changes nothing but is logged, so the user can see why it was refused."""
        if self.layer.turn(number).pinned:
            return [], None
        try:
            records = self.layer.pin(number)
        except PinRefused as exc:
            self.sink.add_event("pin_refused", number, self.layer.step, str(exc))
            return [], str(exc)
        self._sync(number)
        self.sink.add_event("pin", number, self.layer.step)
        return self._evicted(records), None

    def unpin(self, number: int) -> list[EvictionRecord]:
        if not self.layer.turn(number).pinned:
            return []
        records = self.layer.unpin(number)
        self._sync(number)
        self.sink.add_event("unpin", number, self.layer.step)
        return self._evicted(records)

    def restore(self, number: int, kind: str = "restore") -> list[EvictionRecord]:
        if self.layer.turn(number).active:
            return []
        records = self.layer.restore(number, cause=kind)
        self._sync(number)
        self.sink.add_event(kind, number, self.layer.step)
        return self._evicted(records)

    def feedback(self, answer_turn: int, value: float) -> None:
        self.layer.turn(answer_turn)  # raises UnknownTurn for a turn that does not exist
        self.layer.feedback(answer_turn, value)
        self.sink.add_feedback(answer_turn, self.layer.step, value)
        # also in the event log, so an export keeps its order among pins and restores
        self.sink.add_event("feedback", answer_turn, self.layer.step, repr(float(value)))

    def answer_note(self, answer_turn: int, *, cut_at: int | None = None) -> None:
        """The token limit that cut an answer (its turn is stored ``incomplete``), for the chat to
        say where. Logged as an ``answer`` event: it changes nothing in memory, and an export skips
        it. (Which question an answer answers is its turn's ``reply_to``, not a note.)"""
        if cut_at is not None:
            self.sink.add_event("answer", answer_turn, self.layer.step, json.dumps({"cut_at": cut_at}))

    def miss(self, turn: int, similarity: float, restored: bool) -> None:
        self.sink.add_miss(turn, self.layer.step, similarity, restored)


class MemoryStore:
    """Thread-safe access to conversations' memory, shared by the app's sessions (cache_resource)."""

    def __init__(self, engine: Engine):
        self.engine = engine  # for the load test and the tests; the product goes through the methods
        self.reader = read_engine(engine)
        # id -> ((created_at, version), layer): SQLite reuses a deleted conversation's id, so a
        # layer is valid only for the same creation at the same version
        self._cache = ByteCache(LAYER_CACHE_BYTES)
        self.default_settings = MemorySettings()  # for new conversations (the runtime may lower the budget)
        self._locks: dict[int, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, conv_id: int) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(conv_id, threading.Lock())

    def close(self) -> None:
        self.engine.dispose()  # the store may be opened again by ``open_store``

    # ----- conversations -------------------------------------------------------------------
    def create(
        self,
        title: str,
        settings: MemorySettings | None = None,
        *,
        owner: str | None = None,
        auto_restore: bool = False,
    ) -> int:
        settings = settings or self.default_settings
        layer = MemoryLayer(settings)  # validates the policy name and parameters before anything is stored
        with _storage_errors(), self.engine.begin() as conn:
            conv = repo.create_conversation(conn, title, settings, owner=owner, auto_restore=auto_restore)
        self._keep(conv, conv.version, layer)
        return conv.id

    def conversations(self, *, owner: str | None = None) -> list[Conversation]:
        with Session(self.reader, expire_on_commit=False) as s:
            return repo.list_conversations(s, owner=owner)

    def conversation(self, conv_id: int, *, owner: str | None = None) -> Conversation:
        with Session(self.reader, expire_on_commit=False) as s:
            return repo.get_conversation(s, conv_id, owner=owner)

    def rename(self, conv_id: int, title: str, *, owner: str | None = None) -> None:
        with self._unit(conv_id, owner) as (conn, _):
            repo.update_conversation(conn, conv_id, title=title)

    def delete(self, conv_id: int, *, owner: str | None = None) -> None:
        """Gone for everyone in one short transaction (hidden as pending), then deleted in chunks."""
        with _storage_errors(), Session(self.engine) as s, s.begin():
            repo.get_conversation(s, conv_id, owner=owner, lock=True)
            repo.update_conversation(s, conv_id, pending=True)
        self._cache.pop(conv_id)
        self.discard_import(conv_id)

    def claim(self, conv_id: int, *, owner: str, holder: str | None = None) -> None:
        """Give an owner-less conversation (or ``holder``'s) to ``owner``; ``NotFound`` if it has another."""
        with _storage_errors(), self.engine.begin() as conn:
            repo.claim_conversation(conn, conv_id, owner, holder)

    def any_owned(self) -> bool:
        """Does any conversation have an owner? Then a page without sign-in must refuse to run."""
        with self.reader.connect() as conn:
            return repo.any_owned(conn)

    def update_settings(
        self, conv_id: int, settings: MemorySettings, *, auto_restore: bool | None = None, owner: str | None = None
    ) -> list[EvictionRecord]:
        """Change budget/lag/policy; the new budget is enforced at once (and recorded)."""
        MemoryLayer(settings)
        with self._unit(conv_id, owner) as (conn, tx):
            values = settings.to_dict()
            if auto_restore is not None:
                values["auto_restore"] = auto_restore
            repo.update_conversation(conn, conv_id, **values)
            tx.layer = MemoryLayer.from_state(
                settings, tx.layer.turns(), tx.layer.citations(), tx.layer.feedback_values(), step=tx.layer.step
            )
            return tx.enforce("settings")

    def save_vectors(self, conv_id: int, vectors: list[tuple[int, bytes, str, int]]) -> None:
        """Store vectors (seq, packed, model, dim) of stored turns; no version bump (the memory is the same)."""
        for start in range(0, len(vectors), 500):
            with _storage_errors(), self.engine.begin() as conn:
                candidates.set_vectors(conn, conv_id, vectors[start : start + 500])

    # ----- imports, written in short transactions ------------------------------------------
    def begin_import(self, title: str, settings: MemorySettings, *, owner: str | None = None) -> Row:
        """A new, pending conversation (invisible until ``reveal_import``), filled by ``write_rows``."""
        with _storage_errors(), self.engine.begin() as conn:
            return repo.create_conversation(conn, title, settings, owner=owner, pending=True)

    def write_rows(self, table: str, rows: list[dict]) -> None:
        """One short transaction inserting rows of a pending import (converted before it begins)."""
        prepared = chunks.prepare_rows(self.engine.dialect, table, rows)
        with _storage_errors(), self.engine.begin() as conn:
            chunks.insert_prepared(conn, prepared)

    def reveal_import(self, conv: Row, layer: MemoryLayer, dropped: int) -> None:
        """The import's one short final transaction: the conversation appears whole."""
        with _storage_errors(), self.engine.begin() as conn:
            version = chunks.reveal(conn, conv.id, layer.step, dropped)
        self._keep(conv, version, layer)

    def discard_import(self, conv_id: int, chunk: int = 5000) -> None:
        """Delete a pending conversation, ``chunk`` rows per transaction (never a long write lock)."""
        while True:
            with _storage_errors(), self.engine.begin() as conn:
                if not chunks.delete_some(conn, conv_id, chunk):
                    return

    def sweep_imports(self, older_than_seconds: float = 3600.0) -> int:
        """Discard pending conversations older than this (an import or delete cut off by a crash)."""
        with self.reader.connect() as conn:
            stale = chunks.pending_conversations(conn, repo.utcnow() - timedelta(seconds=older_than_seconds))
        for conv_id in stale:
            self.discard_import(conv_id)
        return len(stale)

    def arrival(
        self, conv_id: int, content: str, *, role: str = "user", owner: str | None = None, **row
    ) -> need.Arrival:
        """A new turn's prior (by ``role``), from one read before its unit of work (no write lock held for it)."""
        with _storage_errors(), self.reader.begin() as conn:
            conv = repo.conversation_row(conn, conv_id, owner=owner)
            context = need.Context(
                (conv.created_at, conv.step), _recent(repo.recent_turns(conn, conv_id, need.CONTEXT_TURNS))
            )
        return need.arrive(context, content, utcnow(), role=role, **row)

    # ----- units of work -------------------------------------------------------------------
    @contextmanager
    def transaction(self, conv_id: int, *, owner: str | None = None) -> Iterator[Tx]:
        with self._unit(conv_id, owner) as (_, tx):
            yield tx

    @contextmanager
    def _unit(self, conv_id: int, owner: str | None) -> Iterator[tuple[Connection, Tx]]:
        """A unit of work and its connection (the store's own writes: the conversation's columns)."""
        with self._lock(conv_id), _storage_errors():
            with self.engine.begin() as conn:
                conv = repo.conversation_row(conn, conv_id, owner=owner, lock=True)
                cached = self._cache.pop(conv_id)
                layer = cached[1] if cached and cached[0] == (conv.created_at, conv.version) else load_layer(conn, conv)
                tx = Tx(DatabaseSink(conn, conv.id), conv, layer)
                yield conn, tx
                version = repo.bump(conn, conv_id, conv.version, tx.layer.step, tx.dropped)
            # committed: the layer now matches the database
            self._keep(conv, version, tx.layer)

    def _keep(self, conv: Row, version: int, layer: MemoryLayer) -> None:
        self._cache.put(conv.id, ((conv.created_at, version), layer), LAYER_BYTES_PER_STEP * (layer.step + 1))

    # ----- reading ---------------------------------------------------------------------------
    def layer(self, conv_id: int, *, owner: str | None = None) -> MemoryLayer:
        """A private copy of the current memory state, for reading (the inspector, retrieval)."""
        with Session(self.reader) as s:
            conv = repo.get_conversation(s, conv_id, owner=owner)
            return load_layer(s, conv)

    @contextmanager
    def reading(self) -> Iterator[Reader]:
        """A read-only session for several reads that must agree (the service's candidates)."""
        with Session(self.reader) as s:
            yield Reader(s)

    @contextmanager
    def pages(self, conv_id: int, *, owner: str | None = None) -> Iterator[PageReader]:
        """A read-only session on one conversation for a page's reads, bounded by what it shows
        (``storage.views``); ``NotFound`` if it does not exist or is not the caller's."""
        with _storage_errors(), Session(self.reader) as s:
            yield PageReader(s, repo.conversation_row(s, conv_id, owner=owner))

    def view(self, conv_id: int, *, owner: str | None = None) -> MemoryView:
        """One conversation whole, read in one session (what-if replays, checks); the layer is
        rebuilt once, from the same turn rows and feedback the view holds."""
        with Session(self.reader, expire_on_commit=False) as s:
            conv = repo.get_conversation(s, conv_id, owner=owner)
            turns = repo.turn_rows(s, conv_id, vectors=False)
            feedback = repo.load_feedback(s, conv_id)
            layer = MemoryLayer.from_state(
                repo.settings_of(conv),
                repo.turn_states_of(turns),
                repo.load_citations(s, conv_id),
                feedback,
                step=conv.step,
            )
            view = MemoryView(
                conv,
                layer,
                turns,
                repo.load_evictions(s, conv_id),
                repo.load_events(s, conv_id),
                repo.load_misses(s, conv_id),
                feedback,
            )
            s.expunge_all()
        return view

    def transcript(self, conv_id: int, *, owner: str | None = None) -> T.Transcript:
        """The conversation in the saved format: its settings, turns with the cites each answer
        made, and the pins, unpins, restores and feedback in the order they happened (refused pins
        changed nothing and are left out; the second chance is a restore)."""
        with Session(self.reader) as s:
            conv = repo.get_conversation(s, conv_id, owner=owner)
            settings = repo.settings_of(conv)
            header = {"lagmem": T.FORMAT_VERSION, "title": conv.title, **settings.to_dict()}
            if not settings.policy_params:
                del header["policy_params"]  # a header names parameters only when some are set
            cites = repo.load_answer_cites(s, conv_id)
            events: dict[int, list[T.EventLine]] = {}
            for e in repo.load_events(s, conv_id):
                kind = {"auto_restore": "restore"}.get(e.kind, e.kind)
                if kind in T.EVENTS:
                    events.setdefault(e.step, []).append(
                        T.EventLine(kind, e.turn, float(e.detail) if kind == "feedback" else None)
                    )
            items: list = list(events.get(0, []))
            for row in repo.turn_rows(s, conv_id, vectors=False):
                items.append(
                    T.TurnLine(row.seq, row.role, row.content, tuple(cites.get(row.seq, ())), reply_to=row.reply_to)
                )
                items.extend(events.get(row.seq, []))
        return T.Transcript(header, items)

    def pending_user_turn(
        self, conv_id: int, *, owner: str | None = None, turn: int | None = None
    ) -> tuple[Turn, bool] | None:
        """User turn ``turn`` (default: the last turn) when it has no answer yet (an exchange that
        failed or was cut off), with whether it is the conversation's last turn; else None.
        Answered means an assistant turn names it in ``reply_to`` (every stored answer does)."""
        with Session(self.reader, expire_on_commit=False) as s:
            repo.get_conversation(s, conv_id, owner=owner)
            last = repo.last_turn(s, conv_id)
            q = (
                last
                if turn is None
                else s.scalars(select(Turn).where(Turn.conversation_id == conv_id, Turn.seq == turn)).first()
            )
            if q is None or q.role != "user" or repo.answered(s, conv_id, q.seq):
                return None
            s.expunge(q)
            return q, last is not None and q.seq == last.seq

    def history(self, conv_id: int, *, owner: str | None = None) -> tuple[MemoryLayer, list, list]:
        """The memory state, the stored events (pins, restores, feedback) and the miss log, read at
        one moment without the turns' text: what a what-if replay needs (``assistant.whatif``)."""
        with Session(self.reader, expire_on_commit=False) as s:
            conv = repo.get_conversation(s, conv_id, owner=owner)
            out = load_layer(s, conv), repo.load_events(s, conv_id), repo.load_misses(s, conv_id)
            s.expunge_all()
        return out
