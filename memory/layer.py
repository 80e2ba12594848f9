"""MemoryLayer: the token budget, the lag, pins and the eviction loop.

The layer holds the state needed to decide (turn costs, active/pinned flags, the citation log
indexed by turn, feedback) and nothing else: no text, no I/O. Storage rebuilds it with
``MemoryLayer.from_state`` and persists what its methods return (eviction records), so the layer's
decisions and the database never disagree. The contract is stated in ``memory/__init__.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from memory.evidence import Evidence
from memory.policies import Policy, make_policy
from memory.types import (
    Citation,
    EvictionRecord,
    MemorySettings,
    PinRefused,
    Snapshot,
    TurnState,
    UnknownTurn,
    eviction_reason,
)

RUNNERS_UP = 3


class _Columns:
    """The active turns as numpy columns, in the order of ``MemoryLayer._active``.

    One row per active turn (number, arrival step, tokens, protected-since step, pinned), appended
    when a turn enters ``_active`` and removed when it leaves, so the rows are always in the
    dict's order (activation order, or turn order after ``from_state``). A decision selects its
    candidates and reads what the policy needs from these columns without a Python loop over the
    memory; candidate order, which the policy's one float sum follows, is that of ``candidates()``.
    """

    NUMBER, ARRIVED, TOKENS, SINCE, PINNED = range(5)
    __slots__ = ("rows", "n")

    def __init__(self) -> None:
        self.rows = np.zeros((5, 64), dtype=np.int64)
        self.n = 0

    def append(self, t: TurnState) -> None:
        if self.n == self.rows.shape[1]:
            self.rows = np.concatenate((self.rows, np.zeros_like(self.rows)), axis=1)
        self.rows[:, self.n] = (t.number, t.arrived, t.tokens, t.protected_since, t.pinned)
        self.n += 1

    def _row(self, number: int) -> int:
        return int((self.rows[self.NUMBER, : self.n] == number).nonzero()[0][0])

    def remove(self, number: int) -> None:
        i, n = self._row(number), self.n
        self.rows[:, i : n - 1] = self.rows[:, i + 1 : n].copy()
        self.n = n - 1

    def set_pinned(self, number: int, pinned: bool) -> None:
        self.rows[self.PINNED, self._row(number)] = pinned

    def candidates(self, now: int, lag: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(numbers, arrival steps, tokens) of the unpinned turns past their lag, in row order."""
        rows = self.rows[:, : self.n]
        pick = ((rows[self.PINNED] == 0) & (now - rows[self.SINCE] >= lag)).nonzero()[0]
        chosen = rows[:, pick]
        return chosen[self.NUMBER], chosen[self.ARRIVED], chosen[self.TOKENS]


@dataclass(frozen=True, slots=True)
class CiteOutcome:
    recorded: tuple[Citation, ...]
    dropped: int


