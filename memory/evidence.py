"""The evidence a policy measures: the citation log indexed by cited turn, the correctness signals
(feedback on the answers that cited), and the caches that make measuring it cost what the memory
holds, not what the history holds.

``Evidence.measure`` folds a turn's citations over fixed blocks of ``BLOCK`` steps (closed blocks
are folded once and cached); ``Evidence.measure_many`` does the same for all candidates of a
decision at once through ``_Mirror`` (the cache as arrays by turn number). Both give bit for bit
what the formula evaluated from the raw log gives; ``powers`` supplies ``base ** k`` tables filled
by Python's own ``**`` for that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memory.arrivals import BLOCK, Arrivals, Calibration
from memory.types import Citation, TurnState
from memory.verdicts import SettledBelief

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
        more = np.array([base**k for k in range(have, size)], dtype=np.float64)
        table = more if table is None else np.concatenate((table, more))
        _POWERS[base] = table  # a reader holding the old table still reads correct entries
    return table


def credit(value: float | None, wrong: float) -> float:
    """How much a citation counts given the feedback on the answer that made it (``correctness``).

    No feedback or feedback >= 0: 1 (the answer stood). Feedback -1 (wrong): ``wrong``. Feedback in
    (-1, 0), an answer that was partly right (it had some of what it needed), gets partial credit
    in proportion: ``wrong + (1 - wrong) * (1 + value)``; -0.5 is halfway between wrong and right.
    """
    if value is None or value >= 0:
        return 1.0
    if value <= -1.0:
        return wrong
    return wrong + (1.0 - wrong) * (1.0 + value)


class _Mirror:
    """The fold cache of ``Evidence`` for one key ``(decay, wrong, lag)``, as arrays by turn number.

    ``measure`` caches per turn the fold of its closed blocks (``total`` as of block ``last``), the
    lag window's verdict, the step of the last settled cite that counted and how many cites are
    folded; the cites after those are in the open block (the one ``now`` is in) and are added one by
    one. This mirror holds, per turn, the same cached numbers: ``total`` and ``base = (last + 1) *
    BLOCK`` (``total`` = 0 when nothing is folded), the verdict's ``belief``, ``seen`` and the end of
    the lag window. A decision then evaluates, for all candidates at once, ``total * decay ** (now -
    base)`` plus the open block's cites (taken from ``Evidence._recent``, in log order), which is the
    float computation ``measure`` does.

    ``stale`` marks turns the mirror may not describe: never measured, feedback on an answer that
    cited them, a cite inside their lag window, cites in a block that has closed since (their fold
    must be extended), or a lag window still open. Those go through ``measure`` itself (and are
    mirrored again); they are the turns cited in the block that closed last, so their number does
    not grow with the memory. ``position`` is scratch space: turn number -> index among the turns
    measured now.
    """

    __slots__ = ("key", "total", "base", "belief", "judged", "end", "seen", "stale", "position")

    def __init__(self, key: tuple):
        self.key = key
        self.total = np.zeros(0)
        self.base = np.zeros(0, dtype=np.int64)
        self.belief = np.zeros(0)  # the lag window's verdict (0 when it got no cites)
        self.judged = np.zeros(0, dtype=bool)  # the lag window got cites (total > 0)
        self.end = np.zeros(0, dtype=np.int64)  # first step after the lag window
        self.seen = np.zeros(0, dtype=np.int64)  # step of the last folded settled cite that counted (0: none)
        self.stale = np.ones(0, dtype=bool)
        self.position = np.zeros(0, dtype=np.int64)

    def reserve(self, size: int) -> None:
        """Room for turn numbers below ``size`` (new rows are stale: measured before use)."""
        have = len(self.stale)
        if size <= have:
            return
        grow = max(size, 2 * have) - have
        for name in ("total", "base", "belief", "judged", "end", "seen", "position"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate((old, np.zeros(grow, dtype=old.dtype))))
        self.stale = np.concatenate((self.stale, np.ones(grow, dtype=bool)))

    def mirror(self, t: TurnState, memo: tuple | None, cited: int) -> None:
        """Copy ``measure``'s cache of one turn, if it has one for this key (else it stays stale)."""
        if cited == 0:  # no evidence at all: settled 0, no verdict
            total, base, ptot, belief, seen = 0.0, 0, 0.0, 0.0, 0
        elif memo is not None and memo[0] == self.key:
            _, total, last, _, ptot, belief, seen = memo
            total, base = (total, (last + 1) * BLOCK) if last >= 0 else (0.0, 0)
        else:
            return
        n = t.number
        self.total[n] = total
        self.base[n] = base
        self.belief[n] = belief if ptot > 0 else 0.0
        self.judged[n] = ptot > 0
        self.end[n] = t.arrived + self.key[2]
        self.seen[n] = seen
        self.stale[n] = False

    def mark(self, turn: int) -> None:
        if turn < len(self.stale):  # rows past the end are created stale
            self.stale[turn] = True


