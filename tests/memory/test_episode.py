"""A turn's arrival episode is one piece of evidence, weighed by how much of its answer the turn was.

* a statement confirmed once by an answer about it (citing it alone) outranks chatter cited three
  times beside other turns soon after it was said, long after both went quiet; the old measure
  (every cite counted, whatever its answer) ranked them the other way;
* the cites of a burst count once: cites before the episode's last add nothing;
* an answer's cites share it, however the retrieval step logged them, live or rebuilt;
* consistent evidence still outweighs the prior, and a turn with no evidence keeps its prior.
"""

import random

import pytest

from memory.layer import MemoryLayer
from memory.policies import Measured
from memory.types import MemorySettings
from tests.memory.rebuild import rebuilt

OLD = {"burst": 0.0, "focus": 0.0}  # each cite after the lag window counted, the verdict whatever its answer


def _layer(lag: int = 6, **knobs) -> MemoryLayer:
    return MemoryLayer(MemorySettings(budget=1_000_000, lag=lag), Measured(**knobs))


def _scores(layer: MemoryLayer) -> dict[int, float]:
    return {t.number: s for t, s in layer.ranking()}


def _fact_and_chatter(quiet: int, **knobs) -> dict[int, float]:
    """Turn 1 a fact, turn 2 chatter, same prior and size, among filler of the same prior. The fact
    is confirmed 3 steps after it was said by an answer citing it alone; the chatter is cited 2, 5
    and 9 steps after it was said, each time with two filler turns. Then ``quiet`` steps of filler."""
    layer = _layer(**knobs)
    layer.add_turn("user", 20, prior=0.1)  # 1: the fact
    layer.add_turn("user", 20, prior=0.1)  # 2: chatter
    for step in range(3, 12 + quiet):
        layer.add_turn("user", 20, prior=0.1)
        if step == 4:
            layer.cite([1], answer_turn=-4)
        if step in (4, 7, 11):
            layer.cite([2, step - 1, step - 2], answer_turn=-step - 100)
    return _scores(layer)


def test_a_confirmed_fact_outranks_chatter_cited_three_times_after_a_long_silence():
    for quiet in (20, 60, 100):
        s = _fact_and_chatter(quiet)
        assert s[1] > s[2], quiet
    old = _fact_and_chatter(100, **OLD)
    assert old[1] < old[2]  # what the measure did before: the chatter's three cites kept it above the fact


def test_a_burst_of_cites_weighs_what_its_last_cite_does():
    def turn_one(steps: list[int], **knobs) -> float:
        layer = _layer(**knobs)
        for step in range(1, 40):
            layer.add_turn("user", 20, prior=0.2)
            if step in steps:
                layer.cite([1], answer_turn=-step)
        return _scores(layer)[1]

    # cited at steps 2, 3 (inside the lag window) and 9 (after it, within the burst): one episode
    assert turn_one([2, 3, 9]) == turn_one([9])
    assert turn_one([2, 3, 9], **OLD) > turn_one([9], **OLD)  # counted as a verdict and a settled cite
    # a cite after the episode (more than ``burst`` steps after its last) is new evidence
    assert turn_one([9, 30]) > turn_one([9])


def test_an_answer_counts_whole_for_a_turn_it_cited_alone_and_shared_among_several():
    layer = _layer()
    for _ in range(4):
        layer.add_turn("user", 20, prior=0.2)
    layer.cite([1], answer_turn=-1)  # turn 1: the answer was about it
    layer.cite([2, 3, 4], answer_turn=-2)  # turns 2-4: one answer leaned on all three
    for _ in range(30):
        layer.add_turn("user", 20, prior=0.2)
    s = _scores(layer)
    assert s[1] > max(s[2], s[3], s[4])  # turn 1 is the oldest: the time fade alone would rank it last
    flat = _layer(focus=0.0)
    for _ in range(4):
        flat.add_turn("user", 20, prior=0.2)
    flat.cite([1], answer_turn=-1)
    flat.cite([2, 3, 4], answer_turn=-2)
    for _ in range(30):
        flat.add_turn("user", 20, prior=0.2)
    f = _scores(flat)
    assert f[1] < f[2] < f[3] < f[4]  # without the shares, only the fade tells them apart (older: lower)


def test_an_answer_cited_in_two_calls_shares_like_one_cited_at_once_and_a_rebuilt_layer_agrees():
    def build(split: bool) -> MemoryLayer:
        layer = _layer()
        for step in range(1, 30):
            layer.add_turn("user", 20, prior=0.2)
            if step == 5:
                if split:  # the same answer's cites logged in two calls
                    layer.cite([1], answer_turn=-1)
                    layer.enforce_budget()
                    _scores(layer)  # a decision in between: turn 1 measured as the answer's only cite
                    layer.cite([2, 3], answer_turn=-1)
                else:
                    layer.cite([1, 2, 3], answer_turn=-1)
        return layer

    split, whole = build(True), build(False)
    assert _scores(split) == _scores(whole)
    again = rebuilt(
        split,
        policy=Measured(),
    )
    assert _scores(again) == _scores(split)


def test_consistent_evidence_still_outweighs_the_prior():
    layer = _layer()
    layer.add_turn("user", 20, prior=0.02)  # 1: the estimator thought it chatter
    layer.add_turn("user", 20, prior=0.6)  # 2: thought it a fact; never cited
    layer.add_turn("user", 20, prior=0.6)  # 3: thought it a fact; cited once, beside two others
    for step in range(4, 160):
        layer.add_turn("user", 20, prior=0.1)
        if step == 6:
            layer.cite([1], answer_turn=-6)  # confirmed by an answer about it
            layer.cite([3, 4, 5], answer_turn=-7)
        if step % 30 == 0:
            layer.cite([1], answer_turn=-step)  # and needed again and again, by answers that stood
    s = _scores(layer)
    assert s[1] > s[2] and s[1] > s[3]
    uncited = _layer()
    uncited.add_turn("user", 20, prior=0.02)
    uncited.add_turn("user", 20, prior=0.6)
    for _ in range(40):
        uncited.add_turn("user", 20, prior=0.1)
    u = _scores(uncited)
    assert u[2] > u[1]  # with no evidence, the prior decides


@pytest.mark.parametrize("seed", range(4))
def test_a_cached_fold_keeps_its_total_and_takes_the_new_share_and_a_rebuilt_layer_agrees_each_step(seed):
    # an answer citing one more turn changes only the arrival episode's strength of the turns it cited
    # before (``Evidence._reshared``): the live layer's caches must hold what a fresh fold computes
    rng = random.Random(seed)
    knobs = [{}, {"focus": 2.0, "burst": 3.0}, {"focus": 0.5, "burst": 40.0}, {"burst": 0.0}][seed]
    layer = _layer(lag=rng.choice([2, 6]), **knobs)
    for step in range(1, 160):
        layer.add_turn(rng.choice(["user", "assistant"]), rng.randint(5, 40), prior=rng.random())
        active = layer.active_numbers()
        for answer in (step, step - rng.randint(1, 12)):  # this answer, and one from a while back citing more
            layer.cite(rng.sample(active, min(len(active), rng.randint(1, 3))), answer_turn=answer)
        if rng.random() < 0.1:
            layer.feedback(step - rng.randint(0, 5), rng.choice([-1.0, -0.5, 1.0]))
        live = _scores(layer)  # measured now: folds cached and mirrored, then changed by the next cites
        assert _scores(rebuilt(layer, policy=Measured(**knobs))) == live, step
