"""The turns beside a turn shown needed (``memory.nearby``) and the conversation's measure of whether
it comes back to them (``Calibration.nearby``), as ``measured`` uses it in a person's chat with an
assistant: where each question is about one place in the talk, the turns around a fact already used
give way to turns no question has touched; where the conversation keeps returning to a place they stay;
no cite leaves every prior as it was; between people it does not act; a rebuilt layer measures the same."""

import math

import numpy as np
import pytest

from memory.arrivals import Arrivals
from memory.layer import MemoryLayer
from memory.nearby import NEARBY
from memory.policies import Measured
from memory.types import MemorySettings
from tests.memory.rebuild import rebuilt

QUIET = dict(hazard_assistant=0.0, hazard_memory_assistant=0.0, citations_assistant=0.0, verdict_prior=0.0)


def _chat(steps: int, around: bool, policy: Measured | None = None) -> MemoryLayer:
    """User turns (prior 0.3) each followed by an assistant turn (prior 0.01), all of 20 tokens. Every
    32nd turn (a user turn, 1 mod 32) is cited 6 steps after it arrived; with ``around`` the user turns
    beside it (up to four turns either side) are cited 20 steps after that (the conversation comes back
    to the place), else the talk around a cited turn is never cited."""
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=0), policy or Measured(**QUIET))
    for n in range(1, steps + 1):
        user = n % 2 == 1
        layer.add_turn("user" if user else "assistant", 20, prior=0.3 if user else 0.01)
        cites = [m for m in (n - 6,) if m > 0 and m % 32 == 1]
        if around and n > 26 and (n - 26) % 32 == 1:
            cites += [m for m in (n - 30, n - 28, n - 24, n - 22) if m > 0]
        if cites:
            layer.cite(cites, answer_turn=n)
    return layer


def _cal(layer: MemoryLayer, prior: float, strength: float = 1.0):
    numbers = np.array(layer.active_numbers(), dtype=np.int64)
    return layer.evidence.calibration(layer.step, 10.0, numbers, 1.0, strength, prior)


def test_the_first_settled_cite_marks_the_turns_beside_it_that_arrived_before():
    table = Arrivals()
    for n in range(1, 30):
        table.arrived(n, 0.3, "user")
    table.cited(12, 15, lag=0)  # turn 12 shown needed at step 15
    marked = {n: int(table.nearby_at[n]) for n in range(1, 30) if table.nearby_at[n]}
    assert marked == {n: 15 for n in range(12 - NEARBY, 15) if n != 12}  # turns 15.. had not arrived
    table.cited(10, 20, lag=0)  # a later first cite does not move a mark already made
    assert table.nearby_at[11] == 15 and table.nearby_at[5] == 20 and table.nearby_at[10] == 15
    table.cited(12, 25, lag=0)  # a second cite of turn 12 marks nothing new
    assert table.nearby_at[16] == 0


def test_a_cite_inside_the_lag_window_marks_nothing():
    table = Arrivals()
    for n in range(1, 30):
        table.arrived(n, 0.3, "user")
    table.cited(12, 14, lag=4)  # inside turn 12's window (steps 12..15): provisional
    assert not table.nearby_at.any()
    table.cited(12, 17, lag=4)
    assert table.nearby_at[11] == 17


def test_no_cite_leaves_every_prior_as_it_was():
    on = {t.number: s for t, s in _chat(120, False, Measured(nearby_spent_assistant=2.0, **QUIET)).ranking()}
    off = {t.number: s for t, s in _chat(120, False, Measured(nearby_spent_assistant=0.0, **QUIET)).ranking()}
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=0), Measured(nearby_spent_assistant=2.0, **QUIET))
    for n in range(1, 40):
        layer.add_turn("user" if n % 2 else "assistant", 20, prior=0.3 if n % 2 else 0.01)
    assert _cal(layer, math.exp(-2.0)).beside == 0 and _cal(layer, math.exp(-2.0)).nearby == math.exp(-2.0)
    plain = {t.number: s for t, s in layer.ranking()}
    quiet = MemoryLayer.from_state(layer.settings, layer.turns(), step=layer.step, policy=Measured(**QUIET))
    assert plain == {t.number: s for t, s in quiet.ranking()}
    assert on.keys() == off.keys()


def test_a_conversation_that_never_comes_back_lets_the_talk_around_a_used_fact_go_first():
    layer = _chat(300, around=False, policy=Measured(nearby_spent_assistant=1.0, **QUIET))
    cal = _cal(layer, math.exp(-1.0))
    assert cal.beside > 20 and cal.back == 0 and cal.expected_back > 1.0
    assert cal.nearby == pytest.approx(math.exp(-1.0) / (cal.expected_back + 1.0))
    scores = {t.number: s for t, s in layer.ranking()}
    # 291: a user turn beside 289 (cited at 295); 281: a user turn no cite has come near, same prior and size
    assert scores[291] < scores[281]
    off = {t.number: s for t, s in _chat(300, False, Measured(recalibrate=0.0, **QUIET)).ranking()}
    assert off[291] == off[281]


def test_a_conversation_that_comes_back_to_the_place_keeps_the_talk_around_it():
    cal = _cal(_chat(300, around=True), math.exp(-1.0))
    assert cal.back > 10
    assert cal.nearby > 1.0  # its own evidence outweighs the kind's prior of exp(-1)
    assert _cal(_chat(300, around=True), math.exp(-1.0), strength=0.0).nearby == pytest.approx(math.exp(-1.0))
    scores = {t.number: s for t, s in _chat(300, True, Measured(nearby_spent_assistant=1.0, **QUIET)).ranking()}
    assert scores[291] > scores[281]


def test_between_people_it_does_not_act():
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=0), Measured())
    for n in range(1, 60):
        layer.add_turn("user", 20, prior=0.3)
        if n > 6 and n % 8 == 0:
            layer.cite([n - 6], answer_turn=n)
    assert layer.policy.nearby_prior(layer.evidence)[0] == 1.0
    numbers = np.array(layer.active_numbers(), dtype=np.int64)
    assert layer.evidence.nearby(layer.step, numbers, *layer.policy.nearby_prior(layer.evidence)) == 1.0


def test_a_rebuilt_layer_measures_and_ranks_the_same():
    layer = _chat(200, around=True, policy=Measured(nearby_spent_assistant=2.0, **QUIET))
    again = rebuilt(layer, policy=layer.policy)
    assert _cal(again, math.exp(-2.0)) == _cal(layer, math.exp(-2.0))
    assert [(t.number, s) for t, s in again.ranking()] == [(t.number, s) for t, s in layer.ranking()]


def test_the_factor_a_decision_reads_is_the_calibrations():
    for around in (False, True):
        layer = _chat(150, around)
        numbers = np.array(layer.active_numbers(), dtype=np.int64)
        for prior, strength in [(math.exp(-1.0), 1.0), (0.2, 3.0), (math.exp(-2.0), 0.0)]:
            cal = layer.evidence.calibration(layer.step, 10.0, numbers, 1.0, strength, prior)
            assert layer.evidence.nearby(layer.step, numbers, prior, strength) == cal.nearby
