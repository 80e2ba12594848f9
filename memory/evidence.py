"""The evidence a policy measures: the citation log indexed by cited turn, the correctness signals
(feedback on the answers that cited), and the caches that make measuring it cost what the memory
holds, not what the history holds.

``Evidence.measure`` folds a turn's citations over fixed blocks of ``BLOCK`` steps (closed blocks
are folded once and cached); ``Evidence.measure_many`` does the same for all candidates of a
decision at once through ``Mirror`` (the cache as arrays by turn number). Both give bit for bit
what the formula evaluated from the raw log gives; ``memory.powers`` supplies ``base ** k`` tables
filled by Python's own ``**`` for that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memory.arrivals import BLOCK, Arrivals, Calibration, Factors
from memory.mirror import Mirror
from memory.powers import powers
from memory.types import Citation, TurnState
from memory.verdicts import SettledBelief, credit, episode_burst, episode_closes, joins


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

    ``measure_many`` is ``measure`` for all candidates at once (the cache read through ``Mirror``,
    the open block's cites from ``_recent``): a few array operations plus the few stale turns.
    """

    __slots__ = (
        "_by_turn",
        "_feedback",
        "_lag",
        "_fold",
        "_answers",
        "_mirror",
        "_recent",
        "_table",
        "_doubt",
        "_doubted",
    )

    def __init__(
        self, by_turn: Mapping[int, Sequence[Citation]], feedback: Mapping[object, float], lag: int = 0, burst: int = 0
    ):
        self._by_turn = by_turn
        self._feedback = feedback
        self._lag = lag
        self._fold: dict[int, tuple] = {}
        self._answers: dict[object, set[int]] = {}
        self._mirror: Mirror | None = None
        self._recent: list[Citation] = []  # the log's cites in the open block (see ``measure_many``)
        # per turn: prior, role, first settled cite (after the arrival episode), restored
        self._table = Arrivals(episode_burst(lag, burst))
        self._doubt = SettledBelief()  # the settled cites' verdict per turn
        # some answer was judged (partly) wrong: until then every verdict is exactly 1 (sticky)
        self._doubted = False
        self.loaded()

    # ----- the need estimator's prior: evidence a turn carries by arriving --------------------
    def arrived(self, turn: int, prior: float | None, role: str | None = None) -> None:
        """Note a turn's prior expected need (from the need estimator, once, at arrival) and its role."""
        self._table.arrived(turn, prior, role)

    def restored(self, turn: int) -> None:
        """A turn came back after an eviction (a restore, a pin): stored as protected_since > arrived."""
        self._table.restored(turn)

    def column(self, name: str, numbers: np.ndarray) -> np.ndarray:
        """``prior`` (NaN: none), ``logit`` (of the prior; 0.0: none), ``role`` (``ROLE_CODES``),
        ``settled_at``, ``nearby_at`` or ``restored`` of these turns, in order (a copy)."""
        return self._table.column(name, numbers)

    def priors(self, numbers: np.ndarray) -> np.ndarray:
        return self._table.column("prior", numbers)

    @property
    def any_restored(self) -> bool:
        """Some turn was brought back after an eviction (else every ``restored`` is False)."""
        return self._table.any_restored

    @property
    def doubted(self) -> bool:
        """Some answer was judged (partly) wrong: until then every verdict is exactly 1."""
        return self._doubted

    @property
    def with_assistant(self) -> bool:
        """An assistant turn has arrived: a person's conversation with an assistant (else people's)."""
        return self._table.assistant

    def calibration(self, now: int, strength: float, numbers: np.ndarray, *priors: float) -> Calibration:
        """The conversation's calibration of its priors by role, of a turn already shown needed and of
        a turn beside one, over ``numbers``; ``priors``: reuse prior, reuse strength, nearby prior
        (``Arrivals.calibration``)."""
        return self._table.calibration(now, strength, self._lag, numbers, *priors)

    def nearby(self, now: int, numbers: np.ndarray, prior: float = 1.0, strength: float = 0.0) -> float:
        """``calibration``'s ``nearby`` alone, as a decision reads it (``Arrivals.nearby``)."""
        return self._table.nearby(now, self._lag, numbers, prior, strength)

    def odds(
        self, now: int, strength: float, numbers: np.ndarray, reuse_prior: float = 1.0, reuse_strength: float = 0.0
    ) -> tuple[tuple[float, ...], float]:
        """``calibration``'s factors by role and its ``reuse`` alone, as a decision reads them
        (``Arrivals.odds``)."""
        return self._table.odds(now, strength, self._lag, numbers, reuse_prior, reuse_strength)

    def factors(
        self, now: int, strength: float, numbers: np.ndarray, reuse: tuple[float, float], nearby: tuple[float, float]
    ) -> Factors:
        """``odds``, ``nearby`` and the columns read (``memory.factors``); ``reuse``, ``nearby``: (prior, strength)"""
        return self._table.factors(now, strength, self._lag, numbers, *reuse, *nearby)

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
            cited = self._answers.setdefault(c.answer_turn, set())
            before = tuple(cited) if c.turn not in cited else ()
            cited.add(c.turn)
            if before:
                self._reshared(before)  # the answer's share of each turn it cited before changes
        self._table.cited(c.turn, c.step, self._lag)
        recent = self._recent
        if recent and recent[0].step < c.step // BLOCK * BLOCK:
            self._close_blocks(c.step)  # keeps ``_recent`` to one block of cites
        recent.append(c)
        mirror = self._mirror
        if mirror is not None and c.turn < len(mirror.end) and c.step < mirror.end[c.turn]:
            mirror.stale[c.turn] = True  # inside the arrival episode: the verdict changes

    def loaded(self) -> None:
        """Feedback was loaded into the mapping in bulk (a rebuild): read it once."""
        self._doubted = self._doubted or any(v < 0 for v in self._feedback.values())

    def changed(self, answer: object) -> None:
        """Feedback on ``answer`` arrived: the turns it cited are folded afresh."""
        if not self._doubted and (self._feedback.get(answer) or 0.0) < 0:
            self._doubted = True
        for turn in self._answers.get(answer, ()):
            self._fold.pop(turn, None)
            self._doubt.forget(turn)
            if self._mirror is not None:
                self._mirror.mark(turn)

    def _reshared(self, turns: tuple[int, ...]) -> None:
        """An answer cited one more turn: its share of each of ``turns`` changed. Only the arrival
        episode's strength reads shares (``_strength``), so a cached fold keeps the rest and takes the
        maximum a fresh fold takes over the episode's cites; a turn whose strength moved is re-read."""
        fold, mirror = self._fold, self._mirror
        for turn in turns:
            memo = fold.get(turn)
            if memo is None:
                continue
            key, total, last, i, strength, belief, seen, after = memo
            focus, fresh = key[4], 0.0
            for c in self._by_turn.get(turn, ()):
                if c.step >= after:  # the episode's cites are those before the first step after it
                    break
                part = self._strength(c, focus)
                fresh = part if part > fresh else fresh
            if fresh != strength:
                fold[turn] = (key, total, last, i, fresh, belief, seen, after)
                if mirror is not None:
                    mirror.mark(turn)

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

    def _strength(self, c: Citation, focus: float) -> float:
        """How much one episode cite says: its weight over the number of turns its answer cited, to
        the power ``focus`` (an answer is one piece of evidence, shared among the turns it leaned on)."""
        if not focus or c.answer_turn is None:
            return c.weight
        size = len(self._answers.get(c.answer_turn, ())) or 1
        return c.weight if size == 1 else c.weight / (size if focus == 1.0 else size**focus)

    def measure(
        self, t: TurnState, now: int, decay: float, wrong: float = 0.0, burst: int = 0, focus: float = 0.0
    ) -> tuple[float, float, float, int]:
        """(settled, strength, belief, seen) for ``t`` at ``now``.

        ``strength`` and ``belief`` are the verdict on the turn's arrival episode (its lag window's
        cites and each later one within ``burst`` steps of the one before, ``memory.verdicts.joins``):
        one piece of evidence whatever the number of its cites. ``belief`` is the product over them
        of their answers' correctness (1 when every answer stood; a single answer judged wrong takes
        it to ``wrong_weight``), ``strength`` the largest ``_strength`` among them (0: the episode
        got no cites, and ``belief`` means nothing). ``settled`` is the decayed sum over the cites
        after the episode. ``seen`` is the step of the last cite after the lag window that counted
        (value > 0: its answer was not judged wholly wrong), 0 if none.

        Work is bounded by the evidence of the last ``BLOCK`` steps plus blocks closed since the
        last call: the fold of closed blocks (and the episode's verdict, fixed once it has closed)
        are cached per turn and only extended.
        """
        cites = self._by_turn.get(t.number)
        if not cites:
            return 0.0, 0.0, 1.0, 0
        key = (decay, wrong, self._lag, burst, focus)
        memo = self._fold.get(t.number)
        n = len(cites)
        if memo is not None and memo[0] == key and memo[3] == n:
            # fast path: every citation is already folded into closed blocks (the common case)
            _, total, last, _, strength, belief, seen, _ = memo
            return (total * decay ** (now - (last + 1) * BLOCK) if last >= 0 else 0.0), strength, belief, seen
        if memo is not None and memo[0] == key:
            _, total, last, i, strength, belief, seen, after = memo
        else:
            end = t.arrived + self._lag
            span = episode_burst(self._lag, burst)
            i, prev = 0, t.arrived
            strength, belief, seen = 0.0, 1.0, 0
            while i < n and joins(cites[i].step, prev, end, span):  # the arrival episode: one verdict
                c = cites[i]
                part = self._strength(c, focus)
                strength = part if part > strength else strength
                belief *= self._belief(c, wrong)
                if c.step >= end and self._value(c, wrong) > 0.0:
                    seen = c.step
                prev = c.step
                i += 1
            if i == n and now < episode_closes(end, prev, span):  # a cite may still join: do not cache
                return 0.0, strength, belief, seen
            after = max(end, prev + 1) if i else end  # the first step after the episode
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
            self._fold[t.number] = (key, total, last, i, strength, belief, seen, after)
        out = total * decay ** (now - (last + 1) * BLOCK) if last >= 0 else 0.0
        for j in range(i, n):
            c = cites[j]
            value = self._value(c, wrong)
            if value > 0.0:
                seen = c.step
            out += value * decay ** (now - c.step)
        return out, strength, belief, seen

    def settled_belief(self, numbers: np.ndarray, wrong: float, burst: int = 0) -> np.ndarray:  # ``memory.verdicts``
        """The verdict of each turn's settled cites (``SettledBelief``). While no answer has been judged
        wrong every factor is exactly 1.0, so is every product: no cite is read."""
        if not self._doubted:
            return np.ones(len(numbers))
        return self._doubt.of(numbers, wrong, self._lag, self._by_turn, self._belief, burst)

    def measure_many(
        self,
        numbers: np.ndarray,
        now: int,
        decay: float,
        wrong: float,
        turn_at: Callable[[int], TurnState],
        burst: int = 0,
        focus: float = 0.0,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``measure`` for many turns at once: (settled, belief, strength, seen) arrays.

        ``numbers`` are the turns' numbers, ``turn_at(k)`` the k-th turn. ``belief[k]`` and
        ``strength[k]`` are the arrival episode's verdict (both 0 when the episode got no cites),
        ``seen[k]`` the step of the turn's last cite after the lag window that counted (0: none).
        Bit for bit what ``measure`` gives: for turns the mirror describes, the same products of
        the same numbers, summed in the same order (the folded total first, then the open block's
        cites in log order); the rest (``Mirror.stale``) go through ``measure`` itself.
        """
        key = (decay, wrong, self._lag, burst, focus)
        mirror = self._mirror
        if mirror is None or mirror.key != key:
            mirror = self._mirror = Mirror(key)
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
        strength = mirror.strength[numbers]
        for k in stale:
            t = turn_at(k)
            settled[k], strength[k], b, seen[k] = self.measure(t, now, decay, wrong, burst, focus)
            belief[k] = b if strength[k] > 0 else 0.0
            mirror.mirror(t, self._fold.get(t.number), len(self._by_turn.get(t.number, ())))
        return settled, belief, strength, seen

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
        mirror: Mirror,
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
