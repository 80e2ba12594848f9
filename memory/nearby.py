"""The turns *beside* a turn shown needed: the neighbourhood its first settled cite marks, and the
counts from which the conversation measures whether it comes back to such turns
(``Arrivals.nearby``, used by ``measured`` through ``memory.recalibration``).

A person asking an assistant about each of their plans once is done with the talk around a fact once
the fact has been used; people who keep returning to a place in their talk are not. Both are functions
of the log alone (turn numbers, the first settled cite of each turn), so a rebuilt layer marks and
counts the same.
"""

from __future__ import annotations

import math

import numpy as np

# turns either side of a turn shown needed that its first settled cite marks as beside it; set
# in-sample on the LongMemEval dev conversations (3, 5 and 7 compared)
NEARBY = 5


def mark_beside(nearby_at: np.ndarray, turn: int, step: int) -> None:
    """``turn`` was first shown needed at ``step``: the turns within ``NEARBY`` of it that arrived
    before ``step`` (turn n arrives at step n) and are not marked yet are marked with ``step``
    (``nearby_at`` must hold turn + NEARBY)."""
    lo, hi = max(1, turn - NEARBY), min(turn + NEARBY, step - 1)
    if hi < lo:
        return
    part = nearby_at[lo : hi + 1]  # a view: marking it marks the table
    free = part == 0
    if lo <= turn <= hi:
        free[turn - lo] = False
    part[free] = step


def beside_counts(
    settled_at: np.ndarray, nearby_at: np.ndarray, now: int, lag: int, numbers: np.ndarray, p: np.ndarray
) -> tuple[int, int, float]:
    """(turns beside one shown needed, of them cited after it, the cites expected at the first cites'
    rate), over ``numbers`` (turns with a prior past their lag window, in turn order) and their priors
    ``p`` (``Arrivals.nearby`` says what each is). Counts are integers and sums ``math.fsum`` (exactly
    rounded), so the same in any view of the same turns."""
    first = settled_at[numbers]
    at = nearby_at[numbers]
    beside = (at > 0) & ((first == 0) | (first > at))
    start = numbers + lag  # a turn's lag window ends at step number + lag
    end = np.where(first > 0, first, now)
    before = math.fsum((p * np.maximum(np.where(beside, at, end) - start, 0)).tolist())
    firsts = int(np.count_nonzero((first > 0) & ~beside))
    count = int(np.count_nonzero(beside))
    back = int(np.count_nonzero(beside & (first > 0)))
    if not count or not firsts or before <= 0.0:
        return count, back, 0.0
    since = end[beside] - np.maximum(at[beside], start[beside])
    return count, back, math.fsum((p[beside] * since).tolist()) * (firsts / before)
