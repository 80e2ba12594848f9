"""MemoryLayer behaviour, one rule at a time (the property tests are in test_contract.py)."""

import pytest

from memory.layer import MemoryLayer
from memory.policies import Accumulate, Measured, make_policy
from memory.types import MemorySettings, PinRefused, UnknownTurn
from tests.memory.rebuild import rebuilt


def layer(budget=100, lag=0, policy="measured", **kw):
    return MemoryLayer(MemorySettings(budget=budget, lag=lag, policy=policy, **kw))


def fill(lay, sizes):
    for size in sizes:
        lay.add_turn("user", size)


def test_under_budget_nothing_is_evicted():
    lay = layer(budget=100)
    fill(lay, [30, 30, 30])
    assert lay.enforce_budget() == []
    assert lay.snapshot().active == (1, 2, 3)


def test_turn_n_arrives_at_step_n():
    lay = layer()
    fill(lay, [1, 1, 1])
    assert [t.arrived for t in lay.turns()] == [1, 2, 3]
    with pytest.raises(ValueError, match="arrive at step"):
        lay.add_turn("user", 1, number=9)


def test_lowest_importance_goes_first_and_ties_go_to_the_older_turn():
    lay = layer(budget=50, lag=0, policy="accumulate")
    fill(lay, [20, 20, 20])
    lay.cite([1])
    records = lay.enforce_budget()
    # turns 2 and 3 both have no citations: the older (2) goes first; turn 1 was cited.
    assert [r.turn for r in records] == [2]
    assert records[0].runners_up == ((3, 0.0), (1, 1.0))
    assert records[0].tokens_before == 60 and records[0].tokens_after == 40


def test_protected_turns_are_not_candidates_until_the_lag_passes():
    lay = layer(budget=25, lag=2)
    fill(lay, [10, 10])
    lay.add_turn("user", 10)  # step 3: turns 2 (age 1) and 3 (age 0) are protected
    assert [t.number for t in lay.candidates()] == [1]
    assert [r.turn for r in lay.enforce_budget()] == [1]
    assert lay.lag_left(lay.turn(3)) == 2
    assert lay.lag_left(lay.turn(2)) == 1


def test_pinned_and_protected_over_budget_is_reported_not_hidden():
    lay = layer(budget=20, lag=5, pin_share=1.0)
    fill(lay, [15])
    lay.pin(1)
    fill(lay, [15])
    assert lay.enforce_budget() == []
    snap = lay.snapshot()
    assert snap.used_tokens == 30 and snap.forced_over_budget
    assert snap.pinned == (1,) and snap.protected == (1, 2)  # turn 1 is pinned and still in its lag


def test_pin_past_the_cap_is_refused_with_a_reason():
    lay = layer(budget=100, pin_share=0.3)
    fill(lay, [20, 20])
    lay.pin(1)
    with pytest.raises(PinRefused, match=r"pin cap of 30 tokens \(30% of the 100-token budget\)"):
        lay.pin(2)
    assert lay.snapshot().pinned == (1,)


def test_restore_brings_a_turn_back_protected_again():
    lay = layer(budget=30, lag=1)
    fill(lay, [10, 10, 10])
    lay.add_turn("user", 10)
    assert [r.turn for r in lay.enforce_budget()] == [1]
    fill(lay, [1])
    records = lay.restore(1)
    t = lay.turn(1)
    assert t.active and t.protected_since == lay.step and lay.is_protected(t)
    assert 1 not in [r.turn for r in records]
    assert lay.restore(1) == []  # restoring an active turn changes nothing


def test_pinning_an_evicted_turn_restores_it():
    lay = layer(budget=20, lag=0, pin_share=1.0)
    fill(lay, [10, 10, 10])
    lay.enforce_budget()
    assert not lay.turn(1).active
    lay.pin(1)
    assert lay.turn(1).active and lay.turn(1).pinned
    assert lay.used_tokens <= 20


def test_low_watermark_evicts_down_to_a_fraction_of_the_budget():
    lay = layer(budget=100, low_watermark=0.5)
    fill(lay, [30, 30, 30, 30])
    lay.enforce_budget()
    assert lay.used_tokens <= 50


def test_unknown_turns_are_clear_errors():
    lay = layer()
    with pytest.raises(UnknownTurn):
        lay.pin(3)


def test_cites_of_turns_not_offered_or_not_in_memory_are_dropped_and_counted():
    lay = layer(budget=20)
    fill(lay, [10, 10, 10])
    lay.enforce_budget()  # turn 1 leaves memory
    out = lay.cite([1, 2, 3, 3, 99], offered=[2])
    assert [c.turn for c in out.recorded] == [2]
    assert out.dropped == 3  # 1 (evicted), 3 (not offered), 99 (no such turn); the repeat is collapsed


def test_negative_feedback_removes_the_weight_of_that_answer_s_citations():
    lay = layer(
        budget=1000,
        policy="measured",
        policy_params={
            "decay": 1.0,
            "prior": 0.0,
            "background": 0.0,
            "density": 0.0,
            "citations": 1.0,
            "citations_assistant": 1.0,
        },
    )
    fill(lay, [1, 1, 1])
    lay.cite([1], answer_turn=3)
    lay.cite([2], answer_turn=3)
    lay.add_turn("assistant", 1)
    lay.cite([2], answer_turn=4)
    before = lay.importance([1, 2])
    lay.feedback(4, -1)
    after = lay.importance([1, 2])
    assert before == {1: 1.0, 2: 2.0}
    assert after == {1: 1.0, 2: 1.0}


