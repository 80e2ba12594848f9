"""The factors a decision reads (``memory.factors``, through ``Evidence.factors``) are the
calibration's, bit for bit, all three at once, and the columns they come with are the turns' own."""

import random

import numpy as np
import pytest

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings


@pytest.mark.parametrize("seed", range(6))
def test_one_read_gives_the_calibrations_factors_and_the_turns_columns(seed):
    rng = random.Random(seed)
    roles = ["user"] if seed % 3 == 0 else ["user", "assistant", "system"]
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=rng.choice([0, 2, 8])), Measured())
    evidence = layer.evidence
    for n in range(1, 300):
        prior = None if rng.random() < 0.1 else rng.choice([0.0, 1e-300, rng.random()])
        layer.add_turn(rng.choice(roles), 20, prior=prior)
        layer.cite(rng.sample(range(1, n + 1), min(n, rng.randint(0, 3))), answer_turn=n)
        if n % 7:
            continue
        # any turns, in any order, some inside their lag window (a view of one page, a decision's candidates)
        numbers = np.array(rng.sample(range(1, n + 1), rng.randint(0, n)), dtype=np.int64)
        for reuse, nearby in [((1.0, 0.0), (1.0, 0.0)), ((0.2, 1.0), (0.4, 1.0)), ((3.0, 0.5), (0.3, 2.0))]:
            cal = evidence.calibration(n, 10.0, numbers, *reuse)
            # the calibration weighs the nearby prior by the reuse strength: asked once more for it
            beside = evidence.calibration(n, 10.0, numbers, 1.0, nearby[1], nearby[0])
            out = evidence.factors(n, 10.0, numbers, reuse, nearby)
            assert (out.factor, out.reuse, out.nearby) == (cal.factor, cal.reuse, beside.nearby)
            if out.role is not None:
                assert (out.role == evidence.column("role", numbers)).all()
                shown = evidence.column("settled_at", numbers) > 0
                assert (out.shown == shown).all()
            if out.beside is not None:
                assert (out.beside == ((evidence.column("nearby_at", numbers) > 0) & ~shown)).all()
