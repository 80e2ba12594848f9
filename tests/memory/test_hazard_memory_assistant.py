"""The time hazard measured in memories for a person's chat with an assistant
(``hazard_memory_assistant``): a quiet turn's odds fall by ``exp(-rate)`` each time as many steps
pass as the memory holds turns, so a small memory favours the recent more than a large one."""

import math

import pytest

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings


def _scores(policy: Measured, turns: int, role_of=lambda n: "user" if n % 2 else "assistant") -> dict[int, float]:
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=0), policy)
    for n in range(1, turns + 1):
        layer.add_turn(role_of(n), 20, prior=0.2)
    return {t.number: s for t, s in layer.ranking()}


def _odds(s: float) -> float:
    return s / (1.0 - s)  # equal sizes: importance is the posterior itself


@pytest.mark.parametrize("turns", [20, 80])
def test_odds_fall_by_the_rate_per_memory_of_quiet_steps(turns):
    s = _scores(Measured(hazard_assistant=0.0, hazard_memory_assistant=0.5), turns)
    # turn 1 has waited turns - 1 steps more than the newest one, in a memory of ``turns`` candidates
    ratio = _odds(s[1]) / _odds(s[turns])
    assert ratio == pytest.approx(math.exp(-0.5 * (turns - 1) / turns))


def test_off_it_changes_nothing_and_between_people_it_is_not_read():
    flat = _scores(Measured(hazard_assistant=0.0, hazard_memory_assistant=0.0), 30)
    assert len(set(flat.values())) == 1
    people = dict(hazard=0.0, hazard_memory=0.0, hazard_assistant=0.0)
    a = _scores(Measured(hazard_memory_assistant=0.0, **people), 30, role_of=lambda n: "user")
    b = _scores(Measured(hazard_memory_assistant=5.0, **people), 30, role_of=lambda n: "user")
    assert a == b
