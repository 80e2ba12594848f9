"""The arrival features that tell a person's statement of a lasting fact about themselves ("by the
way, I just got a smoker") from a one-off question ("can you recommend a sauce?")."""

import math

from memory.need import FEATURES, STATEMENT_FEATURES, ArrivalContext, text_features


def test_a_stated_fact_about_the_speaker_scores_on_every_statement_feature():
    f = text_features(
        "Can you suggest a BBQ sauce? By the way, I just got a smoker today and I've been using it for 3 weeks."
    )
    assert f["aside"] == 1.0
    assert f["recent"] == math.log1p(1)  # "just" ("today" is a date word, counted by date_words)
    assert f["did"] == math.log1p(2)  # "I just got", "I've been"
    assert f["statements"] == math.log1p(1)  # the second sentence; the first asks
    assert f["numbers"] == math.log1p(1)


def test_a_one_off_question_scores_on_none_of_them():
    f = text_features("Can you recommend some good brands of wallet cases? What do they cost?")
    assert {k: f[k] for k in STATEMENT_FEATURES} == {k: 0.0 for k in STATEMENT_FEATURES}


def test_money_and_dates_count_as_numbers_and_past_acts_in_the_plural_count():
    f = text_features("We bought two tops for $75 on 3/14, and we've finished the course.")
    assert f["numbers"] == math.log1p(2)
    assert f["did"] == math.log1p(2)
    assert f["aside"] == 0.0


def test_the_statement_features_are_part_of_every_turns_vector():
    assert set(STATEMENT_FEATURES) <= set(FEATURES)
    f = ArrivalContext().features("Oh, and I recently moved to Boston.", role="user")
    assert set(f) == set(FEATURES) - {"sim_prev", "sim_recent_question"} | {"sim_prev", "sim_recent_question"}
    assert f["aside"] == 1.0 and f["recent"] > 0 and f["did"] > 0 and f["statements"] > 0