def test_decay_makes_old_evidence_count_less():
    lay = layer(budget=1000, policy_params={"decay": 0.5})
    fill(lay, [1, 1])
    lay.cite([1])
    fill(lay, [1])
    lay.cite([2])
    imp = lay.importance([1, 2])
    assert imp[2] > imp[1]


def test_accumulate_has_no_provisional_buffer():
    assert layer(lag=8, policy="accumulate").lag == 0
    assert layer(lag=8, policy="measured").lag == 8


def test_unknown_policy_and_bad_settings_are_clear_errors():
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        make_policy("nope")
    with pytest.raises(ValueError, match="budget must be a positive"):
        MemorySettings(budget=0)


def test_rebuilt_layer_decides_like_the_live_one():
    lay = layer(budget=40, lag=1)
    for i in range(12):
        lay.add_turn("user", 7 + i % 3)
        lay.cite([max(1, i - 2), i // 2 + 1])
        lay.enforce_budget()
    copy = rebuilt(lay)
    assert copy.snapshot() == lay.snapshot()
    for lay_ in (lay, copy):
        lay_.add_turn("assistant", 9)
    assert copy.enforce_budget() == lay.enforce_budget()


def test_after_restores_a_rebuilt_layer_scores_bit_for_bit_like_the_live_one():
    """A restored turn goes to the end of the live layer's memory; a rebuilt layer lists turns by
    number. The candidates' order must not change any importance, not even in the last bit."""
    import random

    restores = 0
    for seed in range(40):
        rng = random.Random(seed)
        lay = layer(budget=300, lag=2)
        for n in range(1, 80):
            lay.add_turn("user", rng.randint(5, 40))
            active = lay.snapshot().active
            lay.cite([(t, rng.uniform(0.1, 1.0)) for t in rng.sample(active, min(3, len(active)))])
            lay.enforce_budget()
            if n % 7 == 0 and lay.snapshot().evicted:
                lay.restore(rng.choice(lay.snapshot().evicted))
                restores += 1
        copy = rebuilt(lay)
        assert copy.importance() == lay.importance(), f"seed {seed}"
        assert [(t.number, s) for t, s in copy.ranking()] == [(t.number, s) for t, s in lay.ranking()]
    assert restores > 100


def test_measured_with_decay_one_uniform_weights_and_lag_zero_is_accumulate():
    """Uniform weights: every weighting knob of ``measured`` neutral (no size prior, no per-token
    density, no background rate), correctness 1, decay 1, lag 0."""
    import random

    neutral = dict(decay=1.0, prior_decay=1.0, size_power=0.0, density=0.0, background=0.0)

    rng = random.Random(7)
    for _ in range(50):
        m = MemoryLayer(MemorySettings(budget=60, lag=0), policy=Measured(**neutral))
        a = MemoryLayer(MemorySettings(budget=60, lag=0), policy=Accumulate())
        for step in range(40):
            size = rng.randint(1, 15)
            cites = rng.sample(range(1, step + 2), k=min(step + 1, rng.randint(0, 3)))
            for lay in (m, a):
                lay.add_turn("user", size)
                lay.cite(cites)
            assert [t.number for t, _ in m.ranking()] == [t.number for t, _ in a.ranking()]
            rm, ra = m.enforce_budget(), a.enforce_budget()
            assert [r.turn for r in rm] == [r.turn for r in ra]


def test_each_record_names_its_cause_and_the_reason_says_it_in_the_old_words():
    lay = layer(budget=20, pin_share=1.0, policy="fifo")
    fill(lay, [10, 10])
    lay.add_turn("user", 10)
    (r,) = lay.enforce_budget("arrival", 3)
    assert (r.turn, r.cause, r.cause_turn, r.reason) == (1, "arrival", 3, "over budget after turn 3 arrived")
    (r,) = lay.restore(1, cause="auto_restore")  # the second chance reads as a restore
    assert (r.turn, r.cause, r.cause_turn, r.reason) == (2, "auto_restore", 1, "over budget after restore of turn 1")
    (r,) = lay.pin(2)
    assert (r.turn, r.cause, r.cause_turn, r.reason) == (
        1,
        "pin",
        2,
        "over budget after pin of turn 2",
    )  # tie: older first
    lay.add_turn("user", 10)
    (r,) = lay.enforce_budget()
    assert (r.cause, r.cause_turn, r.reason) == ("budget", None, "over budget at step 4")
    assert "cause" not in r.as_dict()  # the printed record is the one replays have always printed
    for bad in (("arrived", 3), ("arrival", None), ("settings", 2)):
        with pytest.raises(ValueError, match="cause"):
            lay.enforce_budget(*bad)
    with pytest.raises(ValueError, match="restore or auto_restore"):
        lay.restore(4, cause="pin")


def test_the_lag_is_fixed_when_the_layer_is_built_and_read_only_in_the_evidence():
    lay = layer(lag=3)
    assert lay.lag == lay.evidence.lag == 3
    with pytest.raises(AttributeError):
        lay.evidence.lag = 0  # nobody pushes a lag into the evidence


def test_active_numbers_are_the_turns_in_memory_in_the_order_they_entered():
    lay = layer(budget=20, policy="fifo")
    fill(lay, [10, 10, 10])
    lay.enforce_budget()  # turn 1 leaves
    lay.restore(1)  # and comes back last; turn 2 leaves
    assert lay.active_numbers() == [3, 1]
