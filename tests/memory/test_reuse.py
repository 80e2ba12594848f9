"""The conversation's measure of whether it comes back to a turn once that turn has been shown
needed (``Calibration.reuse``), and how ``measured`` uses it in a person's chat with an assistant: a
conversation that asks about each fact once lets a fact it has used go before one it has not asked
about yet; one that keeps returning to what it cited keeps it; a rebuilt layer measures the same."""

import math

import numpy as np
import pytest

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings

# nearby_spent_assistant 0: every turn here is beside a cited one (tests/memory/test_nearby.py covers that factor)
QUIET = dict(
    hazard_assistant=0.0,
    hazard_memory_assistant=0.0,
    citations_assistant=0.0,
    verdict_prior=0.0,
    nearby_spent_assistant=0.0,
)


def _chat(steps: int, again: bool, policy: Measured | None = None) -> MemoryLayer:
    """User turns (prior 0.3) each followed by an assistant turn (prior 0.01), all of 20 tokens. Every
    fourth user turn is cited 6 steps after it arrived; with ``again`` it is cited again 20 steps
    after that (each fact asked about twice), else never (each fact asked about once)."""
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=0), policy or Measured(**QUIET))
    for n in range(1, steps + 1):
        user = n % 2 == 1
        layer.add_turn("user" if user else "assistant", 20, prior=0.3 if user else 0.01)
        cites = [m for m in (n - 6, n - 26) if m > 0 and m % 8 == 1 and (m == n - 6 or again)]
        if cites:
            layer.cite(cites, answer_turn=n)
    return layer


def _cal(layer: MemoryLayer, prior: float = 1.0, strength: float = 1.0):
    numbers = np.array(layer.active_numbers(), dtype=np.int64)
    return layer.evidence.calibration(layer.step, 10.0, numbers, prior, strength)


def test_no_turn_shown_needed_leaves_the_reuse_at_its_prior():
    layer = _chat(4, again=False)
    assert _cal(layer, 0.2).needed == 0 and _cal(layer, 0.2).reuse == 0.2
    assert _cal(layer, 1.0).reuse == 1.0


def test_a_conversation_that_never_comes_back_measures_a_reuse_below_its_prior():
    cal = _cal(_chat(300, again=False), prior=1.0, strength=1.0)
    assert cal.needed > 30 and cal.again == 0
    assert cal.expected_again > 5.0  # cited turns waited long enough that some would have come back
    assert cal.reuse == pytest.approx(1.0 / (cal.expected_again + 1.0))


def test_a_conversation_that_comes_back_measures_a_reuse_above_a_low_prior():
    cal = _cal(_chat(300, again=True), prior=math.exp(-3.0), strength=1.0)
    assert cal.again > 30
    assert cal.reuse > 1.0  # its own evidence outweighs the kind's prior of exp(-3)
    assert _cal(_chat(300, again=True), prior=math.exp(-3.0), strength=0.0).reuse == pytest.approx(math.exp(-3.0))


def test_measured_lets_a_used_fact_go_first_only_where_facts_are_not_asked_again():
    def rank(again: bool) -> dict[int, float]:
        return {t.number: s for t, s in _chat(300, again, Measured(spent_assistant=1.5, **QUIET)).ranking()}

    once, twice = rank(False), rank(True)
    # 273: a user turn cited once (at 279); 275: a user turn never cited, same prior and size
    assert once[273] < once[275]
    assert twice[273] > twice[275]
    off = {t.number: s for t, s in _chat(300, False, Measured(recalibrate=0.0, **QUIET)).ranking()}
    assert off[273] == off[275]  # without the recalibration a cite with no evidence weight changes nothing


def test_between_people_the_reuse_is_the_fixed_prior():
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=0), Measured(spent=0.0))
    for n in range(1, 60):
        layer.add_turn("user", 20, prior=0.3)
        if n > 6:
            layer.cite([n - 6], answer_turn=n)
    prior, strength = layer.policy.reuse_prior(layer.evidence)
    assert (prior, strength) == (1.0, 0.0) and _cal(layer, prior, strength).reuse == 1.0


def test_a_rebuilt_layer_measures_the_same_reuse():
    layer = _chat(200, again=True, policy=Measured(spent_assistant=2.0, **QUIET))
    rebuilt = MemoryLayer.from_state(
        layer.settings, layer.turns(), layer.citations(), layer.feedback_values(), step=layer.step, policy=layer.policy
    )
    assert _cal(rebuilt, 0.3) == _cal(layer, 0.3)
    assert [(t.number, s) for t, s in rebuilt.ranking()] == [(t.number, s) for t, s in layer.ranking()]


def test_cites_at_the_same_step_are_one_need():
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=0), Measured(**QUIET))
    layer.add_turn("user", 20, prior=0.3)
    layer.add_turn("assistant", 20, prior=0.01)
    layer.cite([1], answer_turn=2)
    layer.cite([1], answer_turn=3)  # a second question at the same step
    assert _cal(layer).again == 0
    layer.add_turn("user", 20, prior=0.3)
    layer.cite([1], answer_turn=4)
    assert _cal(layer).again == 1


def test_a_confirmation_in_the_arrival_episode_is_not_a_turn_shown_needed():
    """At lag 4 (burst 10), a cite 6 steps after a turn (after its lag window, in its arrival
    episode: the conversation still on it) is its confirmation; one 30 steps after is a need."""
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=4), Measured(**QUIET))
    for n in range(1, 81):
        layer.add_turn("user" if n % 2 else "assistant", 20, prior=0.3 if n % 2 else 0.01)
        if n == 7:
            layer.cite([1], answer_turn=n)  # turn 1: confirmed, never needed
        if n == 9:
            layer.cite([3], answer_turn=n)  # turn 3: confirmed ...
        if n == 39:
            layer.cite([3], answer_turn=n)  # ... and needed later
    cal = _cal(layer, prior=0.5, strength=1.0)
    assert cal.needed == 1 and cal.again == 0
    shown = layer.evidence.column("settled_at", np.array([1, 3]))
    assert shown.tolist() == [0, 39]
    burstless = MemoryLayer(MemorySettings(budget=10**6, lag=4), Measured(burst=0.0, **QUIET))
    for n in range(1, 10):
        burstless.add_turn("user", 20, prior=0.3)
        if n == 7:
            burstless.cite([1], answer_turn=n)
    assert burstless.evidence.column("settled_at", np.array([1])).tolist() == [7]  # the episode is the lag window
