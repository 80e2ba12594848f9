"""Measured keeps its contract: with uniform weights, no decay and lag 0 it ranks like accumulate."""

import random

from memory.layer import MemoryLayer
from memory.policies import make_policy
from memory.types import MemorySettings
from tests.memory.rebuild import rebuilt

NEUTRAL = dict(decay=1.0, prior_decay=1.0, background=0.0, size_power=0.0, density=0.0)


def test_measured_neutral_ranks_like_accumulate():
    rng = random.Random(3)
    for _ in range(20):
        layers = [
            MemoryLayer(MemorySettings(budget=10**9, lag=0), make_policy(p, **kw))
            for p, kw in (("accumulate", {}), ("measured", NEUTRAL))
        ]
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


def test_cached_fold_equals_a_fresh_rebuild_bit_for_bit():
    """The settled-evidence fold is cached per turn; a rebuilt layer (no cache) must agree exactly."""
    rng = random.Random(11)
    lay = MemoryLayer(MemorySettings(budget=400, lag=3), make_policy("measured"))
    for step in range(600):
        lay.add_turn("user", rng.randint(5, 40))
        active = sorted(lay.snapshot().active)
        ans = lay.step
        lay.cite(rng.sample(active, min(3, len(active))), answer_turn=ans)
        if rng.random() < 0.3:
            lay.feedback(rng.randint(1, lay.step), rng.choice([-1.0, 1.0]))
        lay.enforce_budget()
        if step % 50 == 49:
            copy = rebuilt(lay)
            assert copy.importance() == lay.importance()
