"""What the evidence keeps about each turn besides its citations: the need estimator's prior, the
turn's role, the step of its first settled cite, the step a turn beside it was first shown needed and
whether it was ever brought back after an eviction; and, from those, the conversation's own
calibration of its priors by role, of a turn already shown needed and of a turn beside one.

All of it is a function of the log (the turns as stored, the citations in step order), so a layer
rebuilt from the database holds the same table as the live one, and computes the same calibration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from memory.factors import ROLE_NAMES, Factors, factors, ratio, role_factors
from memory.logodds import logit
from memory.nearby import NEARBY, beside_counts, mark_beside
from memory.verdicts import joins

BLOCK = 16  # steps per block of the evidence's folds (``memory.evidence``)
ROLE_CODES = {"user": 0, "assistant": 1}
OTHER_ROLE = 2


@dataclass(frozen=True)
class Calibration:
    """The conversation's verdict on its priors per role (``ROLE_NAMES``), at step ``start``: the
    turns in memory past their lag window, how many got a cite after it, the sum of their priors, and the
    factor on the odds of each role's prior (``Arrivals.calibration``)."""

    start: int
    turns: tuple[int, ...]
    cited: tuple[int, ...]
    expected: tuple[float, ...]
    factor: tuple[float, ...]
    needed: int = 0  # turns among them shown needed (a cite after the arrival episode)
    again: int = 0  # the cites at later steps those turns got after their first
    expected_again: float = 0.0  # how many later cites they would have got at the rate of first ones
    reuse: float = 1.0  # the factor on the odds of a turn already shown needed (``Arrivals.calibration``)
    beside: int = 0  # turns not yet shown needed when one within ``NEARBY`` of them first was
    back: int = 0  # those of them first cited after that (the conversation came back to the neighbourhood)
    expected_back: float = 0.0  # how many would have been at the rate of first cites
    nearby: float = 1.0  # the factor on the odds of a turn beside one shown needed (``Arrivals.nearby``)

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

    def nearby_row(self) -> dict:
        """The turns beside one shown needed: how often they were cited after it, against the first-cite rate."""
        return {
            "beside a cited turn": self.beside,
            "cited after it": self.back,
            "expected at the first-cite rate": round(self.expected_back, 1),
            "factor": round(self.nearby, 2),
        }

    def reuse_row(self) -> dict:
        """The turns already shown needed: how often they came back, against the first-cite rate."""
        return {
            "shown needed": self.needed,
            "cited again": self.again,
            "expected at the first-cite rate": round(self.expected_again, 1),
            "factor": round(self.reuse, 2),
        }


