"""How ``measured`` turns lag-window citations and feedback into a turn's expected need.

* the lag window's verdict is a belief: one answer judged wrong that leaned on a turn is evidence
  against it that right answers do not outweigh; a partly right answer weighs in between;
* the belief scales the prior too (``verdict_prior``), and a turn never cited keeps its prior;
* the verdict goes stale with the steps since the turn was last shown needed, so a turn cited
  again later by an answer that stood keeps it, and one cited again by a wrong answer does not;
* a wrong answer after the lag window counts against the turn too (``settled_verdict``).
"""

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings


def _layer(**knobs) -> MemoryLayer:
    return MemoryLayer(MemorySettings(budget=10_000, lag=3), Measured(**knobs))


def _scores(layer: MemoryLayer) -> dict[int, float]:
    return {t.number: s for t, s in layer.ranking()}


def test_one_wrong_answer_in_the_lag_window_outweighs_a_right_one():
    layer = _layer()
    for _ in range(3):
        layer.add_turn("user", 20)  # turns 1, 2, 3: equal size, arrive together
    layer.cite([1, 2, 3], answer_turn=-1)  # every one confirmed by an answer that stood
    layer.cite([1], answer_turn=-2)
    layer.feedback(-2, -1.0)  # turn 1 also leaned on by an answer judged wrong
    layer.cite([3], answer_turn=-3)
    layer.feedback(-3, -0.5)  # turn 3 by an answer half right
    layer.cite([2], answer_turn=-4)  # and turn 2 by one that stood: both cited alone once (equal strength)
    for _ in range(4):
        layer.add_turn("user", 20)
    s = _scores(layer)
    assert s[1] == 0.0  # no verdict and (verdict_prior 1) no prior: likely chatter
    assert s[2] > s[3] > s[1]  # the half-right answer halves the belief

    forgiving = _layer(verdict_prior=0.0)  # the prior untouched: only the verdict goes
    for _ in range(3):
        forgiving.add_turn("user", 20)
    forgiving.cite([1, 2], answer_turn=-1)
    forgiving.cite([1], answer_turn=-2)
    forgiving.feedback(-2, -1.0)
    for _ in range(4):
        forgiving.add_turn("user", 20)
    s = _scores(forgiving)
    assert 0.0 < s[1] < s[2]


def test_an_uncited_turn_keeps_its_prior_until_it_is_cited():
    layer = _layer()
    layer.add_turn("user", 20)  # turn 1: chatter, leaned on by a wrong answer
    layer.add_turn("user", 20)  # turn 2: no cite yet (its confirmation comes later)
    layer.cite([1], answer_turn=-1)
    layer.feedback(-1, -1.0)
    for _ in range(3):
        layer.add_turn("user", 20)
    s = _scores(layer)
    assert s[1] == 0.0 < s[2]


def _verdict(later: str) -> float:
    """Verdict part of turn 1 at step 80: confirmed in its lag window, then at step 40 cited again
    by an answer that stood (``right``), by one judged wrong (``wrong``) or not at all (``none``).
    It is the importance with the verdict minus the importance without it (the background rate is
    measured from settled evidence only, the same in both; turn 3's cites at steps 20-28 make it > 0).
    """
    out = []
    for confirm in (6.0, 0.0):
        layer = _layer(confirm=confirm, decay=1.0, prior=0.0, size_power=0.0, density=0.0)
        for _ in range(3):
            layer.add_turn("user", 20)
        layer.cite([1], answer_turn=-1)  # confirmed in its lag window
        for answer in range(-3, -8, -1):  # turn 3: settled evidence from five answers
            while layer.step < 2 * (7 - answer):
                layer.add_turn("user", 20)
            layer.cite([3], answer_turn=answer)
        while layer.step < 40:
            layer.add_turn("user", 20)
        if later != "none":
            layer.cite([1], answer_turn=-2)
            if later == "wrong":
                layer.feedback(-2, -1.0)
        while layer.step < 80:
            layer.add_turn("user", 20)
        out.append(_scores(layer)[1])
    return out[0] - out[1]


def test_a_later_cite_by_an_answer_that_stood_keeps_the_verdict_fresh():
    assert _verdict("right") > _verdict("none") > 0.0


def test_a_later_cite_by_a_wrong_answer_does_not_refresh_the_verdict():
    assert _verdict("wrong") == _verdict("none")


def _cited_late(**knobs) -> dict[int, float]:
    """Turns 1-3 with the same prior; after their arrival episode (lag window and burst) turn 1 is
    cited by an answer judged wrong, turn 2 by one that stood, turn 3 not at all. No time fade
    (``hazard_memory`` 0): turn 1 is older than turn 3, and the fade would tell them apart whatever
    the verdict."""
    layer = _layer(hazard_memory=0.0, **knobs)
    for _ in range(3):
        layer.add_turn("user", 20, prior=0.2)
    for _ in range(4 + int(layer.policy.burst)):
        layer.add_turn("user", 20, prior=0.2)
    layer.cite([1], answer_turn=-1)
    layer.feedback(-1, -1.0)
    layer.cite([2], answer_turn=-2)
    layer.add_turn("user", 20, prior=0.2)
    return _scores(layer)


def test_a_wrong_answer_after_the_lag_window_counts_against_the_turn():
    s = _cited_late()
    assert s[1] < 0.01 * s[3] and s[3] < s[2]  # the wrong answer takes the turn's prior away
    before = _cited_late(settled_verdict=0.0)  # a settled wrong cite used to add nothing
    assert 0.9 * before[3] < before[1] < before[2]
