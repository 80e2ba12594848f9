"""The oracle MILP is the exact optimum: checked against brute force on small random cases."""

import random

import pytest

from bench.oracle import OraclePolicy, brute_force, solve
from memory.layer import MemoryLayer
from memory.types import MemorySettings


def _case(rng: random.Random):
    n = rng.randint(3, 7)
    sizes = {i: rng.randint(1, 6) for i in range(1, n + 1)}
    needs = {}
    for i in range(1, n + 1):
        if rng.random() < 0.7:
            at = {rng.randint(i, n + 2): float(rng.randint(1, 2)) for _ in range(rng.randint(1, 3))}
            needs[i] = at
    return sizes, needs, rng.randint(3, 12)


@pytest.mark.parametrize("seed", range(40))
def test_milp_matches_brute_force(seed):
    sizes, needs, budget = _case(random.Random(seed))
    value, plan = solve(sizes, needs, budget)
    assert value == pytest.approx(brute_force(sizes, needs, budget))


@pytest.mark.parametrize("seed", range(10))
def test_plan_replays_through_the_layer(seed):
    """The layer, driven by the plan, keeps exactly what the plan scores."""
    sizes, needs, budget = _case(random.Random(seed))
    value, plan = solve(sizes, needs, budget)
    n = max(sizes)
    horizon = max([p for at in needs.values() for p in at] + [n])
    layer = MemoryLayer(MemorySettings(budget=budget, lag=0), OraclePolicy(plan))
    got = 0.0
    for step in range(1, horizon + 1):
        if step <= n:
            layer.add_turn("user", sizes[step])
            layer.enforce_budget()
            assert layer.used_tokens <= budget or sizes[step] > budget
        for turn, at in needs.items():
            if step in at and turn <= step and layer.turn(turn).active:
                got += at[step]
    assert got == pytest.approx(value)


def test_turn_larger_than_budget_is_never_kept():
    value, plan = solve({1: 10, 2: 2}, {1: {2: 1.0}, 2: {2: 1.0}}, 5)
    assert value == 1.0 and 1 not in plan