class Arrivals:
    """Per turn number: prior (NaN: none), its log-odds, role code, first settled cite's step (0: none),
    the step a turn beside it was first shown needed (``nearby_at``, 0: none), restored.

    ``logit`` is ``logodds.logit(prior)`` (0.0, ``logit(0.5)``, where there is none), computed once
    when the prior is set, so a decision reads it instead of taking a logarithm per candidate; the
    one place a prior is written writes both, so they never disagree.

    A cite is *settled* here, as in ``Evidence.measure``, once the turn's arrival episode is over: its
    lag window, and each later cite within ``burst`` steps of the episode's last (``memory.verdicts``;
    ``burst`` is the policy's, 0 at lag 0). So a confirmation that lands just after the window, while
    the conversation is still on the turn, does not count as the conversation coming back to it."""

    __slots__ = (
        "prior",
        "logit",
        "role",
        "settled_at",
        "nearby_at",
        "last_settled",
        "again",
        "restored_",
        "assistant",
        "burst",
        "episode",
        "roles",
        "any_restored",
    )

    def __init__(self, burst: int = 0) -> None:
        self.burst = burst  # the arrival episode's burst (``verdicts.episode_burst``)
        self.episode = np.zeros(64, dtype=np.int64)  # the episode's last cite (0: none yet; -1: over)
        self.prior = np.full(64, np.nan)
        self.logit = np.zeros(64)  # logit(prior): read by the posterior (``Measured._posterior``)
        self.role = np.zeros(64, dtype=np.int8)
        self.settled_at = np.zeros(64, dtype=np.int64)
        # the first settled cite of a turn within NEARBY of it, at a step after it arrived (0: none)
        self.nearby_at = np.zeros(64, dtype=np.int64)
        self.last_settled = np.zeros(64, dtype=np.int64)  # step of the last settled cite (0: none)
        self.again = np.zeros(64, dtype=np.int64)  # steps after the first with a settled cite
        self.restored_ = np.zeros(64, dtype=bool)
        self.assistant = False  # an assistant turn has arrived: a person-assistant conversation
        self.roles = 0  # bit per role code that some turn with a prior has had (only ever grows)
        self.any_restored = False  # some turn was brought back after an eviction

    def reserve(self, size: int) -> None:
        have = len(self.prior)
        if size <= have:
            return
        grow = max(size, 2 * have) - have
        self.prior = np.concatenate((self.prior, np.full(grow, np.nan)))
        self.logit = np.concatenate((self.logit, np.zeros(grow)))
        self.role = np.concatenate((self.role, np.zeros(grow, dtype=np.int8)))
        self.settled_at = np.concatenate((self.settled_at, np.zeros(grow, dtype=np.int64)))
        self.nearby_at = np.concatenate((self.nearby_at, np.zeros(grow, dtype=np.int64)))
        self.last_settled = np.concatenate((self.last_settled, np.zeros(grow, dtype=np.int64)))
        self.again = np.concatenate((self.again, np.zeros(grow, dtype=np.int64)))
        self.episode = np.concatenate((self.episode, np.zeros(grow, dtype=np.int64)))
        self.restored_ = np.concatenate((self.restored_, np.zeros(grow, dtype=bool)))

    def arrived(self, turn: int, prior: float | None, role: str | None) -> None:
        if prior is not None and not (math.isfinite(prior) and prior >= 0.0):
            raise ValueError(f"turn {turn}: prior must be a finite number >= 0 or None, got {prior!r}")
        self.reserve(turn + 1)
        self.prior[turn] = np.nan if prior is None else float(prior)
        self.logit[turn] = 0.0 if prior is None else logit(float(prior))  # a pure function of the prior
        code = ROLE_CODES["user"] if role is None else ROLE_CODES.get(role, OTHER_ROLE)
        self.role[turn] = code
        if prior is not None:
            self.roles |= 1 << code
        if code == ROLE_CODES["assistant"]:
            self.assistant = True

    def restored(self, turn: int) -> None:
        self.reserve(turn + 1)
        self.restored_[turn] = True
        self.any_restored = True

    def cited(self, turn: int, step: int, lag: int) -> None:
        """A cite of ``turn`` at ``step`` was logged (in step order); turn n arrived at step n."""
        self.reserve(turn + 1)
        if step <= 0:
            return
        if self.burst and self.episode[turn] >= 0:  # the arrival episode (``verdicts.joins``)
            if joins(step, self.episode[turn] or turn, turn + lag, self.burst):
                self.episode[turn] = step
                return
            self.episode[turn] = -1
        elif step < turn + lag:
            return
        if not self.settled_at[turn]:
            self.settled_at[turn] = step
            self.reserve(turn + NEARBY + 1)
            mark_beside(self.nearby_at, turn, step)
        elif step > self.last_settled[turn]:
            self.again[turn] += 1
        self.last_settled[turn] = step

    def column(self, name: str, numbers: np.ndarray) -> np.ndarray:
        try:  # every turn that arrived has its row: only a number past them all needs the table grown
            return getattr(self, "restored_" if name == "restored" else name)[numbers]
        except IndexError:
            self.reserve(int(numbers.max()) + 1)
            return getattr(self, "restored_" if name == "restored" else name)[numbers]

    def calibration(
        self,
        now: int,
        strength: float,
        lag: int,
        numbers: np.ndarray,
        reuse_prior: float = 1.0,
        reuse_strength: float = 0.0,
        nearby_prior: float = 1.0,
    ) -> Calibration:
        """How often this conversation came back to each role's turns, against what their priors said.

        Measured on ``numbers`` (the turns a decision scores: those in memory, so it costs what the
        memory holds and a view of one page computes what the whole conversation's view computes)
        whose lag window has ended by ``now``: per role, ``cited`` = those with a cite after their arrival
        episode (a settled cite, ``Arrivals``), ``expected`` = the sum of their priors. The factor is
        the role's rate of coming back relative to the conversation's ``rate = cited / expected`` (all
        roles), the role's rate shrunk toward the conversation's by ``strength`` pseudo-turns, each with
        the role's mean prior ``mean_r`` and coming back at the conversation's rate (the mean of a Gamma-Poisson rate)::

            factor = (cited_r + strength * mean_r * rate) / ((expected_r + strength * mean_r) * rate)

        1 for every role while no such turn has been cited after its lag window, and among turns of
        one role; a role the conversation comes back to more than its priors said gets more than 1,
        one it comes back to less gets less. Only turns with a prior count.

        ``reuse`` answers the other question the log can: once a turn has been shown needed, does this
        conversation come back to it? Some conversations ask about a fact once (a person asks an
        assistant about each of their plans in turn), others keep returning to it. Over the same
        turns, the first settled cites are ``needed`` events against an exposure of ``prior x steps
        from the lag window's end to the first cite (or now)``; later cites (at a later step than
        the turn's previous one) are ``again`` events against ``prior x steps since the first cite``.
        ``expected_again`` is that second exposure at the first cites' rate, and the factor on the
        odds of a turn already shown needed is their ratio, shrunk toward ``reuse_prior`` (the kind
        of conversation's) by ``reuse_strength`` pseudo-events::

            reuse = (again + reuse_strength * reuse_prior) / (expected_again + reuse_strength)

        (``reuse_prior`` when ``reuse_strength`` is 0 or no turn has been shown needed.)

        ``nearby`` asks the same of the turns *beside* one shown needed (``nearby_at``), with
        ``nearby_prior`` in place of ``reuse_prior`` and the same pseudo-events (``Arrivals.nearby``).
        """
        turns, cited, p, roles, numbers, hit = self._tally(now, lag, numbers)
        expected = self._expected(turns, p, roles)
        needed, again, expected_again = self._again(now, lag, numbers, p, hit) if len(numbers) else (0, 0, 0.0)
        reuse = reuse_prior
        if reuse_strength and needed:
            reuse = ratio(again + reuse_strength * reuse_prior, expected_again + reuse_strength)
        factor = role_factors(turns, cited, expected, strength)
        beside, back, expected_back = (
            beside_counts(self.settled_at, self.nearby_at, now, lag, numbers, p) if len(numbers) else (0, 0, 0.0)
        )
        nearby = nearby_prior
        if reuse_strength and beside and nearby_prior != 1.0:
            nearby = ratio(back + reuse_strength * nearby_prior, expected_back + reuse_strength)
        return Calibration(
            now,
            tuple(turns),
            tuple(cited),
            tuple(expected),
            factor,
            needed,
            again,
            expected_again,
            reuse,
            beside,
            back,
            expected_back,
            nearby,
        )

    def odds(
        self,
        now: int,
        strength: float,
        lag: int,
        numbers: np.ndarray,
        reuse_prior: float = 1.0,
        reuse_strength: float = 0.0,
    ) -> tuple[tuple[float, ...], float]:
        """``calibration``'s ``factor`` and ``reuse`` alone (``factors`` without ``nearby``)."""
        out = self.factors(now, strength, lag, numbers, reuse_prior, reuse_strength)
        return out.factor, out.reuse

    def nearby(self, now: int, lag: int, numbers: np.ndarray, prior: float = 1.0, strength: float = 0.0) -> float:
        """The factor on the odds of a turn beside one shown needed, measured over ``numbers``.

        Where each question is about one place in the conversation (a person asks an assistant about
        each of their plans once), the turns around a fact it has used are done with too; where the
        conversation keeps returning to a place, they are not. Over the turns with a prior past their lag
        window, a turn is *beside* once a turn within ``NEARBY`` of it was first shown needed
        (``nearby_at``) while it was not yet. Its first settled cite after that is a ``back`` event,
        against an exposure of ``prior x steps from then (or its lag window's end) to its first cite (or
        now)``; every other turn's first settled cite is a first-cite event, against ``prior x steps from
        its lag window's end to that cite, to when it was beside, or to now``. ``expected_back`` is the
        beside exposure at the first cites' rate, and the factor is their ratio shrunk toward ``prior``
        (the kind of conversation's) by ``strength`` pseudo-events::

            nearby = (back + strength * prior) / (expected_back + strength)

        ``prior`` when it is 1 (the rule is off), ``strength`` is 0 or no turn is beside one shown needed.
        """
        return self.factors(now, 0.0, lag, numbers, nearby_prior=prior, nearby_strength=strength).nearby

    def factors(
        self,
        now: int,
        strength: float,
        lag: int,
        numbers: np.ndarray,
        reuse_prior: float = 1.0,
        reuse_strength: float = 0.0,
        nearby_prior: float = 1.0,
        nearby_strength: float = 0.0,
    ) -> Factors:
        """``calibration``'s ``factor``, ``reuse`` and ``nearby`` (what a decision reads), the same
        numbers from one read of the turns' columns, with the columns the posterior applies them by
        (``memory.factors``)."""
        return factors(
            self, now, strength, lag, numbers, (reuse_prior, reuse_strength), (nearby_prior, nearby_strength)
        )

    def _tally(self, now: int, lag: int, numbers: np.ndarray) -> tuple:
        """Of ``numbers``, the turns with a prior whose lag window has ended by ``now``: (turns per role,
        those shown needed per role, and of those turns, in turn order: priors, roles, numbers, shown
        needed). Counts are integers, exact in any order."""
        self.reserve(int(numbers.max()) + 1 if len(numbers) else 0)
        numbers = np.sort(numbers[numbers + lag <= now])  # turn order: the same sums in any view
        p = self.prior[numbers]
        known = ~np.isnan(p)
        if not known.all():
            numbers, p = numbers[known], p[known]
        roles = self.role[numbers]
        hit = self.settled_at[numbers] > 0
        size = len(ROLE_NAMES)
        turns = np.bincount(roles, minlength=size).tolist()
        cited = np.bincount(roles[hit], minlength=size).tolist()
        return turns, cited, p, roles, numbers, hit

    @staticmethod
    def _expected(turns: list[int], p: np.ndarray, roles: np.ndarray) -> list[float]:
        """The sum of the priors per role (``math.fsum``: exactly rounded), 0.0 for a role without turns."""
        if sum(1 for k in turns if k) == 1:  # one role: all of them
            return [math.fsum(p.tolist()) if k else 0.0 for k in turns]
        return [math.fsum(p[roles == code].tolist()) if k else 0.0 for code, k in enumerate(turns)]

    def _again(self, now: int, lag: int, numbers: np.ndarray, p: np.ndarray, hit: np.ndarray) -> tuple:
        """(turns shown needed, their later cites, the later cites expected at the first cites' rate),
        over ``numbers`` (turns with a prior past their lag window), their priors ``p`` and ``hit``
        (shown needed)."""
        first = self.settled_at[numbers]
        start = numbers + lag  # a turn's lag window ends at step number + lag
        waited = np.where(hit, first, now) - start
        before = math.fsum((p * np.maximum(waited, 0)).tolist())
        needed = int(hit.sum())
        if not needed or before <= 0.0:
            return needed, int(self.again[numbers[hit]].sum()), 0.0
        since = math.fsum((p[hit] * (now - first[hit])).tolist())
        return needed, int(self.again[numbers[hit]].sum()), since * (needed / before)
