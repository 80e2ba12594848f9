"""The need estimator: causal features, the model file, the prior in the layer, the policy and storage."""

import json
import math

import numpy as np
import pytest

from assistant import need as app_need
from memory.evidence import credit
from memory.layer import MemoryLayer
from memory.need import FEATURES, ArrivalContext, NeedModel, text_features
from memory.policies import Measured
from memory.types import MemorySettings
from tests.memory.rebuild import rebuilt

TURNS = [
    ("Hey! How have you been?", False),
    ("Great, I adopted a dog named Oscar last May in Boston.", False),
    ("What breed is he?", False),
    ("A beagle, 3 years old.", True),
    ("Nice!", False),
]


def _features(turns):
    ctx = ArrivalContext()
    return [ctx.features(text, np.ones(4) * (i + 1), new_session=new) for i, (text, new) in enumerate(turns)]


def test_features_are_causal_later_turns_change_nothing():
    full = _features(TURNS)
    for k in range(1, len(TURNS)):
        assert _features(TURNS[:k]) == full[:k]


def test_features_see_position_and_the_previous_turn():
    f = _features(TURNS)
    assert f[0]["session_index_0"] == 1.0 and f[1]["session_index_1"] == 1.0
    assert f[3]["session_index_0"] == 1.0  # a new session starts at turn 4
    assert f[3]["after_question"] == 1.0 and f[1]["after_question"] == 1.0 and f[2]["after_question"] == 0.0
    assert f[1]["number"] == 0.0 and f[3]["number"] == 1.0
    assert f[1]["date_words"] > 0 and f[1]["names"] > 0 and f[4]["names"] == 0
    assert set(f[0]) == set(FEATURES)


EXCHANGE = [
    ("user", "Hi, I'm planning a trip to Lisbon in May with my sister Ana.", True),
    ("assistant", "Lisbon in May is lovely: mild weather, few crowds, and the jacaranda trees in bloom.", False),
    ("user", "What should we eat there?", False),
    ("assistant", "Try pastel de nata, bacalhau and grilled sardines.", False),
    ("user", "Thanks! I also need a dentist next week.", True),
]


def _exchange():
    ctx = ArrivalContext()
    return [ctx.features(text, new_session=new, role=role) for role, text, new in EXCHANGE]


def test_features_see_the_role_and_the_place_in_the_exchange():
    f = _exchange()
    assert [x["assistant"] for x in f] == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert [x["prev_assistant"] for x in f] == [0.0, 0.0, 1.0, 0.0, 1.0]  # the previous turn, across a session too
    assert [x["user_opens_session"] for x in f] == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert f[2]["log_session_user_index"] == pytest.approx(math.log(2)) and f[4]["log_session_user_index"] == 0.0
    assert f[0]["log_words_vs_role"] == 0.0  # no earlier turn of its role
    # the second answer is compared with the first answer, not with the person's turns
    assert f[3]["log_words_vs_role"] == pytest.approx(f[3]["log_words"] - f[1]["log_words"])
    assert f[2]["log_words_vs_role"] == pytest.approx(f[2]["log_words"] - f[0]["log_words"])
    assert f[1]["log_prev_user_words"] == f[0]["log_words"] and f[4]["log_prev_user_words"] == f[2]["log_words"]
    assert [x["with_assistant"] for x in f] == [0.0, 1.0, 1.0, 1.0, 1.0]  # from the first answer on


def test_two_people_are_both_the_user_side():
    ctx = ArrivalContext()
    f = [ctx.features(text) for _, text, _ in EXCHANGE]
    assert all(x["assistant"] == 0.0 == x["prev_assistant"] == x["with_assistant"] for x in f)
    assert [x["user_opens_session"] for x in f] == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_the_shipped_model_ranks_what_the_person_says_above_the_same_from_the_assistant():
    said = "I moved to Boston in May 2022 with my sister Anna, and I started a new job as a nurse there."
    previous = [app_need.Previous("Where do you live now?", role="assistant")]
    user = app_need.prior_for(said, previous, role="user")
    assistant = app_need.prior_for(said, [app_need.Previous("Where do I live now?")], role="assistant")
    assert 0.0 < assistant < user < 1.0


def test_text_features_count_words_not_punctuation():
    assert text_features("one two three")["log_words"] == pytest.approx(math.log(4))
    assert text_features("")["log_words"] == 0.0


