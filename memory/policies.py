"""Eviction policies: small objects that *measure* importance when a decision is made.

A policy gets the candidate turns (active, unprotected, unpinned), the evidence (the raw citation
log and the correctness signals) and ``now``; it returns one importance per candidate. It keeps no
state between decisions and deletes nothing: the layer evicts the lowest first (ties: older turn).
Higher importance means "keep".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .types import Citation, TurnState


BLOCK = 16  # steps per block of the settled-evidence fold (see ``Evidence.settled``)

_POWERS: dict[float, np.ndarray] = {}


def powers(base: float, upto: int) -> np.ndarray:
    """``base ** k`` for every k in ``0 .. upto`` (at least), as a float64 array.

    Each entry is computed by Python's own ``base ** k`` (the C library's ``pow``), so indexing the
    table gives bit for bit what the scalar formula ``base ** k`` gives; numpy's vectorised
    ``power`` may use other code (SIMD approximations) and is not used. The table is shared by the
    process and grows by doubling: extending it costs amortised O(1) ``pow`` calls per step.
    """
    table = _POWERS.get(base)
    if table is None or len(table) <= upto:
        have = 0 if table is None else len(table)
        size = max(upto + 1, 2 * have, 1024)
        more = np.array([base ** k for k in range(have, size)], dtype=np.float64)
        table = more if table is None else np.concatenate((table, more))
        _POWERS[base] = table  # a reader holding the old table still reads correct entries
    return table


class _Mirror:
    """The fold cache of ``Evidence`` for one key ``(decay, wrong, lag)``, as arrays by turn number.

    ``measure`` caches per turn the fold of its closed blocks (``total`` as of block ``last``), the
    lag window's verdict and how many cites are folded; the cites after those are in the open block
    (the one ``now`` is in) and are added one by one. This mirror holds, per turn, the same cached
    numbers: ``total`` and ``base = (last + 1) * BLOCK`` (``total`` = 0 when nothing is folded), the
    verdict ratio ``good / total`` and the end of the lag window. A decision then evaluates, for all
    candidates at once, ``total * decay ** (now - base)`` plus the open block's cites (taken from
    ``Evidence._recent``, in log order), which is the float computation ``measure`` does.

    ``stale`` marks turns the mirror may not describe: never measured, feedback on an answer that
    cited them, a cite inside their lag window, cites in a block that has closed since (their fold
    must be extended), or a lag window still open. Those go through ``measure`` itself (and are
    mirrored again); they are the turns cited in the block that closed last, so their number does
    not grow with the memory. ``position`` is scratch space: turn number -> index among the turns
    measured now.
    """

    __slots__ = ("key", "total", "base", "ratio", "judged", "end", "stale", "position")

    def __init__(self, key: tuple):
        self.key = key
        self.total = np.zeros(0)
        self.base = np.zeros(0, dtype=np.int64)
        self.ratio = np.zeros(0)  # provisional good / total (0 when the lag window got no cites)
        self.judged = np.zeros(0, dtype=bool)  # the lag window got cites (total > 0)
        self.end = np.zeros(0, dtype=np.int64)  # first step after the lag window
        self.stale = np.ones(0, dtype=bool)
        self.position = np.zeros(0, dtype=np.int64)

    def reserve(self, size: int) -> None:
        """Room for turn numbers below ``size`` (new rows are stale: measured before use)."""
        have = len(self.stale)
        if size <= have:
            return
        grow = max(size, 2 * have) - have
        for name in ("total", "base", "ratio", "judged", "end", "position"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate((old, np.zeros(grow, dtype=old.dtype))))
        self.stale = np.concatenate((self.stale, np.ones(grow, dtype=bool)))

    def mirror(self, t: TurnState, memo: tuple | None, cited: int) -> None:
        """Copy ``measure``'s cache of one turn, if it has one for this key (else it stays stale)."""
        if cited == 0:  # no evidence at all: settled 0, no verdict
            total, base, ptot, pgood = 0.0, 0, 0.0, 0.0
        elif memo is not None and memo[0] == self.key:
            _, total, last, _, ptot, pgood = memo
            total, base = (total, (last + 1) * BLOCK) if last >= 0 else (0.0, 0)
        else:
            return
        n = t.number
        self.total[n] = total
        self.base[n] = base
        self.ratio[n] = pgood / ptot if ptot > 0 else 0.0
        self.judged[n] = ptot > 0
        self.end[n] = t.arrived + self.key[2]
        self.stale[n] = False

    def mark(self, turn: int) -> None:
        if turn < len(self.stale):  # rows past the end are created stale
            self.stale[turn] = True


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

    ``measure_many`` is ``measure`` for all candidates of a decision at once: it reads the cache
    through ``_Mirror`` (arrays by turn number) and the open block's cites from ``_recent``, so a
    decision costs a few array operations plus Python work for the few turns whose cache is stale.
    """

    __slots__ = ("_by_turn", "_feedback", "lag", "_fold", "_answers", "_mirror", "_recent")

    def __init__(self, by_turn: Mapping[int, Sequence[Citation]], feedback: Mapping[object, float], lag: int = 0):
        self._by_turn = by_turn
        self._feedback = feedback
        self.lag = lag
        self._fold: dict[int, tuple] = {}
        self._answers: dict[object, set[int]] = {}
        self._mirror: _Mirror | None = None
        self._recent: list[Citation] = []  # the log's cites in the open block (see ``measure_many``)

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
        recent = self._recent
        if recent and recent[0].step < c.step // BLOCK * BLOCK:
            self._close_blocks(c.step)  # keeps ``_recent`` to one block of cites
        recent.append(c)
        mirror = self._mirror
        if mirror is not None and c.turn < len(mirror.end) and c.step < mirror.end[c.turn]:
            mirror.stale[c.turn] = True  # inside the lag window: the verdict changes

    def changed(self, answer: object) -> None:
        """Feedback on ``answer`` arrived: the turns it cited are folded afresh."""
        for turn in self._answers.get(answer, ()):
            self._fold.pop(turn, None)
            if self._mirror is not None:
                self._mirror.mark(turn)

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

    def measure_many(
        self, numbers: np.ndarray, now: int, decay: float, wrong: float, turn_at: Callable[[int], TurnState]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``measure`` for many turns at once: (settled, verdict ratio, judged) arrays.

        ``numbers`` are the turns' numbers, ``turn_at(k)`` the k-th turn. ``ratio[k]`` is the lag
        window's correct / total weight (0 when ``judged[k]`` is false: no cites in the window).
        Bit for bit what ``measure`` gives: for turns the mirror describes, the same products of
        the same numbers, summed in the same order (the folded total first, then the open block's
        cites in log order); the rest (``_Mirror.stale``) go through ``measure`` itself.
        """
        key = (decay, wrong, self.lag)
        mirror = self._mirror
        if mirror is None or mirror.key != key:
            mirror = self._mirror = _Mirror(key)
        self._close_blocks(now)
        recent = self._recent
        mirror.reserve(int(numbers.max()) + 1)
        table = powers(decay, now)
        stale = mirror.stale[numbers].nonzero()[0].tolist()
        settled = mirror.total[numbers] * table[now - mirror.base[numbers]]
        if recent and not self._add_open_block(mirror, numbers, settled, now, table, wrong):
            stale = list(range(len(numbers)))  # a turn asked for twice: measure them one by one
        ratio = mirror.ratio[numbers]
        judged = mirror.judged[numbers]
        for k in stale:
            t = turn_at(k)
            settled[k], ptot, pgood = self.measure(t, now, decay, wrong)
            ratio[k] = pgood / ptot if ptot > 0 else 0.0
            judged[k] = ptot > 0
            mirror.mirror(t, self._fold.get(t.number), len(self._by_turn.get(t.number, ())))
        return settled, ratio, judged

    def _close_blocks(self, now: int) -> None:
        """Drop the cites of blocks closed by ``now`` from ``_recent``: their turns' folds must grow."""
        start = now // BLOCK * BLOCK
        recent = self._recent
        cut = 0
        while cut < len(recent) and recent[cut].step < start:
            cut += 1
        if cut:
            if self._mirror is not None:
                for c in recent[:cut]:
                    self._mirror.mark(c.turn)
            del recent[:cut]

    def _add_open_block(self, mirror: _Mirror, numbers: np.ndarray, settled: np.ndarray, now: int,
                        table: np.ndarray, wrong: float) -> bool:
        """Add to ``settled`` the open block's cites of the (non-stale) turns in ``numbers``.

        ``_recent`` now holds exactly the open block's cites (``_close_blocks``). A cite counts for
        a turn measured now, that the mirror describes, after its lag window (window cites are in
        the verdict); ``np.add.at`` adds them one at a time in log order, as ``measure`` does.
        Returns False, changing nothing, if a turn number repeats in ``numbers``.
        """
        recent = self._recent
        n, m = len(numbers), len(recent)
        turns = np.fromiter([c.turn for c in recent], np.int64, m)
        steps = np.fromiter([c.step for c in recent], np.int64, m)
        mirror.reserve(int(turns.max()) + 1)
        index = np.arange(n)
        mirror.position[numbers] = index
        if not (mirror.position[numbers] == index).all():
            return False
        k = np.minimum(mirror.position[turns], n - 1)
        ok = (numbers[k] == turns) & ~mirror.stale[turns] & (steps >= mirror.end[turns])
        pick = ok.nonzero()[0]
        if len(pick):
            feedback = self._feedback
            # ``_value`` inlined: weight * correctness, where correctness 1 leaves the weight exact
            values = [
                c.weight if c.answer_turn is None or feedback.get(c.answer_turn, 0.0) >= 0 else c.weight * wrong
                for c in map(recent.__getitem__, pick.tolist())
            ]
            np.add.at(settled, k[pick], np.array(values) * table[now - steps[pick]])
        return True


