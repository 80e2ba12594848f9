"""The fold cache of ``memory.evidence.Evidence`` as arrays by turn number, so one decision measures
every candidate with a few array operations (``Evidence.measure_many``)."""

from __future__ import annotations

import numpy as np

from memory.arrivals import BLOCK
from memory.types import TurnState
from memory.verdicts import episode_burst, episode_closes


class Mirror:
    """The fold cache of ``Evidence`` for one key ``(decay, wrong, lag, burst, focus)``, by turn number.

    ``measure`` caches per turn the fold of its closed blocks (``total`` as of block ``last``), the
    arrival episode's verdict (belief and strength), the step of the last settled cite that counted
    and how many cites are folded; the cites after those are in the open block (the one ``now`` is
    in) and are added one by one. This mirror holds, per turn, the same cached numbers: ``total`` and
    ``base = (last + 1) * BLOCK`` (``total`` = 0 when nothing is folded), the verdict's ``belief`` and
    ``strength``, ``seen`` and ``end``, the first step after the arrival episode (for a turn not cited
    yet: the first step at which a cite no longer joins it, ``memory.verdicts``). A decision then
    evaluates, for all candidates at once, ``total * decay ** (now - base)`` plus the open block's
    cites (taken from ``Evidence._recent``, in log order), which is the float computation ``measure``
    does.

    ``stale`` marks turns the mirror may not describe: never measured, feedback on an answer that
    cited them, a cite inside their arrival episode, cites in a block that has closed since (their fold
    must be extended), or an arrival episode still open. Those go through ``measure`` itself (and are
    mirrored again); they are the turns cited in the block that closed last, so their number does
    not grow with the memory. ``position`` is scratch space: turn number -> index among the turns
    measured now.
    """

    __slots__ = ("key", "total", "base", "belief", "strength", "end", "seen", "stale", "position")

    def __init__(self, key: tuple):
        self.key = key
        self.total = np.zeros(0)
        self.base = np.zeros(0, dtype=np.int64)
        self.belief = np.zeros(0)  # the arrival episode's verdict (0 when it got no cites)
        self.strength = np.zeros(0)  # the arrival episode's strength (0: it got no cites)
        self.end = np.zeros(0, dtype=np.int64)  # first step after the arrival episode
        self.seen = np.zeros(0, dtype=np.int64)  # step of the last folded settled cite that counted (0: none)
        self.stale = np.ones(0, dtype=bool)
        self.position = np.zeros(0, dtype=np.int64)

    def reserve(self, size: int) -> None:
        """Room for turn numbers below ``size`` (new rows are stale: measured before use)."""
        have = len(self.stale)
        if size <= have:
            return
        grow = max(size, 2 * have) - have
        for name in ("total", "base", "belief", "strength", "end", "seen", "position"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate((old, np.zeros(grow, dtype=old.dtype))))
        self.stale = np.concatenate((self.stale, np.ones(grow, dtype=bool)))

    def mirror(self, t: TurnState, memo: tuple | None, cited: int) -> None:
        """Copy ``measure``'s cache of one turn, if it has one for this key (else it stays stale)."""
        lag, burst = self.key[2], episode_burst(self.key[2], self.key[3])
        if cited == 0:  # no evidence: settled 0, no verdict; a first cite before ``end`` joins the episode
            total, base, strength, belief, seen = 0.0, 0, 0.0, 0.0, 0
            end = episode_closes(t.arrived + lag, t.arrived, burst)
        elif memo is not None and memo[0] == self.key:
            _, total, last, _, strength, belief, seen, end = memo
            total, base = (total, (last + 1) * BLOCK) if last >= 0 else (0.0, 0)
        else:
            return
        n = t.number
        self.total[n] = total
        self.base[n] = base
        self.belief[n] = belief if strength > 0 else 0.0
        self.strength[n] = strength
        self.end[n] = end
        self.seen[n] = seen
        self.stale[n] = False

    def mark(self, turn: int) -> None:
        if turn < len(self.stale):  # rows past the end are created stale
            self.stale[turn] = True
