"""A unit of work's layer operations (``Tx``) and the ``Sink`` they write their rows through.

``Tx`` is what ``MemoryStore.transaction`` yields, and what an import builds on a ``RowBuffer``: each
operation asks the memory layer to decide, then hands the rows it implies to the sink (the unit of
work's transaction, ``storage.sinks.DatabaseSink``, or an import's buffer, ``storage.sinks.RowBuffer``;
both are reached through ``assistant.store``, which also re-exports ``Tx``). Nothing here touches the
database itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from sqlalchemy import Row

from assistant import need
from memory.layer import CiteOutcome, MemoryLayer
from memory.types import Citation, EvictionRecord, PinRefused, TurnState


class Sink(Protocol):
    """What a unit of work writes, and the two reads it makes of its own writes."""

    def add_turn(self, t: TurnState, content: str, **row) -> None: ...
    def turn_changed(self, t: TurnState) -> None: ...  # state, pin, protection start
    def add_citations(self, cites: Sequence[Citation]) -> None: ...
    def add_evictions(self, records: Sequence[EvictionRecord]) -> None: ...  # the turns' state too
    def add_event(self, kind: str, turn: int, step: int, detail: str = "") -> None: ...
    def add_feedback(self, answer_turn: int, step: int, value: float) -> None: ...
    def add_miss(self, turn: int, step: int, similarity: float, restored: bool) -> None: ...
    def answered(self, user_turn: int) -> bool: ...
    def recent_turns(self, limit: int) -> list[tuple]: ...  # (content, created_at, embedding, dim, role), oldest first


def _now() -> datetime:
    """Now, in UTC: the clock ``storage.models.utcnow`` stamps the rows with."""
    return datetime.now(UTC)


def previous_turns(rows: Iterable[tuple]) -> list[need.Previous]:
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

    def add_turn(
        self,
        role: str,
        content: str,
        tokens: int,
        arrival: need.Arrival | None = None,
        prior: float | None = None,
        **row,
    ) -> TurnState:
        """Store a turn with its prior expected need (``assistant/need.py``): ``prior`` when given (an
        exported turn's, kept on import), else ``arrival``'s, computed before the unit of work, if
        the conversation is still at its clock; else computed now."""
        if prior is not None:
            if self.recent is not None:  # the context a later turn without a prior reads
                now = need.Previous(content, _now(), need.vector_of(row.get("embedding"), row.get("embedding_dim")))
                self.recent = (self.recent + [now])[-need.CONTEXT_TURNS :]
            t = self.layer.add_turn(role, tokens, prior=prior)
            self.sink.add_turn(t, content, **row)
            return t
        if arrival is None or self.conv is None or arrival.at != (self.conv.created_at, self.layer.step):
            if self.recent is None:
                self.recent = previous_turns(self.sink.recent_turns(need.CONTEXT_TURNS))
            arrival = need.arrive(need.Context(None, self.recent), content, _now(), role=role, **row)
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
