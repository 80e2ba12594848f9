"""Eviction policies: small objects that *measure* importance when a decision is made.

A policy gets the candidate turns (active, unprotected, unpinned), the evidence (the raw citation
log and the correctness signals) and ``now``; it returns one importance per candidate. It keeps no
state between decisions and deletes nothing: the layer evicts the lowest first (ties: older turn).
Higher importance means "keep".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .types import Citation, TurnState


class Evidence:
    """Read-only view of the citation log, indexed by cited turn, plus correctness signals.

    ``correctness(answer)`` is 1 unless feedback on that answer said it was wrong (then
    ``wrong_weight``, 0 by default): the paper's *demonstrated utility* weighting.
    """

    __slots__ = ("_by_turn", "_feedback")

    def __init__(self, by_turn: Mapping[int, Sequence[Citation]], feedback: Mapping[object, float]):
        self._by_turn = by_turn
        self._feedback = feedback

    def of(self, turn: int) -> Sequence[Citation]:
        return self._by_turn.get(turn, ())

    def feedback(self, answer: object) -> float | None:
        return self._feedback.get(answer)

    def correctness(self, answer: object, wrong_weight: float = 0.0) -> float:
        value = self._feedback.get(answer)
        if value is None or value >= 0:
            return 1.0
        return wrong_weight


class Policy:
    """Base: subclasses override ``scores``. ``lag`` overrides the conversation's lag when set."""

    name: str = "policy"
    lag: int | None = None
    description: str = ""

    def scores(self, candidates: Sequence[TurnState], evidence: Evidence, now: int) -> list[float]:
        raise NotImplementedError

    def params(self) -> dict:
        return {}


class Fifo(Policy):
    name = "fifo"
    description = "evicts the turn that entered memory first"

    def scores(self, candidates, evidence, now):
        return [float(t.protected_since) for t in candidates]


class Lru(Policy):
    name = "lru"
    description = "evicts the turn least recently cited (or arrived)"

    def scores(self, candidates, evidence, now):
        out = []
        for t in candidates:
            last = t.protected_since
            for c in evidence.of(t.number):
                if c.step > last:
                    last = c.step
            out.append(float(last))
        return out


@dataclass
class Accumulate(Policy):
    """H2O-like: total citation weight ever received; no provisional buffer (lag 0)."""

    lag: int | None = 0
    name = "accumulate"
    description = "evicts the turn with the fewest citations ever (H2O-like, no lag)"

    def scores(self, candidates, evidence, now):
        return [float(sum(c.weight for c in evidence.of(t.number))) for t in candidates]

    def params(self):
        return {"lag": self.lag}


@dataclass
class Window(Policy):
    """TOVA/SnapKV-like: only citations from the last ``window`` steps count."""

    window: int = 64
    name = "window"
    description = "evicts the turn with the fewest recent citations"

    def scores(self, candidates, evidence, now):
        since = now - self.window
        return [float(sum(c.weight for c in evidence.of(t.number) if c.step > since)) for t in candidates]

    def params(self):
        return {"window": self.window}


@dataclass
class Measured(Policy):
    """The default: demonstrated utility, measured at decision time after the lag.

    importance = sum over the turn's citations of weight * correctness * decay ** (now - step).
    With decay 1, uniform weights and lag 0 this ranks exactly like ``accumulate``.
    """

    decay: float = 0.99
    wrong_weight: float = 0.0
    name = "measured"
    description = "evicts the turn with the least demonstrated utility (decayed, correctness-weighted)"

    def scores(self, candidates, evidence, now):
        decay, wrong = self.decay, self.wrong_weight
        out = []
        for t in candidates:
            s = 0.0
            for c in evidence.of(t.number):
                if c.answer_turn is None:
                    corr = 1.0
                else:
                    corr = evidence.correctness(c.answer_turn, wrong)
                s += c.weight * corr * (decay ** (now - c.step) if decay != 1.0 else 1.0)
            out.append(s)
        return out

    def params(self):
        return {"decay": self.decay, "wrong_weight": self.wrong_weight}


POLICIES: dict[str, Callable[..., Policy]] = {
    "fifo": Fifo,
    "lru": Lru,
    "accumulate": Accumulate,
    "window": Window,
    "measured": Measured,
}

DEFAULT_POLICY = "measured"


def make_policy(name: str, **params) -> Policy:
    """Build a policy by name; unknown names and parameters are clear errors."""
    try:
        factory = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(POLICIES)}") from None
    try:
        return factory(**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for policy {name!r}: {exc}") from None