class Policy:
    """Base: subclasses override ``scores``. ``lag`` overrides the conversation's lag when set."""

    name: str = "policy"
    lag: int | None = None
    description: str = ""

    def scores(self, candidates: Sequence[TurnState], evidence: Evidence, now: int) -> list[float]:
        raise NotImplementedError

    def importances(self, numbers: np.ndarray, arrived: np.ndarray, tokens: np.ndarray, evidence: Evidence,
                    now: int, turn_at: Callable[[int], TurnState]) -> np.ndarray:
        """``scores`` for candidates given as columns, as the layer has them (numbers, arrival
        steps, tokens, in candidate order; ``turn_at(k)`` is candidate k's ``TurnState``).

        The default builds the candidates and calls ``scores``; a policy that can score the columns
        directly overrides it (``Measured``), and must then give exactly what ``scores`` gives.
        """
        candidates = [turn_at(k) for k in range(len(numbers))]
        return np.array(self.scores(candidates, evidence, now), dtype=np.float64)

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
        n = len(candidates)
        numbers = np.fromiter([t.number for t in candidates], np.int64, n)
        arrived = np.fromiter([t.arrived for t in candidates], np.int64, n)
        tokens = np.fromiter([t.tokens for t in candidates], np.int64, n)
        return self.importances(numbers, arrived, tokens, evidence, now, candidates.__getitem__).tolist()

    def importances(self, numbers: np.ndarray, arrived: np.ndarray, tokens: np.ndarray, evidence: Evidence,
                    now: int, turn_at: Callable[[int], TurnState]) -> np.ndarray:
        """``scores`` as a float64 array, computed for all candidates at once.

        The candidates come as columns (their numbers, arrival steps and tokens, in candidate
        order); ``turn_at(k)`` gives candidate k's ``TurnState`` for the few turns measured one by
        one (see ``Evidence.measure_many``).

        Every element goes through the same float operations, in the same order, as the formula
        in the class docstring evaluated turn by turn (``x ** k`` from ``powers`` tables or Python's
        ``**``; numpy only multiplies, adds, subtracts, divides and compares, which are exact IEEE
        operations; the one sum over floats is ``math.fsum``, exactly rounded, so independent of
        the candidates' order). So the importances are bit for bit those of a turn-by-turn loop, in
        a live layer and in one rebuilt from the database alike.
        """
        n = len(numbers)
        if not n:
            return np.zeros(0)
        decay, lag = self.decay, evidence.lag
        settled, ratio, judged = evidence.measure_many(numbers, now, decay, self.wrong_weight, turn_at)
        ages = now - arrived
        table = powers(decay, now)
        confirm = self.confirm if lag else 0.0
        if confirm:
            verdict = np.where(judged, confirm * ratio * table[np.maximum(ages - lag, 0)], 0.0)
        else:
            verdict = np.zeros(n)
        s = self._excess(settled, verdict, ages)
        return self._per_token(s, tokens, ages, now)

    def _excess(self, settled: np.ndarray, verdict: np.ndarray, ages: np.ndarray) -> np.ndarray:
        """Settled evidence and verdict above the background rate measured over the candidates."""
        background = self.background
        if not background:
            return settled + verdict
        total_age = int(ages.sum())  # integers: exact in any order
        # fsum: exactly rounded, so the same whatever the candidates' order (a rebuilt layer lists them
        # by number, a live one by activation) and whatever the Python version
        rate = math.fsum(settled.tolist()) / total_age if total_age else 0.0
        cut = background * rate
        u = settled - cut * ages
        u = np.where(u > 0.0, u, 0.0)
        vcut = cut * self.verdict_cut
        if vcut:
            v = verdict - vcut * ages
            verdict = np.where(verdict != 0.0, np.where(v > 0.0, v, 0.0), verdict)
        return u + verdict

    def _per_token(self, s: np.ndarray, tokens: np.ndarray, ages: np.ndarray, now: int) -> np.ndarray:
        """Add the size prior and divide by size ** density (size = tokens over the candidates' mean)."""
        prior, size_power, density = self.prior, self.size_power, self.density
        if not (size_power or density):
            if prior:
                fade = powers(self.prior_decay, now)[ages] if self.prior_decay != 1.0 else 1.0
                s = s + prior * 1.0 * fade
            return s
        mean = int(tokens.sum()) / len(tokens) or 1.0
        size = np.maximum(tokens, 1) / mean
        sizes = size.tolist()
        if prior:
            fade = powers(self.prior_decay, now)[ages] if self.prior_decay != 1.0 else 1.0
            grown = np.array([x ** size_power for x in sizes]) if size_power else 1.0
            s = s + prior * grown * fade
        if density:
            s = s / np.array([x ** density for x in sizes])
        return s

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
