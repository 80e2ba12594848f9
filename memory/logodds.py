"""Log-odds arithmetic of the ``measured`` posterior: a prior read as log-odds, evidence added, read back.

Plain ``math`` on Python floats, one value at a time, so a live layer and one rebuilt from the
database compute the same bits (numpy's vectorised ``exp``/``log`` may round differently).
``sigmoids`` takes an array, but each ``exp`` is still Python's ``math.exp``; numpy only negates,
adds, divides and compares, which are exact IEEE operations.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

TRUST_FLOOR = 1e-4  # the most a lag window's wrong answers divide a prior's odds by (evidence can undo it)
LOGIT_EDGE = 1e-6  # priors are read in [1e-6, 1 - 1e-6]: 0 and 1 would be beliefs no evidence moves


@lru_cache(maxsize=1 << 16)  # taken at arrival (``Arrivals.logit``); rebuilds and replays read the same priors again
def logit(p: float) -> float:
    """log(p / (1 - p)), with ``p`` clipped to [LOGIT_EDGE, 1 - LOGIT_EDGE]."""
    p = LOGIT_EDGE if p < LOGIT_EDGE else 1.0 - LOGIT_EDGE if p > 1.0 - LOGIT_EDGE else p
    return math.log(p / (1.0 - p))


def sigmoid(z: float) -> float:
    """1 / (1 + exp(-z)), in the form that cannot overflow for either sign of ``z``."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def sigmoids(z: np.ndarray) -> np.ndarray:
    """``sigmoid`` of every element of ``z``, bit for bit.

    ``sigmoid`` takes ``exp(-z)`` for ``z >= 0`` and ``exp(z)`` below: both are ``exp(-|z|)``
    (negating and ``abs`` are exact), so one ``math.exp`` per element, mapped without a Python
    call per element, then ``1 / (1 + e)`` or ``e / (1 + e)`` as ``sigmoid`` divides.
    """
    e = np.fromiter(map(math.exp, (-np.abs(z)).tolist()), np.float64, len(z))
    one = 1.0 + e
    return np.where(z >= 0.0, 1.0 / one, e / one)
