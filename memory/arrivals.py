"""What the evidence keeps about each turn besides its citations: the need estimator's prior, the
turn's role, the step of its first settled cite and whether it was ever brought back after an
eviction; and, from those, the conversation's own calibration of its priors by role.

All of it is a function of the log (the turns as stored, the citations in step order), so a layer
rebuilt from the database holds the same table as the live one, and computes the same calibration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BLOCK = 16  # steps per block of the evidence's folds (``memory.evidence``) and of the calibration
ROLE_NAMES = ("user", "assistant", "other")
ROLE_CODES = {"user": 0, "assistant": 1}
OTHER_ROLE = 2


@dataclass(frozen=True)
class Calibration:
    """The conversation's verdict on its priors per role (``ROLE_NAMES``), as of step ``start``: the
    turns past their lag window, how many got a cite after it, the sum of their priors, and the
    factor on the odds of each role's prior (``Arrivals.calibration``)."""

    start: int
    turns: tuple[int, ...]
    cited: tuple[int, ...]
    expected: tuple[float, ...]
    factor: tuple[float, ...]

    def rows(self) -> list[dict]:
        """One row per role that has turns (the inspector's table)."""
        return [
            {
                "role": ROLE_NAMES[k],
                "turns": self.turns[k],
                "cited later": self.cited[k],
                "expected by the prior": round(self.expected[k], 1),
                "factor": round(self.factor[k], 2),
            }
            for k in range(len(ROLE_NAMES))
            if self.turns[k]
        ]


class Arrivals:
    """Per turn number: prior (NaN: none), role code, first settled cite's step (0: none), restored."""

    __slots__ = ("prior", "role", "settled_at", "restored_", "assistant", "_memo")

    def __init__(self) -> None:
        self.prior = np.full(64, np.nan)
        self.role = np.zeros(64, dtype=np.int8)
        self.settled_at = np.zeros(64, dtype=np.int64)
        self.restored_ = np.zeros(64, dtype=bool)
        self.assistant = False  # an assistant turn has arrived: a person-assistant conversation
        self._memo: tuple | None = None  # (key, Calibration) of the block computed last

    def reserve(self, size: int) -> None:
        have = len(self.prior)
        if size <= have:
            return
        grow = max(size, 2 * have) - have
        self.prior = np.concatenate((self.prior, np.full(grow, np.nan)))
        self.role = np.concatenate((self.role, np.zeros(grow, dtype=np.int8)))
        self.settled_at = np.concatenate((self.settled_at, np.zeros(grow, dtype=np.int64)))
        self.restored_ = np.concatenate((self.restored_, np.zeros(grow, dtype=bool)))

    def arrived(self, turn: int, prior: float | None, role: str | None) -> None:
        if prior is not None and not (math.isfinite(prior) and prior >= 0.0):
            raise ValueError(f"turn {turn}: prior must be a finite number >= 0 or None, got {prior!r}")
        self.reserve(turn + 1)
        self.prior[turn] = np.nan if prior is None else float(prior)
        code = ROLE_CODES["user"] if role is None else ROLE_CODES.get(role, OTHER_ROLE)
        self.role[turn] = code
        if code == ROLE_CODES["assistant"]:
            self.assistant = True

    def restored(self, turn: int) -> None:
        self.reserve(turn + 1)
        self.restored_[turn] = True

    def cited(self, turn: int, step: int, lag: int) -> None:
        """A cite of ``turn`` at ``step`` was logged (in step order); turn n arrived at step n."""
        self.reserve(turn + 1)
        if not self.settled_at[turn] and step >= turn + lag:
            self.settled_at[turn] = step

    def column(self, name: str, numbers: np.ndarray) -> np.ndarray:
        self.reserve(int(numbers.max()) + 1 if len(numbers) else 0)
        return getattr(self, "restored_" if name == "restored" else name)[numbers]

    def calibration(self, now: int, strength: float, lag: int) -> Calibration:
        """How often this conversation came back to each role's turns, against what their priors said.

        Measured on the turns whose lag window had ended by the start of the current block
        (``now // BLOCK * BLOCK``: it moves once per ``BLOCK`` steps and costs one pass over the
        table then): per role, ``cited`` = those with a cite after their lag window (before that
        start), ``expected`` = the sum of their priors. The factor is the role's rate of coming back
        relative to the conversation's ``rate = cited / expected`` (all roles), the role's rate shrunk
        toward the conversation's by ``strength`` pseudo-turns, each with the role's mean prior
        ``mean_r`` and coming back at the conversation's rate (the mean of a Gamma-Poisson rate)::

            factor = (cited_r + strength * mean_r * rate) / ((expected_r + strength * mean_r) * rate)

        1 for every role while no turn has been cited after its lag window, and in a conversation of
        one role; a role the conversation comes back to more than its priors said gets more than 1,
        one it comes back to less gets less. Only turns with a prior count.
        """
        start = now // BLOCK * BLOCK
        key = (start, strength, lag)
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        n = len(ROLE_NAMES)
        turns, cited, expected = [0] * n, [0] * n, [0.0] * n
        end = min(start - lag, len(self.prior) - 1)  # turns 1 .. end are past their lag window
        if end >= 1:
            p = self.prior[1 : end + 1]
            known = ~np.isnan(p)
            roles = self.role[1 : end + 1]
            at = self.settled_at[1 : end + 1]
            hit = known & (at > 0) & (at < start)
            for code in range(n):
                mine = known & (roles == code)
                turns[code] = int(mine.sum())
                if turns[code]:
                    expected[code] = float(p[mine].sum())  # the same array in every layer: the same sum
                    cited[code] = int((hit & mine).sum())
        total = math.fsum(expected)
        rate = sum(cited) / total if total > 0.0 else 0.0
        mean = [expected[k] / turns[k] if turns[k] else 0.0 for k in range(n)]  # a pseudo-turn's prior
        factor = tuple(
            1.0
            if rate <= 0.0 or mean[k] <= 0.0 or turns[k] == sum(turns)
            else (cited[k] + strength * mean[k] * rate) / ((expected[k] + strength * mean[k]) * rate)
            for k in range(n)
        )
        out = Calibration(start, tuple(turns), tuple(cited), tuple(expected), factor)
        self._memo = (key, out)
        return out
