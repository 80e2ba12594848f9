"""A memory layer fed a random log (roles, priors, cites), read at random turns every seventh step:
what the tests that compare a decision's fast reads with the calibration's step-by-step ones walk."""

import random

import numpy as np

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings


def random_log(seed: int):
    """Yield ``(layer, step, numbers)``: after every seventh step, any turns in any order, some inside
    their lag window (a view of one page, a decision's candidates)."""
    rng = random.Random(seed)
    roles = ["user"] if seed % 3 == 0 else ["user", "assistant", "system"]
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=rng.choice([0, 2, 8])), Measured())
    for n in range(1, 300):
        prior = None if rng.random() < 0.1 else rng.choice([0.0, 1e-300, rng.random()])
        layer.add_turn(rng.choice(roles), 20, prior=prior)
        layer.cite(rng.sample(range(1, n + 1), min(n, rng.randint(0, 3))), answer_turn=n)
        if n % 7:
            continue
        yield layer, n, np.array(rng.sample(range(1, n + 1), rng.randint(0, n)), dtype=np.int64)
