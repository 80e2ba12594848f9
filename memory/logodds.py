"""Log-odds arithmetic of the ``measured`` posterior: a prior read as log-odds, evidence added, read back.

Plain ``math`` on Python floats, one value at a time, so a live layer and one rebuilt from the
database compute the same bits (numpy's vectorised ``exp``/``log`` may round differently).
"""

from __future__ import annotations

import math
from functools import lru_cache

TRUST_FLOOR = 1e-4  # the most a lag window's wrong answers divide a prior's odds by (evidence can undo it)
LOGIT_EDGE = 1e-6  # priors are read in [1e-6, 1 - 1e-6]: 0 and 1 would be beliefs no evidence moves


@lru_cache(maxsize=1 << 16)  # a turn's prior never changes: each decision reads the same few values again
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
