"""The conversation's own calibration of the need prior (``Evidence.calibration``) and how
``measured`` uses it: no evidence leaves every prior as it was; a conversation that keeps coming back
to one role's turns and never to the other's moves their priors apart, whatever the estimator said;
a rebuilt layer calibrates exactly as the live one."""

import numpy as np
import pytest

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings
from tests.memory.random_log import random_log
from tests.memory.rebuild import rebuilt


def _chat(steps: int, cite_user: bool, lag: int = 2, policy: Measured | None = None) -> MemoryLayer:
    """Alternating user (prior 0.1) and assistant (prior 0.4) turns of equal size; every fourth step
    an answer cites the user turn from 14 steps back (``cite_user``: after its arrival episode, the lag
    window and ``burst`` 10 steps), else nothing."""
    layer = MemoryLayer(MemorySettings(budget=10**6, lag=lag), policy or Measured())
    for n in range(1, steps + 1):
        user = n % 2 == 1
        layer.add_turn("user" if user else "assistant", 20, prior=0.1 if user else 0.4)
        if cite_user and n % 4 == 0 and n > 14:
            layer.cite([n - 14 if (n - 14) % 2 else n - 15], answer_turn=n)
    return layer


def _cal(layer, strength):
    return layer.evidence.calibration(layer.step, strength, np.array(layer.active_numbers(), dtype=np.int64))


def test_no_evidence_and_one_role_leave_the_priors_as_they_were():
    quiet = _chat(64, cite_user=False)
    assert _cal(quiet, 10.0).factor == (1.0, 1.0, 1.0)
    people = MemoryLayer(MemorySettings(budget=10**6, lag=0), Measured())
    for n in range(1, 65):
        people.add_turn("user", 20, prior=0.3)
        people.cite([n], answer_turn=n)
    cal = _cal(people, 10.0)
    assert cal.factor[0] == 1.0 and cal.turns[0] == 64 and cal.cited[0] > 0


def test_a_conversation_that_comes_back_to_user_turns_raises_their_prior():
    layer = _chat(200, cite_user=True)
    cal = _cal(layer, 10.0)
    user, assistant = cal.factor[0], cal.factor[1]
    assert user > 1.0 > assistant
    assert cal.start == 200 and cal.cited[1] == 0 and cal.cited[0] > 20
    # an uncited user turn now outranks an uncited assistant turn of the same age, whose prior was 4x higher
    scores = {t.number: s for t, s in layer.ranking()}
    old = dict(need=1.0, hazard=0.0, hazard_assistant=0.0)
    plain = {t.number: s for t, s in _chat(200, True, policy=Measured(recalibrate=0.0, **old)).ranking()}
    tuned = {t.number: s for t, s in _chat(200, True, policy=Measured(**old)).ranking()}
    assert plain[197] < plain[198] and tuned[197] > tuned[198]  # 197: user, never cited; 198: assistant
    assert scores  # every candidate scored


def test_a_rebuild_calibrates_as_the_live_layer():
    layer = _chat(150, cite_user=True)
    before = _cal(layer, 10.0)
    assert before.start == 150
    again = rebuilt(layer)
    assert _cal(again, 10.0) == before
    assert [(t.number, s) for t, s in again.ranking()] == [(t.number, s) for t, s in layer.ranking()]


@pytest.mark.parametrize("strength", [0.01, 1e6])
def test_the_strength_at_both_ends(strength):
    layer = _chat(200, cite_user=True)
    f = _cal(layer, strength).factor
    if strength == 1e6:
        assert f[0] == pytest.approx(1.0, abs=1e-3) and f[1] == pytest.approx(1.0, abs=1e-3)
    else:
        assert f[0] > 2.0 and f[1] < 0.01


@pytest.mark.parametrize("seed", range(6))
def test_the_odds_a_decision_reads_are_the_calibrations_factors_and_reuse(seed):
    # ``Evidence.odds`` skips the sums neither answer needs; what it returns is ``calibration``'s, bit for bit
    for layer, n, numbers in random_log(seed):
        for reuse_prior, reuse_strength in [(1.0, 0.0), (0.2, 1.0), (3.0, 0.5)]:
            cal = layer.evidence.calibration(n, 10.0, numbers, reuse_prior, reuse_strength)
            assert layer.evidence.odds(n, 10.0, numbers, reuse_prior, reuse_strength) == (cal.factor, cal.reuse)