class Evidence:
    """Read-only view of the citation log, indexed by cited turn, plus correctness signals.

    ``correctness(answer)`` is 1 unless feedback on that answer said it was wrong (then
    ``wrong_weight``, 0 by default): the paper's *demonstrated utility* weighting. ``lag`` is the
    lag in force, given when the view is made (the layer's, fixed for its life): evidence a turn got
    inside its own lag window (steps ``arrived .. arrived + lag - 1``) is *provisional*, evidence after it is *settled*.

    Settled evidence is computed from the raw log at decision time. So that a decision costs what the
    memory holds, not what the history holds, its value is defined by a fold over fixed blocks of
    ``BLOCK`` steps (``E_b = E_prev * decay ** (steps between block ends) + sum of block b``); closed
    blocks never change, so the fold of a turn's closed blocks is cached and extended, never
    recomputed. The cache is exact by construction: a fresh fold (a rebuilt layer) performs the same
    float operations in the same order and gives bit-identical scores. Feedback on an answer drops
    the cache of the turns it cited (their correctness changed).

    ``measure_many`` is ``measure`` for all candidates at once (the cache read through ``_Mirror``,
    the open block's cites from ``_recent``): a few array operations plus the few stale turns.
    """

    __slots__ = ("_by_turn", "_feedback", "_lag", "_fold", "_answers", "_mirror", "_recent", "_table", "_doubt")

    def __init__(self, by_turn: Mapping[int, Sequence[Citation]], feedback: Mapping[object, float], lag: int = 0):
        self._by_turn = by_turn
        self._feedback = feedback
        self._lag = lag
        self._fold: dict[int, tuple] = {}
        self._answers: dict[object, set[int]] = {}
        self._mirror: _Mirror | None = None
        self._recent: list[Citation] = []  # the log's cites in the open block (see ``measure_many``)
        self._table = Arrivals()  # per turn: prior, role, first settled cite, restored
        self._doubt = SettledBelief()  # the settled cites' verdict per turn

    # ----- the need estimator's prior: evidence a turn carries by arriving --------------------
    def arrived(self, turn: int, prior: float | None, role: str | None = None) -> None:
        """Note a turn's prior expected need (from the need estimator, once, at arrival) and its role."""
        self._table.arrived(turn, prior, role)

    def restored(self, turn: int) -> None:
        """A turn came back after an eviction (a restore, a pin): stored as protected_since > arrived."""
        self._table.restored(turn)

    def column(self, name: str, numbers: np.ndarray) -> np.ndarray:
        """``prior`` (NaN: none), ``role`` (``ROLE_CODES``) or ``restored`` of these turns, in order."""
        return self._table.column(name, numbers)

    def priors(self, numbers: np.ndarray) -> np.ndarray:
        return self._table.column("prior", numbers)

    @property
    def with_assistant(self) -> bool:
        """An assistant turn has arrived: a person's conversation with an assistant (else people's)."""
        return self._table.assistant

    def calibration(
        self, now: int, strength: float, numbers: np.ndarray, reuse_prior: float = 1.0, reuse_strength: float = 0.0
    ) -> Calibration:
        """The conversation's calibration of its priors by role, and of a turn already shown needed,
        over ``numbers`` (``Arrivals.calibration``)."""
        return self._table.calibration(now, strength, self._lag, numbers, reuse_prior, reuse_strength)

    @property
    def lag(self) -> int:
        """Steps after arrival during which a turn's evidence is provisional (read-only: the fold
        caches are computed with it)."""
        return self._lag

    def of(self, turn: int) -> Sequence[Citation]:
        return self._by_turn.get(turn, ())

    def feedback(self, answer: object) -> float | None:
        return self._feedback.get(answer)

    def correctness(self, answer: object, wrong_weight: float = 0.0) -> float:
        return credit(self._feedback.get(answer), wrong_weight)

    # ----- kept current by the layer --------------------------------------------------------
    def noted(self, c: Citation) -> None:
        """A citation was appended to the log (in step order)."""
        if c.answer_turn is not None:
            self._answers.setdefault(c.answer_turn, set()).add(c.turn)
        self._table.cited(c.turn, c.step, self._lag)
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
            self._doubt.forget(turn)
            if self._mirror is not None:
                self._mirror.mark(turn)

    # ----- measured at decision time --------------------------------------------------------
    def _value(self, c: Citation, wrong: float) -> float:
        if c.answer_turn is None:
            return c.weight
        return c.weight * self.correctness(c.answer_turn, wrong)

    def _belief(self, c: Citation, wrong: float) -> float:
        """The factor one lag-window cite puts on the verdict: its answer's correctness, to the power
        of the cite's weight (an unsure cite moves the belief less)."""
        if c.answer_turn is None:
            return 1.0
        value = self.correctness(c.answer_turn, wrong)
        return value if c.weight == 1.0 else value**c.weight

    def measure(self, t: TurnState, now: int, decay: float, wrong: float = 0.0) -> tuple[float, float, float, int]:
        """(settled, provisional total weight, belief, seen) for ``t`` at ``now``.

        ``belief`` is the lag window's verdict: the product over its cites of their answers'
        correctness (1 when every answer stood; a single answer judged wrong takes it to
        ``wrong_weight``; meaningful only when the total weight is > 0). ``seen`` is the step of the
        last settled cite that counted (value > 0: its answer was not judged wholly wrong), 0 if none.

        Work is bounded by the evidence of the last ``BLOCK`` steps plus blocks closed since the
        last call: the fold of closed blocks (and the lag window's verdict, fixed once computed)
        are cached per turn and only extended.
        """
        cites = self._by_turn.get(t.number)
        if not cites:
            return 0.0, 0.0, 1.0, 0
        key = (decay, wrong, self._lag)
        memo = self._fold.get(t.number)
        n = len(cites)
        if memo is not None and memo[0] == key and memo[3] == n:
            # fast path: every citation is already folded into closed blocks (the common case)
            _, total, last, _, ptot, belief, seen = memo
            return (total * decay ** (now - (last + 1) * BLOCK) if last >= 0 else 0.0), ptot, belief, seen
        if memo is not None and memo[0] == key:
            _, total, last, i, ptot, belief, seen = memo
        else:
            end = t.arrived + self._lag
            i = 0
            ptot, belief, seen = 0.0, 1.0, 0
            while i < n and cites[i].step < end:
                c = cites[i]
                ptot += c.weight
                belief *= self._belief(c, wrong)
                i += 1
            if i == n and now < end:  # the lag window is still open: do not cache its verdict
                return 0.0, ptot, belief, 0
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
                value = self._value(c, wrong)
                if value > 0.0:
                    seen = c.step
                part += value * decay ** (stop - c.step)
                i += 1
            total = total * decay ** ((b - last) * BLOCK) + part if last >= 0 else part
            last = b
        if memo is None or i != start or memo[0] != key:
            self._fold[t.number] = (key, total, last, i, ptot, belief, seen)
        out = total * decay ** (now - (last + 1) * BLOCK) if last >= 0 else 0.0
        for j in range(i, n):
            c = cites[j]
            value = self._value(c, wrong)
            if value > 0.0:
                seen = c.step
            out += value * decay ** (now - c.step)
        return out, ptot, belief, seen

    def settled_belief(self, numbers: np.ndarray, wrong: float) -> np.ndarray:  # ``memory.verdicts``
        return self._doubt.of(numbers, wrong, self._lag, self._by_turn, self._belief)

    def measure_many(
        self, numbers: np.ndarray, now: int, decay: float, wrong: float, turn_at: Callable[[int], TurnState]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``measure`` for many turns at once: (settled, belief, judged, seen) arrays.

        ``numbers`` are the turns' numbers, ``turn_at(k)`` the k-th turn. ``belief[k]`` is the lag
        window's verdict (0 when ``judged[k]`` is false: no cites in the window), ``seen[k]`` the
        step of the turn's last settled cite that counted (0: none).
        Bit for bit what ``measure`` gives: for turns the mirror describes, the same products of
        the same numbers, summed in the same order (the folded total first, then the open block's
        cites in log order); the rest (``_Mirror.stale``) go through ``measure`` itself.
        """
        key = (decay, wrong, self._lag)
        mirror = self._mirror
        if mirror is None or mirror.key != key:
            mirror = self._mirror = _Mirror(key)
        self._close_blocks(now)
        recent = self._recent
        mirror.reserve(int(numbers.max()) + 1)
        table = powers(decay, now)
        stale = mirror.stale[numbers].nonzero()[0].tolist()
        settled = mirror.total[numbers] * table[now - mirror.base[numbers]]
        seen = mirror.seen[numbers]
        if recent and not self._add_open_block(mirror, numbers, settled, seen, now, table, wrong):
            stale = list(range(len(numbers)))  # a turn asked for twice: measure them one by one
        belief = mirror.belief[numbers]
        judged = mirror.judged[numbers]
        for k in stale:
            t = turn_at(k)
            settled[k], ptot, b, seen[k] = self.measure(t, now, decay, wrong)
            belief[k] = b if ptot > 0 else 0.0
            judged[k] = ptot > 0
            mirror.mirror(t, self._fold.get(t.number), len(self._by_turn.get(t.number, ())))
        return settled, belief, judged, seen

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

    def _add_open_block(
        self,
        mirror: _Mirror,
        numbers: np.ndarray,
        settled: np.ndarray,
        seen: np.ndarray,
        now: int,
        table: np.ndarray,
        wrong: float,
    ) -> bool:
        """Add to ``settled`` the open block's cites of the (non-stale) turns in ``numbers``, and
        move ``seen`` to the last of them that counted.

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
                c.weight
                if c.answer_turn is None or feedback.get(c.answer_turn, 0.0) >= 0
                else c.weight * credit(feedback[c.answer_turn], wrong)
                for c in map(recent.__getitem__, pick.tolist())
            ]
            values = np.array(values)
            np.add.at(settled, k[pick], values * table[now - steps[pick]])
            counted = values > 0.0
            np.maximum.at(seen, k[pick][counted], steps[pick][counted])
        return True
