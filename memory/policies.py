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


BLOCK = 16  # steps per block of the settled-evidence fold (see ``Evidence.settled``)


class Evidence:
    """Read-only view of the citation log, indexed by cited turn, plus correctness signals.

    ``correctness(answer)`` is 1 unless feedback on that answer said it was wrong (then
    ``wrong_weight``, 0 by default): the paper's *demonstrated utility* weighting. ``lag`` is the
    lag in force (the layer keeps it current): evidence a turn got inside its own lag window
    (steps ``arrived .. arrived + lag - 1``) is *provisional*, evidence after it is *settled*.

    ``settled`` is computed from the raw log at decision time. So that a decision costs what the
    memory holds, not what the history holds, its value is defined by a fold over fixed blocks of
    ``BLOCK`` steps (``E_b = E_prev * decay ** (steps between block ends) + sum of block b``); closed
    blocks never change, so the fold of a turn's closed blocks is cached and extended, never
    recomputed. The cache is exact by construction: a fresh fold (a rebuilt layer) performs the same
    float operations in the same order and gives bit-identical scores. Feedback on an answer drops
    the cache of the turns it cited (their correctness changed).
    """

    __slots__ = ("_by_turn", "_feedback", "lag", "_fold", "_answers")

    def __init__(self, by_turn: Mapping[int, Sequence[Citation]], feedback: Mapping[object, float], lag: int = 0):
        self._by_turn = by_turn
        self._feedback = feedback
        self.lag = lag
        self._fold: dict[int, tuple] = {}
        self._answers: dict[object, set[int]] = {}

    def of(self, turn: int) -> Sequence[Citation]:
        return self._by_turn.get(turn, ())

    def feedback(self, answer: object) -> float | None:
        return self._feedback.get(answer)

    def correctness(self, answer: object, wrong_weight: float = 0.0) -> float:
        value = self._feedback.get(answer)
        if value is None or value >= 0:
            return 1.0
        return wrong_weight

    # ----- kept current by the layer --------------------------------------------------------
    def noted(self, c: Citation) -> None:
        """A citation was appended to the log (in step order)."""
        if c.answer_turn is not None:
            self._answers.setdefault(c.answer_turn, set()).add(c.turn)

    def changed(self, answer: object) -> None:
        """Feedback on ``answer`` arrived: the turns it cited are folded afresh."""
        for turn in self._answers.get(answer, ()):
            self._fold.pop(turn, None)

    # ----- measured at decision time --------------------------------------------------------
    def _value(self, c: Citation, wrong: float) -> float:
        if c.answer_turn is None:
            return c.weight
        return c.weight * self.correctness(c.answer_turn, wrong)

    def provisional(self, t: TurnState, wrong: float = 0.0) -> tuple[float, float]:
        """(total weight, correctness-weighted weight) of the evidence inside ``t``'s lag window."""
        end = t.arrived + self.lag
        total = good = 0.0
        for c in self._by_turn.get(t.number, ()):
            if c.step >= end:
                break
            total += c.weight
            good += self._value(c, wrong)
        return total, good

    def settled(self, t: TurnState, now: int, decay: float, wrong: float = 0.0) -> float:
        """Sum over ``t``'s evidence after its lag window of ``weight * correctness * decay ** age``."""
        return self.measure(t, now, decay, wrong)[0]

    def measure(self, t: TurnState, now: int, decay: float, wrong: float = 0.0) -> tuple[float, float, float]:
        """(settled, provisional total weight, provisional correct weight) for ``t`` at ``now``.

        Work is bounded by the evidence of the last ``BLOCK`` steps plus blocks closed since the
        last call: the fold of closed blocks (and the lag window's verdict, fixed once computed)
        are cached per turn and only extended.
        """
        cites = self._by_turn.get(t.number)
        if not cites:
            return 0.0, 0.0, 0.0
        key = (decay, wrong, self.lag)
        memo = self._fold.get(t.number)
        n = len(cites)
        if memo is not None and memo[0] == key and memo[3] == n:
            # fast path: every citation is already folded into closed blocks (the common case)
            _, total, last, _, ptot, pgood = memo
            return (total * decay ** (now - (last + 1) * BLOCK) if last >= 0 else 0.0), ptot, pgood
        if memo is not None and memo[0] == key:
            _, total, last, i, ptot, pgood = memo
        else:
            end = t.arrived + self.lag
            i = 0
            ptot = pgood = 0.0
            while i < n and cites[i].step < end:
                c = cites[i]
                ptot += c.weight
                pgood += self._value(c, wrong)
                i += 1
            if i == n and now < end:  # the lag window is still open: do not cache its verdict
                return 0.0, ptot, pgood
            total, last = 0.0, -1
        closed = now // BLOCK  # blocks with index < closed are closed (their end <= now)
        start = i
        while i < n:
            b = cites[i].step // BLOCK
            if b >= closed:
                break
            stop = (b + 1) * BLOCK
            part = 0.0
            while i < n and cites[i].step < stop:
                c = cites[i]
                part += self._value(c, wrong) * decay ** (stop - c.step)
                i += 1
            total = total * decay ** ((b - last) * BLOCK) + part if last >= 0 else part
            last = b
        if memo is None or i != start or memo[0] != key:
            self._fold[t.number] = (key, total, last, i, ptot, pgood)
        out = total * decay ** (now - (last + 1) * BLOCK) if last >= 0 else 0.0
        for j in range(i, n):
            c = cites[j]
            out += self._value(c, wrong) * decay ** (now - c.step)
        return out, ptot, pgood


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

    Computed from the raw log when a decision is due (no running score), like a fixed-lag smoother:
    what a turn got inside its own lag window is a *provisional* verdict on it, what it gets later
    is *settled* evidence of far-apart reuse::

        settled    = sum over cites after the lag window of weight * correctness * decay ** (now - step)
        verdict    = (correctness-weighted weight / weight) of the cites inside the lag window
        smoothed   = confirm * verdict * decay ** (now - end of lag window)   (0 when uncited then)
        rate       = sum of settled / sum of ages, over the candidates, now
        excess     = max(0, settled - background * rate * age)
                   + max(0, smoothed - verdict_cut * background * rate * age)
        prior      = prior * size ** size_power * prior_decay ** age
        importance = (excess + prior) / size ** density

    * ``correctness`` is 1, or ``wrong_weight`` when feedback said the citing answer was wrong: the
      paper's demonstrated utility.
    * The lag window's evidence is smoothed into one verdict, not summed: a burst of cites right
      after arrival (habitual or polluted) counts once, and only as much as the answers that made
      it turned out right. A turn stated once and used correctly at once carries one full unit.
    * ``rate`` is the candidates' mean settled utility per step of age, measured now: what a turn
      earns by merely sitting in memory (noisy or habitual cites). Only the excess over
      ``background`` x that share counts, so a turn that has been cited because it was always there
      does not entrench itself (the accumulate failure when cites are polluted).
    * The verdict goes stale at ``verdict_cut`` x that same measured rate per step of age, and the
      rate is measured from settled evidence only. So the verdict's shelf life is set by the log:
      where turns rarely get cited after their lag window (sharp, far-apart reuse: a fact stated,
      confirmed, and needed again 40-200 steps later) the rate is small and a confirmed fact keeps
      its verdict for as long as such reuse takes; where in-memory turns keep getting cited (noisy
      retrieval) the rate is high and a verdict earned by a noisy cite at arrival expires fast.
      (Before: the verdict was pooled into the rate and paid the same cut, so confirmed facts were
      erased by age after ~100 steps and settled reuse was cut away by the verdicts' own weight:
      synthetic retention 0.657, now 0.881.)
    * ``size`` is the turn's tokens over the candidates' mean (scale-free: any tokenizer or unit).
      The *prior* is the evidence a turn carries by arriving, fading with age. On LoCoMo a long turn
      is likelier to be needed even per token, hence ``size_power`` > 1.
    * ``density`` makes importance value per token (knapsack order): a budget is spent in tokens.

    Tuned on the four LoCoMo dev conversations (``lagmem bench locomo``, with and without noise)
    and the synthetic traces (``lagmem bench synthetic``). With lag 0 there is no lag window, and
    with decay = prior_decay = 1, background = size_power = density = 0 (uniform weights) the prior
    is one constant added to every turn, so this ranks exactly like ``accumulate``.
    """

    decay: float = 0.999
    wrong_weight: float = 0.0
    prior: float = 0.4
    prior_decay: float = 0.99
    size_power: float = 1.5
    density: float = 1.0
    background: float = 0.5
    confirm: float = 6.0
    verdict_cut: float = 4.0
    name = "measured"
    description = "evicts the turn with the least demonstrated utility per token (lagged, decayed, correctness-weighted)"

    def scores(self, candidates, evidence, now):
        # Two passes over the candidates (the background rate needs the first one's sums); each
        # element's float operations are the same, in the same order, as the formula above.
        if not candidates:
            return []
        decay, wrong, lag = self.decay, self.wrong_weight, evidence.lag
        measure = evidence.measure
        n = len(candidates)
        settled, verdict, ages = [0.0] * n, [0.0] * n, [0] * n
        confirm = self.confirm if lag else 0.0
        for k, t in enumerate(candidates):
            u, total, good = measure(t, now, decay, wrong)
            settled[k] = u
            age = ages[k] = now - t.arrived
            if confirm and total > 0:
                verdict[k] = confirm * (good / total) * decay ** max(0, age - lag)
        background = self.background
        cut = vcut = 0.0
        if background:
            total_age = sum(ages)
            rate = sum(settled) / total_age if total_age else 0.0
            cut = background * rate
            vcut = cut * self.verdict_cut
        sized = self.size_power or self.density
        mean = (sum(t.tokens for t in candidates) / n) if sized else 1.0
        mean = mean or 1.0
        prior, prior_decay, size_power, density = self.prior, self.prior_decay, self.size_power, self.density
        out = [0.0] * n
        for k, t in enumerate(candidates):
            u, v, age = settled[k], verdict[k], ages[k]
            if background:
                u = u - cut * age
                u = u if u > 0.0 else 0.0
                if vcut and v:
                    v = v - vcut * age
                    v = v if v > 0.0 else 0.0
            s = u + v
            size = max(t.tokens, 1) / mean if sized else 1.0
            if prior:
                fade = prior_decay ** age if prior_decay != 1.0 else 1.0
                s += prior * (size ** size_power if size_power else 1.0) * fade
            if density:
                s /= size ** density
            out[k] = s
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
            "confirm": self.confirm,
            "verdict_cut": self.verdict_cut,
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
