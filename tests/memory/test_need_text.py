"""The fact features of a turn (``memory/need_text.py``): names new to the conversation and "my/our
<word>" phrases, as the need estimator sees them at arrival."""

import math

from memory.need import FEATURES, ArrivalContext
from memory.need_text import FACT_FEATURES, fact_features


def test_a_name_counts_only_the_first_time_the_conversation_uses_it():
    ctx = ArrivalContext()
    first = ctx.features("I'm flying to see Maria in Lisbon next week.", role="user")
    again = ctx.features("Maria says Lisbon is warm. Ask Maria.", role="user")
    assert first["new_names"] == math.log1p(2)  # Maria, Lisbon
    assert again["new_names"] == 0.0  # both seen; "Maria" opening a sentence is not counted at all


def test_an_assistant_turn_scores_zero_but_its_names_are_seen():
    ctx = ArrivalContext()
    said = ctx.features("Sure, Lisbon has trams, and my favourite is the 28.", role="assistant")
    assert said["new_names"] == 0.0 == said["possessive"]
    assert ctx.features("I'd love to visit Lisbon.", role="user")["new_names"] == 0.0


def test_possessive_phrases_count_with_a_number_or_an_adjective_between():
    f = fact_features("My sister and our new car, with my 3 kids. Is it my turn? my ok", frozenset())
    assert f["possessive"] == math.log1p(4)  # my sister, our new car, my 3 kids, my turn ("my ok": too short)


def test_a_one_off_question_scores_on_neither():
    f = fact_features("Can you recommend some good brands of wallet cases?", frozenset())
    assert f == {k: 0.0 for k in FACT_FEATURES}


def test_the_fact_features_are_part_of_every_turns_vector():
    assert set(FACT_FEATURES) <= set(FEATURES)
    assert set(FACT_FEATURES) <= set(ArrivalContext().features("Hi", role="user"))