class MemoryLayer:
    def __init__(self, settings: MemorySettings | None = None, policy: Policy | None = None):
        self.settings = settings or MemorySettings()
        self.policy = policy or make_policy(self.settings.policy, **self.settings.policy_params)
        self.step = 0
        self._turns: dict[int, TurnState] = {}
        self._active: dict[int, TurnState] = {}
        self._columns = _Columns()  # _active as numpy columns (kept in step with it)
        self._by_turn: dict[int, list[Citation]] = {}
        self._feedback: dict[object, float] = {}
        # the lag in force is decided here, once: the policy's own (accumulate: 0) or the
        # conversation's. A settings change builds a new layer (``from_state``), so it never moves.
        lag = self.policy.lag if self.policy.lag is not None else self.settings.lag
        # the arrival episode's burst (measured's ``burst``; none for a policy without one)
        burst = int(getattr(self.policy, "burst", 0))
        self._evidence = Evidence(self._by_turn, self._feedback, lag, burst)
        self.used_tokens = 0
        self.pinned_tokens = 0

    # ----- rebuild -------------------------------------------------------------------------
    @classmethod
    def from_state(
        cls,
        settings: MemorySettings,
        turns: Iterable[TurnState],
        citations: Iterable[Citation] = (),
        feedback: Mapping[object, float] | None = None,
        step: int | None = None,
        policy: Policy | None = None,
    ) -> MemoryLayer:
        """Rebuild a layer from stored state alone (turn rows, citation log, feedback)."""
        layer = cls(settings, policy)
        for t in sorted(turns, key=lambda t: t.number):
            t = TurnState(t.number, t.role, t.tokens, t.arrived, t.protected_since, t.active, t.pinned, t.prior)
            layer._turns[t.number] = t
            layer._evidence.arrived(t.number, t.prior, t.role)
            if t.protected_since > t.arrived:
                layer._evidence.restored(t.number)
            if t.active:
                layer._active[t.number] = t
                layer._columns.append(t)
                layer.used_tokens += t.tokens
                if t.pinned:
                    layer.pinned_tokens += t.tokens
        for c in sorted(citations, key=lambda c: c.step):  # stable: log order within a step
            layer._by_turn.setdefault(c.turn, []).append(c)
            layer._evidence.noted(c)
        layer._feedback.update(feedback or {})
        layer._evidence.loaded()
        layer.step = step if step is not None else max(layer._turns, default=0)
        return layer

    # ----- reading -------------------------------------------------------------------------
    @property
    def budget(self) -> int:
        return self.settings.budget

    @property
    def lag(self) -> int:
        """The lag in force: the policy's own (accumulate: 0) or the conversation's, as it was when
        the layer was built (the evidence measures with the same lag)."""
        return self._evidence.lag

    @property
    def evidence(self) -> Evidence:
        return self._evidence

    def turn(self, number: int) -> TurnState:
        try:
            return self._turns[number]
        except KeyError:
            raise UnknownTurn(f"turn {number} does not exist (the conversation has {len(self._turns)} turns)") from None

    def turns(self) -> list[TurnState]:
        return list(self._turns.values())

    def active_numbers(self) -> list[int]:
        """The turns in memory, in the order they entered it (arrival or restore)."""
        return list(self._active)

    def citations(self) -> list[Citation]:
        return [c for cs in self._by_turn.values() for c in cs]

    def feedback_values(self) -> dict[object, float]:
        return dict(self._feedback)

    def is_protected(self, t: TurnState) -> bool:
        return t.active and self.step - t.protected_since < self.lag

    def lag_left(self, t: TurnState) -> int:
        return max(0, self.lag - (self.step - t.protected_since)) if t.active else 0

    def candidates(self) -> list[TurnState]:
        """Turns eviction may take: active, not pinned, not protected."""
        lag, now = self.lag, self.step
        return [t for t in self._active.values() if not t.pinned and now - t.protected_since >= lag]

    def ranking(self) -> list[tuple[TurnState, float]]:
        """Candidates with their importance *now*, lowest (first to go) first; ties older first."""
        numbers, scores, order = self._ranked()
        return [(self._turns[numbers[i]], scores[i]) for i in order]

    def _ranked(self) -> tuple[list[int], list[float], list[int]]:
        """(candidates' numbers, their importances, candidate indices lowest first; ties older first).

        The candidates are ``candidates()``, read from the columns in the same order. The order is
        numpy's sort of (importance, turn number) pairs: the same total order as Python's
        ``sorted`` by that key (turn numbers are unique), without a Python call per item; callers
        that need only the first few (``enforce_budget``) read only those.
        """
        now = self.step
        numbers, arrived, tokens = self._columns.candidates(now, self.lag)
        turns = self._turns
        values = self.policy.importances(
            numbers, arrived, tokens, self._evidence, now, lambda k: turns[int(numbers[k])]
        )
        order = np.lexsort((numbers, values)).tolist() if len(numbers) else []
        return numbers.tolist(), values.tolist(), order

    def importance(self, numbers: Iterable[int] | None = None) -> dict[int, float]:
        """Importance under the active policy *now*, for any turns (the inspector's column)."""
        ts = [self._turns[n] for n in numbers] if numbers is not None else list(self._active.values())
        return dict(zip((t.number for t in ts), self.policy.scores(ts, self._evidence, self.step)))

    def snapshot(self) -> Snapshot:
        active = sorted(self._active)
        protected = tuple(n for n in active if self.is_protected(self._active[n]))
        pinned = tuple(n for n in active if self._active[n].pinned)
        return Snapshot(
            step=self.step,
            budget=self.budget,
            used_tokens=self.used_tokens,
            active=tuple(active),
            protected=protected,
            pinned=pinned,
            evicted=tuple(n for n in sorted(self._turns) if not self._turns[n].active),
            pinned_tokens=self.pinned_tokens,
            protected_tokens=sum(self._active[n].tokens for n in protected if not self._active[n].pinned),
        )

    # ----- changing ------------------------------------------------------------------------
    def add_turn(self, role: str, tokens: int, number: int | None = None, prior: float | None = None) -> TurnState:
        """Store a new turn: the clock advances one step; the turn starts protected for ``lag``.
        ``prior`` is its expected need at arrival (a number from the need estimator, or None)."""
        if tokens < 0:
            raise ValueError("tokens must be >= 0")
        step = self.step + 1
        if number is not None and number != step:
            raise ValueError(f"turn {number} cannot arrive at step {step}: turn n arrives at step n")
        t = TurnState(step, role, tokens, arrived=step, protected_since=step, prior=prior)
        self._evidence.arrived(step, prior, role)
        self.step = step
        self._turns[step] = t
        self._active[step] = t
        self._columns.append(t)
        self.used_tokens += tokens
        return t

    def cite(
        self,
        turns: Iterable[int | tuple[int, float]],
        *,
        offered: Iterable[int] | None = None,
        source: str = "retrieval",
        answer_turn: int | None = None,
    ) -> CiteOutcome:
        """Record evidence at the current step. A cite of a turn that is not in memory, or was not
        offered to the retrieval step, is dropped and counted: it is never evidence (contract 6)."""
        allowed = None if offered is None else set(offered)
        seen: set[int] = set()
        recorded: list[Citation] = []
        dropped = 0
        for item in turns:
            number, weight = item if isinstance(item, tuple) else (item, 1.0)
            if number in seen:
                continue
            seen.add(number)
            if number not in self._active or (allowed is not None and number not in allowed):
                dropped += 1
                continue
            c = Citation(number, self.step, float(weight), source, answer_turn)
            self._by_turn.setdefault(number, []).append(c)
            self._evidence.noted(c)
            recorded.append(c)
        return CiteOutcome(tuple(recorded), dropped)

    def feedback(self, answer_turn: object, value: float) -> None:
        """Feedback on an answer: negative marks its citations as evidence from a wrong answer."""
        self._feedback[answer_turn] = float(value)
        self._evidence.changed(answer_turn)

    def pin_cap(self) -> int:
        return math.floor(self.budget * self.settings.pin_share)

    def pin(self, number: int) -> list[EvictionRecord]:
        """Never evict this turn. An evicted turn is restored first. Past the cap: ``PinRefused``."""
        t = self.turn(number)
        if t.pinned:
            return []
        cap = self.pin_cap()
        if self.pinned_tokens + t.tokens > cap:
            raise PinRefused(
                f"Cannot pin turn {number}: it has {t.tokens} tokens and {self.pinned_tokens} are "
                f"already pinned, over the pin cap of {cap} tokens "
                f"({self.settings.pin_share:.0%} of the {self.budget}-token budget). "
                f"Unpin another turn or raise the budget."
            )
        if not t.active:
            self._activate(t)
        t.pinned = True
        self._columns.set_pinned(number, True)
        self.pinned_tokens += t.tokens
        return self.enforce_budget("pin", number)

    def unpin(self, number: int) -> list[EvictionRecord]:
        t = self.turn(number)
        if not t.pinned:
            return []
        t.pinned = False
        if t.active:
            self._columns.set_pinned(number, False)
            self.pinned_tokens -= t.tokens
        return self.enforce_budget("unpin", number)

    def restore(self, number: int, cause: str = "restore") -> list[EvictionRecord]:
        """Bring an evicted turn back into memory, protected again; a no-op for an active turn.

        ``cause`` is ``restore`` (a person asked) or ``auto_restore`` (the second chance): the
        evictions this restore causes carry it."""
        if cause not in ("restore", "auto_restore"):
            raise ValueError(f"a restore's cause is restore or auto_restore, not {cause!r}")
        t = self.turn(number)
        if t.active:
            return []
        self._activate(t)
        return self.enforce_budget(cause, number)

    def _activate(self, t: TurnState) -> None:
        t.active = True
        t.protected_since = self.step
        if t.protected_since > t.arrived:
            self._evidence.restored(t.number)
        self._active[t.number] = t
        self._columns.append(t)
        self.used_tokens += t.tokens

    def enforce_budget(self, cause: str = "budget", cause_turn: int | None = None) -> list[EvictionRecord]:
        """Evict the lowest-importance candidates until under budget (or the low watermark).

        Importance is computed once, now, from the evidence. Returns one record per eviction, each
        naming what pushed the memory over budget: ``cause`` (one of ``memory.types.CAUSES``) and
        ``cause_turn``, the turn whose arrival, pin, unpin or restore it was. If pinned + protected
        turns alone exceed the budget, evicts what it may and stops: the snapshot then reports
        ``forced_over_budget``.
        """
        reason = eviction_reason(cause, cause_turn, step=self.step, budget=self.budget, policy=self.settings.policy)
        if self.used_tokens <= self.budget:
            return []
        goal = math.floor(self.budget * self.settings.low_watermark)
        numbers, scores, order = self._ranked()
        records: list[EvictionRecord] = []
        for pos, i in enumerate(order):
            if self.used_tokens <= goal:
                break
            t, score = self._turns[numbers[i]], scores[i]
            before = self.used_tokens
            t.active = False
            del self._active[t.number]
            self._columns.remove(t.number)
            self.used_tokens -= t.tokens
            runners = tuple((numbers[j], scores[j]) for j in order[pos + 1 : pos + 1 + RUNNERS_UP])
            records.append(
                EvictionRecord(
                    turn=t.number,
                    step=self.step,
                    importance=score,
                    runners_up=runners,
                    budget=self.budget,
                    tokens_before=before,
                    tokens_after=self.used_tokens,
                    policy=self.policy.name,
                    reason=reason,
                    cause=cause,
                    cause_turn=cause_turn,
                )
            )
        return records
