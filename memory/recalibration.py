"""The conversation's own recalibration of the need prior, as ``measured``'s posterior adds it.

Three questions the log answers about this conversation, each an odds factor on some turns' prior
(``memory.arrivals``): which roles' turns it comes back to more than their priors said (per role), whether
it comes back to a turn once that turn has been shown needed (``reuse``), and whether it comes back to
the turns beside one shown needed (``nearby``: ``memory.nearby``). Each is 1 with no evidence, so no
evidence leaves the prior as it was. Pure: a function of the log at decision time, computed for all
candidates at once with exact operations only (``math.log`` per factor, numpy adds), so the importances
are bit for bit those of a turn-by-turn loop. Beside them, ``confirmation``: whether it comes back to
the turns its lag windows confirmed (a factor on their evidence, not on the prior).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from memory.evidence import Evidence


@dataclass(frozen=True)
class Confirmation:
    """The turns a lag window confirmed, how many came back after it, how many the others' rate
    predicts, and the factor on the evidence this gives (``Measured.confirmation``)."""

    confirmed: int
    back: int
    expected: float
    gain: float


def recalibrated(
    z: np.ndarray,
    now: int,
    numbers: np.ndarray,
    evidence: Evidence,
    weight: float,
    strength: float,
    reuse_prior: tuple[float, float],
    nearby_prior: tuple[float, float],
) -> np.ndarray:
    """``z`` (the candidates' prior log-odds) plus ``weight`` (``Measured.recalibrate``) x the log of
    each factor that acts on the turn: its role's (shrunk by ``strength`` pseudo-turns), ``reuse`` once
    it has been shown needed, ``nearby`` while it has not but a turn beside it has; ``reuse_prior`` and
    ``nearby_prior`` are each (prior, strength) of the kind of conversation (``Measured.reuse_prior``,
    ``Measured.nearby_prior``; the class docstring says the formula)."""
    # the columns come with the factors where measuring them read them (else they are read here)
    factor, reuse, nearby, role, shown, beside = evidence.factors(now, strength, numbers, reuse_prior, nearby_prior)
    if any(f != 1.0 for f in factor):  # else it adds log(1) = 0.0 to each z
        logs = np.array([math.log(f) for f in factor])
        z = z + weight * logs[evidence.column("role", numbers) if role is None else role]
    if reuse != 1.0 or nearby != 1.0:
        if shown is None:
            shown = evidence.column("settled_at", numbers) > 0
        if reuse != 1.0:  # a turn already shown needed: does this conversation come back to it?
            z = z + np.where(shown, weight * math.log(reuse), 0.0)
        if nearby != 1.0:  # a turn beside one shown needed: does it come back to those?
            if beside is None:
                beside = (evidence.column("nearby_at", numbers) > 0) & ~shown
            z = z + np.where(beside, weight * math.log(nearby), 0.0)
    return z


def confirmation(confirmed: np.ndarray, back: np.ndarray, strength: float) -> Confirmation:
    """Does this conversation come back to the turns its lag windows confirmed? Among the
    candidates (past their lag window), those ``confirmed`` (their arrival episode's verdict > 0)
    that came ``back`` (a cite after the episode by an answer that stood: settled evidence > 0),
    against how many would have at the rate of the others, shrunk toward 1 by
    ``strength`` pseudo-turns (``Measured.confirmation_strength``); never below 1."""
    n = len(confirmed)
    n_a, e_a = int(np.count_nonzero(confirmed)), int(np.count_nonzero(confirmed & back))
    e_b = int(np.count_nonzero(back)) - e_a
    k = strength
    pooled = (e_a + e_b) / n if n else 0.0
    rate_b = (e_b + pooled) / (n - n_a + 1)  # one pseudo-turn at the pooled rate: never 0 once any came back
    expected = n_a * rate_b
    gain = (e_a + k) / (expected + k) if n_a and pooled > 0.0 and (expected + k) > 0.0 else 1.0
    gain = gain if gain > 1.0 else 1.0  # only ever more: confirmed turns may not have had time to come back
    return Confirmation(n_a, e_a, expected, gain)
