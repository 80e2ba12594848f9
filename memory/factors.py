"""The odds factors a decision reads (``Arrivals.factors``): per role, of a turn already shown needed
(``reuse``) and of a turn beside one (``nearby``), from one read of the turns' columns, with the
columns the posterior applies them by (``memory.recalibration.recalibrated``).

``Arrivals.calibration`` computes the same factors step by step, for the inspector, and is the
reference the tests compare these with, with ``==``. They agree bit for bit because nothing here
depends on the order of the turns: counts are integers and every sum of floats is ``math.fsum``
(exactly rounded) over the same terms, so the turns need not be sorted.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

ROLE_NAMES = ("user", "assistant", "other")  # the roles a turn's factor is measured by (``memory.arrivals``)
FACTOR_RANGE = (1e-12, 1e12)  # a factor outside it comes from overflowing priors: read as 1


class Factors(NamedTuple):
    """The factors, and for each of the numbers asked about (in their order): role code, shown needed
    (a settled cite), beside one shown needed while not shown needed itself (each None when unread)."""

    factor: tuple[float, ...]
    reuse: float
    nearby: float
    role: np.ndarray | None = None
    shown: np.ndarray | None = None
    beside: np.ndarray | None = None


def factors(
    table,
    now: int,
    strength: float,
    lag: int,
    numbers: np.ndarray,
    reuse: tuple[float, float],
    nearby: tuple[float, float],
) -> Factors:
    """``Arrivals.factors`` over the ``Arrivals`` ``table``; ``reuse`` and ``nearby`` are each (prior,
    strength).

    What none of the factors needs is not computed: the sums of priors when fewer than two roles have
    turns (every role factor is then 1), the reuse exposures when its strength is 0 or no turn has been
    shown needed (``reuse`` is then its prior), the beside counts when the nearby prior is 1 or its
    strength 0 (``nearby`` is then its prior)."""
    reuse_prior, reuse_strength = reuse
    nearby_prior, nearby_strength = nearby
    ones = (1.0,) * len(ROLE_NAMES)
    beside_wanted = nearby_prior != 1.0 and nearby_strength
    if not reuse_strength and not beside_wanted and table.roles & (table.roles - 1) == 0:
        # at most one role has ever had a prior: every factor is 1 whatever the turns, and neither
        # reuse nor nearby is measured
        return Factors(ones, reuse_prior, nearby_prior)
    try:
        first_all, role_all, p = table.settled_at[numbers], table.role[numbers], table.prior[numbers]
        at_all = table.nearby_at[numbers] if beside_wanted else None
    except IndexError:  # a number past every turn that arrived: its row is empty
        table.reserve(int(numbers.max()) + 1)
        return factors(table, now, strength, lag, numbers, reuse, nearby)
    shown_all = first_all > 0
    # the turns measured: those with a prior whose lag window has ended by ``now``
    keep = (numbers + lag <= now) & ~np.isnan(p)
    if keep.all():
        first, roles, hit, at = first_all, role_all, shown_all, at_all
    else:
        numbers, p, first, roles, hit = numbers[keep], p[keep], first_all[keep], role_all[keep], shown_all[keep]
        at = at_all[keep] if beside_wanted else None
    turns = np.bincount(roles, minlength=len(ROLE_NAMES)).tolist()
    cited = np.bincount(roles[hit], minlength=len(ROLE_NAMES)).tolist()
    factor = ones
    if sum(1 for k in turns if k) > 1:
        expected = [math.fsum(p[roles == code].tolist()) if k else 0.0 for code, k in enumerate(turns)]
        factor = role_factors(turns, cited, expected, strength)
    reuse_wanted = reuse_strength and sum(cited)  # some turn was shown needed
    if reuse_wanted or beside_wanted:
        start = numbers + lag  # a turn's lag window ends at step number + lag
        end = np.where(hit, first, now)  # its first settled cite, or now
    out_reuse = reuse_prior
    if reuse_wanted:
        needed, before = int(np.count_nonzero(hit)), math.fsum((p * np.maximum(end - start, 0)).tolist())
        again = int(table.again[numbers[hit]].sum())
        expected_again = 0.0
        if before > 0.0:
            expected_again = math.fsum((p[hit] * (now - first[hit])).tolist()) * (needed / before)
        out_reuse = ratio(again + reuse_strength * reuse_prior, expected_again + reuse_strength)
    out_nearby, beside_all = nearby_prior, None
    if beside_wanted:
        marked = at > 0
        beside = marked & (~hit | (first > at))
        count = int(np.count_nonzero(beside))
        if count:
            firsts = int(np.count_nonzero(hit & ~beside))
            back = int(np.count_nonzero(beside & hit))
            before = math.fsum((p * np.maximum(np.where(beside, at, end) - start, 0)).tolist())
            expected_back = 0.0
            if firsts and before > 0.0:
                since = end[beside] - np.maximum(at[beside], start[beside])
                expected_back = math.fsum((p[beside] * since).tolist()) * (firsts / before)
            out_nearby = ratio(back + nearby_strength * nearby_prior, expected_back + nearby_strength)
        beside_all = (marked if at is at_all else at_all > 0) & ~shown_all
    return Factors(factor, out_reuse, out_nearby, role_all, shown_all, beside_all)


def role_factors(turns: list[int], cited: list[int], expected: list[float], strength: float) -> tuple[float, ...]:
    """Each role's factor on its prior odds (``Arrivals.calibration``): 1 while nothing has been cited
    after its lag window, for a role without turns and where one role has them all."""
    n = len(turns)
    total = math.fsum(expected)
    rate = sum(cited) / total if total > 0.0 else 0.0
    mean = [expected[k] / turns[k] if turns[k] else 0.0 for k in range(n)]  # a pseudo-turn's prior
    return tuple(
        1.0
        if rate <= 0.0 or mean[k] <= 0.0 or turns[k] == sum(turns)
        else ratio(cited[k] + strength * mean[k] * rate, (expected[k] + strength * mean[k]) * rate)
        for k in range(n)
    )


def ratio(a: float, b: float) -> float:
    """``a / b``, or 1 where priors near the smallest float make it overflow or divide by zero (such
    a factor says nothing)."""
    if not (b > 0.0 and math.isfinite(a) and math.isfinite(b)):
        return 1.0
    f = a / b
    return f if FACTOR_RANGE[0] <= f <= FACTOR_RANGE[1] else 1.0