def _model(**coef):
    names = tuple(coef)
    return NeedModel(names, (0.0,) * len(names), (1.0,) * len(names), tuple(coef.values()), -1.0, version="t")


def test_model_is_a_logistic_regression_and_round_trips():
    m = _model(log_words=2.0, question=-1.0)
    f = {"log_words": 0.5, "question": 1.0}
    assert m.predict(f) == pytest.approx(1 / (1 + math.exp(-(-1.0 + 2.0 * 0.5 - 1.0))))
    again = NeedModel.from_dict(json.loads(json.dumps(m.as_dict())))
    assert again.predict(f) == m.predict(f)
    with pytest.raises(ValueError, match="not a lagmem need model"):
        NeedModel.from_dict({"format": "other"})
    with pytest.raises(ValueError, match="same length"):
        NeedModel.from_dict({**m.as_dict(), "coef": [1.0]})


def test_the_shipped_model_loads_and_ranks_a_fact_above_a_greeting():
    m = app_need.load_model()
    assert m.version and set(m.names) <= set(FEATURES)
    fact = app_need.prior_for(
        "I moved to Boston in May 2022 with my sister Anna, and I started a new job as a nurse there."
    )
    greeting = app_need.prior_for("Nice!", [app_need.Previous("I moved to Boston.")])
    assert 0.0 < greeting < fact < 1.0


def test_a_bad_model_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read the need model"):
        app_need.load_model(bad)


def test_layer_refuses_a_bad_prior_and_keeps_a_good_one():
    layer = MemoryLayer(MemorySettings(budget=100, lag=0))
    with pytest.raises(ValueError, match="prior"):
        layer.add_turn("user", 10, prior=float("nan"))
    with pytest.raises(ValueError, match="prior"):
        layer.add_turn("user", 10, prior=-0.1)
    t = layer.add_turn("user", 10, prior=0.3)
    assert t.prior == 0.3 and layer.step == 1


def _layer(policy, priors, tokens=20, budget=1000):
    layer = MemoryLayer(MemorySettings(budget=budget, lag=0), policy)
    for p in priors:
        layer.add_turn("user", tokens, prior=p)
    return layer


def test_measured_keeps_the_turn_the_estimator_expects_to_be_needed():
    priors = [0.5, 0.9, 0.1, 0.3]
    layer = _layer(Measured(hazard=0.0), priors, budget=60)
    assert [r.turn for r in layer.enforce_budget()] == [3]  # the lowest prior, not the oldest turn
    ranking = [t.number for t, _ in _layer(Measured(), priors).ranking()]
    assert ranking == [3, 4, 1, 2]


def test_turns_without_a_prior_keep_the_size_prior():
    """The learned branch never touches turns without a prior (old rows, synthetic traces)."""

    def scores(policy):
        layer = MemoryLayer(MemorySettings(budget=1000, lag=0), policy)
        for tokens in (10, 40, 25):
            layer.add_turn("user", tokens)
        layer.cite([2])
        return [(t.number, s) for t, s in layer.ranking()]

    assert scores(Measured(need=2.0, need_size_power=1.0, hazard=0.5, recalibrate=0.0)) == scores(Measured())


def test_rebuilt_layer_scores_priors_bit_for_bit():
    live = _layer(Measured(need=2.0, need_size_power=0.5), [0.2, None, 0.7, 0.4, 0.05])
    live.cite([2, 3], answer_turn=5)
    live.feedback(5, -0.5)
    again = rebuilt(
        live,
        policy=Measured(need=2.0, need_size_power=0.5),
    )
    assert [(t.number, s) for t, s in again.ranking()] == [(t.number, s) for t, s in live.ranking()]


def test_parts_sum_to_the_importance():
    layer = _layer(Measured(background=0.0), [0.2, 0.8, 0.4, 0.6])
    layer.cite([1, 2])
    ts = layer.turns()
    parts = layer.policy.parts(ts, layer.evidence, layer.step)
    scores = layer.policy.scores(ts, layer.evidence, layer.step)
    assert [p + e for p, e in parts] == pytest.approx(scores)
    assert parts[2][1] == 0.0 and parts[0][1] > 0.0  # uncited: all prior; cited: some evidence


