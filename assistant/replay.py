"""Replay a saved conversation through the real memory layer and storage.

A replay is deterministic: the same file and settings give byte-identical JSON (contract 7). Each
stored turn is its own unit of work (turn, its citations, the evictions it causes: one transaction),
so a replay killed midway leaves exactly the turns it had committed. An import (``atomic``) lands
whole or not at all, written in short chunks by ``assistant.importer``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from assistant import need
from assistant.importer import WriteStats, write_import
from assistant.store import MemoryStore, RowBuffer, Tx
from assistant.work_budget import Deadline
from memory import transcript as T
from memory.layer import MemoryLayer
from memory.tokens import TokenCounter
from memory.types import MemorySettings

DEFAULTS = MemorySettings()
CHECK_EVERY = 200  # lines between two checks of an import's deadline


def settings_from(
    header: dict, *, budget=None, lag=None, policy=None, defaults: MemorySettings = DEFAULTS
) -> MemorySettings:
    """Flags beat the file's header, which beats ``defaults`` (the app passes its store's, so an
    imported file without a header gets the same budget as a new conversation)."""
    return MemorySettings.from_dict(header, defaults=defaults).override(budget=budget, lag=lag, policy=policy)


@dataclass
class ReplayLog:
    """What a replay saw, step by step: the data behind ``--json`` and the readable timeline."""

    settings: dict
    turns: list[dict] = field(default_factory=list)
    timeline: list[dict] = field(default_factory=list)
    evictions: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    dropped_cites: int = 0
    final: dict = field(default_factory=dict)
    conversation_id: int | None = None
    history: list[tuple[str, dict]] = field(default_factory=list)  # chronological, for people
    write: WriteStats | None = None  # an import's chunked write

    def as_dict(self) -> dict:
        return {
            "settings": self.settings,
            "turns": self.turns,
            "timeline": self.timeline,
            "evictions": self.evictions,
            "events": self.events,
            "dropped_cites": self.dropped_cites,
            "final": self.final,
        }


def _eviction_entry(r) -> dict:
    d = r.as_dict()
    d["importance"] = round(d["importance"], 6)
    for ru in d["runners_up"]:
        ru["importance"] = round(ru["importance"], 6)
    return d


def _apply(
    tx: Tx, item, counter: TokenCounter, log: ReplayLog, timeline: bool = True, arrival=None, tokens=None
) -> None:
    """One line of the file through the layer; its rows go into ``tx``'s transaction. ``tokens`` and
    ``arrival`` (the need prior) may come computed before the unit of work."""
    layer = tx.layer
    if isinstance(item, T.TurnLine):
        tokens = counter.count(item.content) if tokens is None else tokens
        # stored as the live chat stores it: every answer names the question it answers
        previous = layer.turn(layer.step).role if layer.step else ""
        # an exported turn keeps the prior it arrived with, and an answer the limit that cut it
        t = tx.add_turn(
            item.role,
            item.content,
            tokens,
            arrival=arrival,
            prior=item.prior,
            reply_to=T.answers(item, previous),
            incomplete=item.cut_at is not None,
        )
        tx.answer_note(t.number, cut_at=item.cut_at)
        log.turns.append({"turn": t.number, "role": t.role, "tokens": tokens})
        if item.cites:
            log.dropped_cites += tx.cite(list(item.cites), answer_turn=t.number, source="replay").dropped
        records = tx.enforce("arrival", t.number)
        if timeline:
            entry = layer.snapshot().as_timeline_entry()
            log.timeline.append(entry)
            log.history.append(("turn", {**log.turns[-1], **entry}))
        _log_evictions(log, records)
        return
    entry = {"step": layer.step, "event": item.event, "turn": item.turn}
    records = []
    if item.event == "pin":
        records, refused = tx.pin(item.turn)
        if refused:
            entry["refused"] = refused
    elif item.event == "unpin":
        records = tx.unpin(item.turn)
    elif item.event == "restore":
        records = tx.restore(item.turn)
    elif item.event == "feedback":
        tx.feedback(item.turn, item.value)
        entry["value"] = item.value
    elif item.event == "miss":  # as the exchange logs it: the miss, then the second chance's restore
        restored = item.restored and not layer.turn(item.turn).active
        tx.miss(item.turn, item.value, restored)
        if restored:
            records = tx.restore(item.turn, kind="auto_restore")
        entry["similarity"], entry["restored"] = item.value, restored
    log.events.append(entry)
    log.history.append(("event", entry))
    _log_evictions(log, records)


def _log_evictions(log: ReplayLog, records) -> None:
    for r in records:
        e = _eviction_entry(r)
        log.evictions.append(e)
        log.history.append(("eviction", e))


def _finish(log: ReplayLog, layer: MemoryLayer) -> None:
    snap = layer.snapshot()
    log.final = {
        "step": snap.step,
        "active": list(snap.active),
        "evicted": list(snap.evicted),
        "pinned": list(snap.pinned),
        "used_tokens": snap.used_tokens,
        "budget": snap.budget,
        "over_budget": snap.forced_over_budget,
    }


def replay(
    store: MemoryStore,
    transcript: T.Transcript,
    counter: TokenCounter,
    settings: MemorySettings,
    *,
    title: str | None = None,
    owner: str | None = None,
    atomic: bool = False,
    progress: Callable[[int], None] | None = None,
    timeline: bool | None = None,
    deadline: Deadline | None = None,
) -> ReplayLog:
    """Store ``transcript`` as a new conversation, line by line, through layer and storage.

    ``atomic``: an import (``assistant.importer``): whole or nothing, in linear time, the write
    lock held only for short chunks. ``timeline``: take a snapshot per turn (O(turns) each), which
    only the replay's printed timeline needs; by default a replay does and an import does not.
    ``deadline`` (an import only: it stores nothing before the end): stop with ``TooMuchWork`` when
    the layer's work passes it (``assistant.work_budget``)."""
    timeline = not atomic if timeline is None else timeline
    fresh = MemoryLayer(settings)
    log = ReplayLog(
        settings={
            **settings.to_dict(),
            "policy_params": fresh.policy.params(),  # every parameter in force, defaults included
            "effective_lag": fresh.lag,
            "tokens": counter.name,
            "tokens_exact": counter.exact,
        }
    )
    title = title or transcript.header.get("title") or "replay"
    auto_restore = bool(transcript.header.get("auto_restore", False))
    if atomic:
        # built in RAM first (no lock, nothing stored if the file fails in the layer), then
        # written in short chunks into a pending conversation and revealed at once
        tx = Tx(RowBuffer(), None, MemoryLayer(settings))
        total = len(transcript.items)
        for i, item in enumerate(transcript.items):
            _apply(tx, item, counter, log, timeline=timeline)
            if progress:
                progress(i)
            if deadline is not None and i % CHECK_EVERY == 0:
                deadline.check(i, total)
        _finish(log, tx.layer)
        store.sweep_imports()
        conv = store.begin_import(title, settings, owner=owner, auto_restore=auto_restore)
        log.write = write_import(store, conv, tx.sink, tx.layer, tx.dropped)
        log.conversation_id = conv.id
        return log
    conv_id = store.create(title, settings, owner=owner, auto_restore=auto_restore)
    log.conversation_id = conv_id
    layer, context = None, None
    for i, item in enumerate(transcript.items):
        # before the unit of work (no write lock held for them): the token count, and the need prior
        # from the context the last unit of work left (used only if the conversation is still there)
        tokens = arrival = None
        if isinstance(item, T.TurnLine):
            tokens = counter.count(item.content)
            arrival = need.arrive(context, item.content, role=item.role) if context is not None else None
        with store.transaction(conv_id, owner=owner) as tx:
            _apply(tx, item, counter, log, arrival=arrival, tokens=tokens)
            layer, context = tx.layer, tx.context() or context
        if progress:
            progress(i)
    _finish(log, layer or MemoryLayer(settings))
    return log


def per_percent(total: int, report: Callable[[int, int], None]) -> Callable[[int], None]:
    """A replay's ``progress(i)`` (i: the line's index) as ``report(lines done, percent)``, called
    once per whole percent of ``total`` lines: a bar's updates stay at most 101 however long the file."""
    last = -1

    def step(i: int) -> None:
        nonlocal last
        pct = (i + 1) * 100 // max(total, 1)
        if pct != last:
            last = pct
            report(i + 1, pct)

    return step


def export_transcript(store: MemoryStore, conv_id: int, owner: str | None = None) -> str:
    """A conversation in the saved format: export -> import -> export gives the same file."""
    return T.write(store.transcript(conv_id, owner=owner))
