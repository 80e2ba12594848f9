"""The log-odds arithmetic read in bulk gives the bits the one-value-at-a-time functions give."""

import math
import random

import numpy as np

from memory.evidence import Evidence
from memory.logodds import logit, sigmoid, sigmoids

EDGES = [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 36.7, -36.7, 709.0, -709.0, 745.2, -745.2, 1e308, -1e308]


def bits(xs) -> list[int]:
    return np.asarray(xs, dtype=np.float64).view(np.int64).tolist()


def test_sigmoids_is_sigmoid_element_by_element_bit_for_bit():
    rng = random.Random(0)
    xs = EDGES + [math.inf, -math.inf]
    xs += [rng.uniform(-40.0, 40.0) for _ in range(20000)]
    xs += [rng.gauss(0.0, 1.0) * 10 ** rng.uniform(-20.0, 3.0) for _ in range(20000)]
    assert bits(sigmoids(np.array(xs))) == bits([sigmoid(x) for x in xs])
    assert len(sigmoids(np.zeros(0))) == 0


def test_the_stored_logit_follows_the_prior_even_when_it_is_set_again():
    # the posterior reads logit(prior) stored at arrival: a prior written again must not leave it stale
    ev = Evidence({}, {})
    ev.arrived(1, 0.2, "user")
    ev.arrived(2, None, "assistant")
    ev.arrived(3, 1.0, "user")  # clipped at the edge, as logit reads it
    ev.arrived(1, 0.7, "user")  # the same turn's prior set again
    ev.arrived(2, 0.05, "assistant")
    ev.arrived(3, None, "user")
    numbers = np.array([1, 2, 3, 500], dtype=np.int64)  # 500: never arrived (the table grows)
    assert bits(ev.column("logit", numbers)) == bits([logit(0.7), logit(0.05), 0.0, 0.0])
    assert logit(0.5) == 0.0  # what a turn without a prior reads (its importance takes the size prior)
