"""Tables of ``base ** k`` filled by Python's own ``**``: what the evidence's folds and the
``measured`` policy index instead of raising a float to a power per turn, bit for bit the scalar
formula."""

from __future__ import annotations

import numpy as np

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
