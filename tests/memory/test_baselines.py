"""The one-line rules a memory must not lose to: userfirst and largest, on hand-worked cases."""

import pytest

from memory.layer import MemoryLayer
from memory.policies import POLICIES, make_policy
from memory.types import MemorySettings
from tests.memory.rebuild import rebuilt


def evictions(policy: str, turns, budget: int, lag: int = 0, cites=()) -> list[int]:
    """Turns evicted, in order, when ``turns`` ((role, tokens), ...) arrive one by one."""
    layer = MemoryLayer(MemorySettings(budget=budget, lag=lag, policy=policy))
    out = []
    for role, tokens in turns:
        layer.add_turn(role, tokens)
        layer.cite(cites)
        out += [r.turn for r in layer.enforce_budget()]
    return out


def test_userfirst_evicts_every_answer_before_any_user_turn_oldest_first():
    turns = [("user", 10), ("assistant", 10), ("user", 10), ("assistant", 10), ("user", 10), ("user", 10)]
    # room for 3: turn 4 pushes out answer 2; turn 5 answer 4; turn 6 finds no answer left: user turn 1
    assert evictions("userfirst", turns, budget=30) == [2, 4, 1]


def test_userfirst_counts_a_system_note_as_not_the_users():
    assert evictions("userfirst", [("user", 10), ("system", 10), ("user", 10)], budget=20) == [2]


def test_userfirst_ignores_citations():
    turns = [("assistant", 10), ("assistant", 10), ("user", 10)]
    # the first answer is cited at every step; it still goes first (a rule reads no evidence)
    assert evictions("userfirst", turns, budget=20, cites=[1]) == [1]


def test_userfirst_counts_age_from_entering_memory_like_fifo():
    def at_budget(layer, budget):  # a settings change rebuilds the layer from its state, as the app does
        return rebuilt(layer, MemorySettings(budget=budget, lag=0, policy="userfirst"))

    layer = MemoryLayer(MemorySettings(budget=30, lag=0, policy="userfirst"))
    for role in ("assistant", "assistant", "user"):
        layer.add_turn(role, 10)
    layer = at_budget(layer, 20)
    assert [r.turn for r in layer.enforce_budget()] == [1]
    layer = at_budget(layer, 30)
    assert layer.restore(1) == []  # back in memory at step 3: now younger than answer 2
    layer = at_budget(layer, 20)
    assert [r.turn for r in layer.enforce_budget()] == [2]


def test_largest_evicts_the_largest_turn_and_the_older_of_equals():
    turns = [("user", 5), ("assistant", 30), ("user", 10), ("assistant", 30), ("user", 5), ("user", 20)]
    # turn 4 brings 75 > 50: turns 2 and 4 tie at 30, the older goes; turn 6 brings 70: turn 4 (30) goes
    assert evictions("largest", turns, budget=50) == [2, 4]


def test_largest_respects_the_lag():
    # turn 3 is the largest but protected (lag 2): the largest candidate, turn 1, goes instead
    assert evictions("largest", [("user", 20), ("user", 10), ("user", 40)], budget=60, lag=2) == [1]


@pytest.mark.parametrize("name", ["userfirst", "largest", "userfirst_largest", "userlru"])
def test_the_rules_are_registered_described_and_take_no_parameters(name):
    assert name in POLICIES and POLICIES[name].param_specs() == {}
    policy = make_policy(name)
    assert policy.name == name and policy.description and policy.params() == {}
    with pytest.raises(ValueError, match="has no parameter"):
        make_policy(name, decay=0.9)


def test_every_policy_declares_its_parameters_and_a_description():
    assert all(make_policy(n).description for n in POLICIES)
