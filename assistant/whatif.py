"""What if: a conversation's history replayed through the pure memory layer under other settings.

A *recording* is what happened in a conversation, independent of any memory decision: the turns in
order with their stored token counts, the citations each answer made, feedback, pins, unpins,
restores, and the moments a question wanted a turn. ``run`` feeds it to a fresh ``MemoryLayer``
with other settings (policy, budget, lag, low watermark) in memory; nothing is written anywhere.
The order is the one the service and ``assistant.replay`` write in: turn n arrives, its citations
are logged, the budget is enforced, then the events stored at step n follow.

A **miss** here is a moment a question wanted a turn that this setting had evicted. "Wanted" comes
from what is stored: (1) a citation (the answer at step s cited turn t: if t is out of memory at
step s under this setting, that is a miss, and the citation is dropped as evidence, as the layer
drops any cite of a turn not in memory), and (2) for a stored conversation, the miss log (a
question at step s was closer to the evicted turn t than to anything offered). This is judged with
hindsight, and it favours the settings the conversation ran with: its answers could only cite what
was in memory then, so under those settings only the miss log can count against it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from assistant import need
from memory import transcript as T
from memory.layer import MemoryLayer
from memory.policies import POLICIES
from memory.tokens import TokenCounter
from memory.types import EvictionRecord, MemorySettings, PinRefused, Snapshot

POLICY_NAMES = tuple(POLICIES)  # every policy a conversation may run with, in the registry's order


@dataclass(frozen=True)
class Recording:
    """What happened in one conversation, in order, with no decision of its memory in it.

    ``items`` are the saved format's lines (``TurnLine`` with its citations, ``EventLine``);
    ``tokens`` the stored cost of each turn; ``logged_misses`` the turns the miss log says a
    question at that step wanted and ``now`` the memory as stored (stored conversations only)."""

    settings: MemorySettings
    items: tuple
    tokens: dict[int, int]
    logged_misses: dict[int, tuple[int, ...]] = field(default_factory=dict)
    title: str = ""
    tokens_name: str = ""
    now: Snapshot | None = None  # a stored conversation's memory when it was read
    priors: dict[int, float | None] = field(default_factory=dict)  # the need estimator's, at arrival

    @property
    def steps(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class Miss:
    """At ``step`` a question wanted ``turn``, which this setting had evicted at ``evicted_at``."""

    step: int
    turn: int
    evicted_at: int | None
    source: str  # "citation" or "miss log"
    answer_turn: int | None = None

    def as_dict(self) -> dict:
        return {
            "step": self.step,
            "turn": self.turn,
            "evicted_at": self.evicted_at,
            "source": self.source,
            "answer_turn": self.answer_turn,
        }


@dataclass
class WhatIf:
    """What one setting would have done with a recording."""

    settings: MemorySettings
    effective_lag: int
    final: Snapshot
    evictions: list[EvictionRecord]
    misses: list[Miss]
    tokens: list[int]  # tokens[s - 1]: tokens in memory at the end of step s
    wanted: set[int]  # turns some question wanted at least once
    refused_pins: list[tuple[int, int, str]]  # (step, turn, why)
    dropped_cites: int
    timeline: list[dict] | None  # with run(timeline=True): the memory at the end of each step
    seconds: float

    @property
    def missed_turns(self) -> set[int]:
        return {m.turn for m in self.misses}

    def summary(self) -> dict:
        """One row of the side-by-side table."""
        return {
            "policy": self.settings.policy,
            "budget": self.settings.budget,
            "lag": self.effective_lag,
            "low_watermark": self.settings.low_watermark,
            "turns_kept": len(self.final.active),
            "tokens_kept": self.final.used_tokens,
            "evictions": len(self.evictions),
            "misses": len(self.misses),
            "wanted_turns": len(self.wanted),
            "wanted_kept": len(self.wanted - self.missed_turns),
        }

    def as_dict(self) -> dict:
        return {
            **self.summary(),
            "step": self.final.step,
            "active": list(self.final.active),
            "pinned": list(self.final.pinned),
            "evicted": [{"turn": r.turn, "step": r.step, "importance": round(r.importance, 6)} for r in self.evictions],
            "misses": [m.as_dict() for m in self.misses],
            "refused_pins": [{"step": s, "turn": t} for s, t, _ in self.refused_pins],
            "tokens_over_time": self.tokens,
        }


# ----- recordings ---------------------------------------------------------------------------


def from_transcript(t: T.Transcript, counter: TokenCounter, settings: MemorySettings) -> Recording:
    """A saved file as a recording: each turn costs what ``counter`` says and gets the need prior
    the estimator gives it after the turns before it (as a replay stores them)."""
    lines = [item for item in t.items if isinstance(item, T.TurnLine)]
    tokens = {item.number: counter.count(item.content) for item in lines}
    priors: dict[int, float | None] = {}
    previous: list = []
    for item in lines:
        priors[item.number] = need.prior_for(item.content, previous, role=item.role)
        previous = (previous + [need.Previous(item.content, role=item.role)])[-need.CONTEXT_TURNS :]
    return Recording(
        settings, tuple(t.items), tokens, {}, t.header.get("title", ""), getattr(counter, "name", ""), priors=priors
    )


def from_history(layer: MemoryLayer, events: Iterable, misses: Iterable, title: str = "") -> Recording:
    """A stored conversation as a recording: its turns with their stored tokens, citations at
    their steps, feedback, pins, unpins, restores (the second chance's too) in stored order, and
    the miss log. ``layer`` is its memory rebuilt from the database; ``events`` and ``misses``
    its event and miss rows (``kind, turn, step, detail`` and ``turn, step``)."""
    turns = sorted(layer.turns(), key=lambda t: t.number)
    cites: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for c in sorted(layer.citations(), key=lambda c: c.step):
        cites[c.step].append((c.turn, c.weight))
    by_step: dict[int, list[T.EventLine]] = defaultdict(list)
    events = list(events)
    for e in events:
        kind = "restore" if e.kind == "auto_restore" else e.kind
        if kind not in T.EVENTS:
            continue  # a refused pin changed nothing
        value = float(e.detail) if kind == "feedback" else None
        by_step[e.step].append(T.EventLine(kind, e.turn, value))
    # feedback stored without its event (databases from before feedback was an event): its moment
    # is unknown, so it is applied when its answer arrived, the earliest it can have been given
    logged = {e.turn for e in events if e.kind == "feedback"}
    for answer, value in layer.feedback_values().items():
        if isinstance(answer, int) and answer not in logged:
            by_step[answer].append(T.EventLine("feedback", answer, float(value)))
    wanted: dict[int, list[int]] = defaultdict(list)
    for m in misses:
        if m.turn not in wanted[m.step]:
            wanted[m.step].append(m.turn)
    items: list = []
    for t in turns:
        items.append(T.TurnLine(t.number, t.role, "", tuple(cites.get(t.number, ()))))
        items.extend(by_step.get(t.number, ()))
    return Recording(
        layer.settings,
        tuple(items),
        {t.number: t.tokens for t in turns},
        {s: tuple(ns) for s, ns in wanted.items()},
        title,
        "",
        layer.snapshot(),
        priors={t.number: t.prior for t in turns},
    )


def load(store, conv_id: int, owner: str | None = None) -> Recording:
    """Read a stored conversation through the store (read-only, one moment) as a recording."""
    owner = owner or getattr(store, "owner", None)  # a signed-in user's store reads only their own
    layer, events, misses = store.history(conv_id, owner=owner)
    return from_history(layer, events, misses)


# ----- running ------------------------------------------------------------------------------


def settings_for(base: MemorySettings, *, policy=None, budget=None, lag=None, low_watermark=None) -> MemorySettings:
    """``base`` with some values changed (validated); another policy starts from its own defaults."""
    out = base.override(policy=policy, budget=budget, lag=lag, low_watermark=low_watermark)
    MemoryLayer(out)  # refuses an unknown policy or bad parameters now, with its message
    return out


def run(
    rec: Recording,
    settings: MemorySettings | None = None,
    *,
    timeline: bool = False,
    progress: Callable[[float], None] | None = None,
) -> WhatIf:
    """Replay ``rec`` through a fresh layer with ``settings`` (default: the recording's own)."""
    started = time.perf_counter()
    settings = settings or rec.settings
    layer = MemoryLayer(settings)
    evictions: list[EvictionRecord] = []
    evicted_at: dict[int, int] = {}
    misses: list[Miss] = []
    wanted: set[int] = set()
    tokens: list[int] = []
    refused: list[tuple[int, int, str]] = []
    entries: list[dict] | None = [] if timeline else None
    dropped = 0

    def note(records: list[EvictionRecord]) -> None:
        for r in records:
            evicted_at[r.turn] = r.step
        evictions.extend(records)

    def want(turn: int, source: str, answer: int | None) -> None:
        wanted.add(turn)
        if not layer.turn(turn).active:
            misses.append(Miss(layer.step, turn, evicted_at.get(turn), source, answer))

    total = max(len(rec.items), 1)
    every = max(total // 50, 200)
    for i, item in enumerate(rec.items):
        if isinstance(item, T.TurnLine):
            t = layer.add_turn(item.role, rec.tokens[item.number], prior=rec.priors.get(item.number))
            if item.cites:
                for n in dict.fromkeys(n for n, _ in item.cites):
                    want(n, "citation", t.number)
                dropped += layer.cite(item.cites, source="replay", answer_turn=t.number).dropped
            note(layer.enforce_budget())  # over budget because turn t arrived
            for n in rec.logged_misses.get(t.number, ()):
                want(n, "miss log", None)
            tokens.append(layer.used_tokens)
            if entries is not None:
                entries.append(layer.snapshot().as_timeline_entry())
        else:
            note(_event(layer, item, refused))
            if tokens:  # the step's figures are those at its end
                tokens[-1] = layer.used_tokens
                if entries:
                    entries[-1] = layer.snapshot().as_timeline_entry()
        if progress and i % every == 0:
            progress(i / total)
    if progress:
        progress(1.0)
    return WhatIf(
        settings,
        layer.lag,
        layer.snapshot(),
        evictions,
        misses,
        tokens,
        wanted,
        refused,
        dropped,
        entries,
        time.perf_counter() - started,
    )


def _event(layer: MemoryLayer, item: T.EventLine, refused: list) -> list[EvictionRecord]:
    """One stored event, as the store's unit of work applies it (a refused pin changes nothing)."""
    n = item.turn
    if item.event == "pin":
        if layer.turn(n).pinned:
            return []
        try:
            return layer.pin(n)
        except PinRefused as exc:
            refused.append((layer.step, n, str(exc)))
            return []
    if item.event == "unpin":
        return layer.unpin(n)
    if item.event == "restore":
        return layer.restore(n)
    layer.feedback(n, item.value)
    return []


# ----- comparing ----------------------------------------------------------------------------


def compare(
    rec: Recording,
    base: MemorySettings | None = None,
    policies: Iterable[str] = POLICY_NAMES,
    progress: Callable[[float], None] | None = None,
) -> list[WhatIf]:
    """Every policy under ``base``'s budget, lag and low watermark, in the order given."""
    base = base or rec.settings
    names = list(policies)
    out = []
    for k, name in enumerate(names):
        sub = None if progress is None else (lambda f, k=k: progress((k + f) / len(names)))
        out.append(run(rec, settings_for(base, policy=name), progress=sub))
    return out


def best(results: Iterable[WhatIf]) -> set[str]:
    """The policies with the fewest misses, then the most wanted turns kept (ties: all of them).
    Judged with hindsight: the table says so wherever it is shown."""
    rows = [r.summary() for r in results]
    if not rows:
        return set()
    key = min((r["misses"], -r["wanted_kept"]) for r in rows)
    return {r["policy"] for r in rows if (r["misses"], -r["wanted_kept"]) == key}


def comparison_rows(results: list[WhatIf]) -> list[dict]:
    """The side-by-side table as plain rows, the best ones marked."""
    top = best(results)
    return [{**r.summary(), "best": r.settings.policy in top} for r in results]
