"""Measured keeps its contract: with uniform weights, no decay and lag 0 it ranks like accumulate."""

import random

from memory.layer import MemoryLayer
from memory.policies import make_policy
from memory.types import MemorySettings

NEUTRAL = dict(decay=1.0, prior_decay=1.0, background=0.0, size_power=0.0, density=0.0)


def test_measured_neutral_ranks_like_accumulate():
    rng = random.Random(3)
    for _ in range(20):
        layers = [MemoryLayer(MemorySettings(budget=10**9, lag=0), make_policy(p, **kw))
                  for p, kw in (("accumulate", {}), ("measured", NEUTRAL))]
        for _ in range(40):
            tokens = rng.randint(1, 50)
            cites = rng.sample(range(1, layers[0].step + 2), min(3, layers[0].step + 1))
            for layer in layers:
                layer.add_turn("user", tokens)
                layer.cite(cites)
        a, m = ([t.number for t, _ in layer.ranking()] for layer in layers)
        assert a == m


def test_measured_defaults_are_finite_and_prefer_cited():
    layer = MemoryLayer(MemorySettings(budget=100, lag=0), make_policy("measured"))
    for _ in range(5):
        layer.add_turn("user", 10)
    layer.cite([1], answer_turn=-1)
    layer.feedback(-1, 1.0)
    imp = layer.importance()
    assert imp[1] > imp[2] and all(v == v for v in imp.values())
