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

    Computed from the raw log when a decision is due (no running score)::

        utility    = sum over citations of weight * correctness * decay ** (now - step)
        excess     = max(0, utility - background * rate * age)
        prior      = prior * size ** size_power * prior_decay ** age
        importance = (excess + prior) / size ** density

    * ``correctness`` is 1, or ``wrong_weight`` when feedback said the citing answer was wrong: the
      paper's demonstrated utility.
    * ``rate`` is the candidates' mean utility per step of age, measured now: what a turn earns by
      merely sitting in memory (noisy or habitual cites). Only the excess over ``background`` x that
      share counts, so a turn that has been cited because it was always there does not entrench
      itself (the accumulate failure when cites are polluted).
    * ``size`` is the turn's tokens over the candidates' mean (scale-free: any tokenizer or unit).
      The *prior* is the evidence a turn carries by arriving, fading with age: an uncited new turn
      is not worthless, an old uncited one loses to any turn that demonstrated utility. On LoCoMo a
      long turn is likelier to be needed even per token, hence ``size_power`` > 1.
    * ``density`` makes importance value per token (knapsack order): a budget is spent in tokens.

    The defaults were tuned on the four LoCoMo dev conversations (``lagmem bench locomo``, with and
    without noise) and checked on the synthetic trace. With decay = prior_decay = 1,
    background = size_power = density = 0 (uniform weights) and lag 0 the prior is one constant
    added to every turn, so this ranks exactly like ``accumulate``.
    """

    decay: float = 0.999
    wrong_weight: float = 0.0
    prior: float = 0.3
    prior_decay: float = 0.99
    size_power: float = 2.0
    density: float = 1.0
    background: float = 0.5
    name = "measured"
    description = "evicts the turn with the least demonstrated utility per token (lagged, decayed, correctness-weighted)"

    def scores(self, candidates, evidence, now):
        if not candidates:
            return []
        decay, wrong = self.decay, self.wrong_weight
        utility = []
        for t in candidates:
            u = 0.0
            for c in evidence.of(t.number):
                corr = 1.0 if c.answer_turn is None else evidence.correctness(c.answer_turn, wrong)
                u += c.weight * corr * (decay ** (now - c.step) if decay != 1.0 else 1.0)
            utility.append(u)
        ages = [now - t.arrived for t in candidates]
        if self.background:
            total_age = sum(ages)
            rate = sum(utility) / total_age if total_age else 0.0
            cut = self.background * rate
            utility = [max(0.0, u - cut * a) for u, a in zip(utility, ages)]
        sized = self.size_power or self.density
        mean = (sum(t.tokens for t in candidates) / len(candidates)) if sized else 1.0
        mean = mean or 1.0
        out = []
        for t, u, age in zip(candidates, utility, ages):
            size = max(t.tokens, 1) / mean if sized else 1.0
            s = u
            if self.prior:
                fade = self.prior_decay ** age if self.prior_decay != 1.0 else 1.0
                s += self.prior * (size ** self.size_power if self.size_power else 1.0) * fade
            if self.density:
                s /= size ** self.density
            out.append(s)
        return out

    def params(self):
        return {
            "decay": self.decay,
            "wrong_weight": self.wrong_weight,
            "prior": self.prior,
            "prior_decay": self.prior_decay,
            "size_power": self.size_power,
            "density": self.density,
            "background": self.background,
        }


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