def test_partial_credit():
    assert credit(None, 0.0) == 1.0 and credit(1.0, 0.0) == 1.0 and credit(0.0, 0.0) == 1.0
    assert credit(-1.0, 0.0) == 0.0 and credit(-1.0, 0.2) == 0.2
    assert credit(-0.5, 0.0) == 0.5 and credit(-0.75, 0.0) == 0.25


def test_a_stored_turn_keeps_its_prior_through_a_rebuild(store):
    conv = store.create("t", MemorySettings(budget=500, lag=1))
    with store.transaction(conv) as tx:
        a = tx.add_turn("user", "Hi!", 2)
        b = tx.add_turn("assistant", "My sister Anna moved to Boston in May 2022 for a job at the hospital.", 20)
    assert a.prior is not None and b.prior is not None
    text, previous = "My sister Anna moved to Boston in May 2022 for a job at the hospital.", [app_need.Previous("Hi!")]
    assert b.prior == pytest.approx(app_need.prior_for(text, previous, role="assistant"))
    assert b.prior != pytest.approx(app_need.prior_for(text, previous, role="user"))  # stored with its role
    from sqlalchemy.orm import Session

    from assistant.store import load_layer

    with Session(store.engine) as s:
        rebuilt = load_layer(s, store.conversation(conv))
    assert [t.prior for t in rebuilt.turns()] == [a.prior, b.prior]


def test_verdict_prior_drops_the_prior_of_a_turn_cited_only_by_wrong_answers():
    def ranking(vp):
        layer = MemoryLayer(MemorySettings(budget=1000, lag=3), Measured(verdict_prior=vp, confirm=0.0))
        layer.add_turn("user", 20)
        layer.cite([1], answer_turn=-1)
        layer.feedback(-1, -1.0)  # turn 1: cited in its lag window by a wrong answer
        layer.add_turn("user", 20)  # turn 2: never cited
        for _ in range(4):
            layer.add_turn("user", 20)
        return dict((t.number, s) for t, s in layer.ranking())

    assert ranking(1.0)[1] == 0.0 < ranking(1.0)[2]  # all its prior gone; the uncited turn keeps its own
    assert ranking(0.0)[1] > 0.0


def test_prior_for_sets_the_context_as_seeing_the_turns_one_by_one_would():
    from datetime import datetime, timedelta

    t0 = datetime(2026, 1, 1, 12, 0)
    gaps = [0, 1, 2, 120, 121, 122, 123]  # minutes: a new session starts at the fourth turn
    texts = [
        "Hi!",
        "How was Boston?",
        "Great, Anna showed me around in May.",
        "Back again?",
        "Yes, what did you cook?",
        "A 3-course dinner for 6 people.",
        "Nice!",
    ]
    vecs = [np.eye(7)[i] for i in range(7)]
    roles = ["user", "assistant", "user", "user", "assistant", "assistant", "user"]
    prev = [app_need.Previous(t, t0 + timedelta(minutes=g), v, r) for t, g, v, r in zip(texts, gaps, vecs, roles)]
    model = NeedModel(
        FEATURES,
        (0.0,) * len(FEATURES),
        (1.0,) * len(FEATURES),
        tuple(0.1 * (k + 1) for k in range(len(FEATURES))),
        -1.0,
    )
    for now_gap, role in ((124, "user"), (124, "assistant"), (400, "user")):  # same session, then after a gap
        ctx = ArrivalContext()
        for i, (t, v, r) in enumerate(zip(texts, vecs, roles)):
            ctx.features(t, v, new_session=i > 0 and gaps[i] - gaps[i - 1] > 30, role=r)
        f = ctx.features("So what now?", vecs[0], new_session=now_gap - gaps[-1] > 30, role=role)
        at = t0 + timedelta(minutes=now_gap)
        got = app_need.prior_for("So what now?", prev, vecs[0], at, model=model, role=role)
        assert got == model.predict(f, vecs[0])
        # a name said earlier is not new on either path (the fact features read the same window)
        named = ctx.features("Anna says hi, and Boston misses you.", vecs[1], role=role)
        both = prev + [app_need.Previous("So what now?", at, vecs[0], role)]
        got = app_need.prior_for("Anna says hi, and Boston misses you.", both, vecs[1], at, model=model, role=role)
        assert got == model.predict(named, vecs[1])
