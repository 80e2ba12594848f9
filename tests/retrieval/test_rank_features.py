"""The hybrid ranker's features (``assistant.retrieval.rank_features``): each one says what its docstring
claims, on small hand-made memories (expected values worked out by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.retrieval import rank_features as rf


def col(x: np.ndarray, name: str) -> np.ndarray:
    return x[:, rf.NAMES.index(name)]


TEXTS = [
    "Evan: What did you paint last week?",
    "Sam: A sunrise over the lake.",
    "Evan: Lovely!",
    "Sam: I bought a new Prius yesterday, it broke down.",
    "Evan: Oh no",
]


def feats(message="When did Sam buy the Prius?", cos=(0.1, 0.2, 0.0, 0.6, 0.2), bm=(0, 0, 0, 4.0, 0)):
    return rf.features(message, np.array(cos, float), np.array(bm, float), TEXTS)


def test_shape_order_and_empty_memory():
    x = feats()
    assert x.shape == (5, len(rf.NAMES))
    assert rf.features("hi", np.zeros(0), np.zeros(0), []).shape == (0, len(rf.NAMES))


def test_lexical_is_scaled_by_the_best_and_passed_to_the_next_turn():
    x = feats()
    assert col(x, "lex").tolist() == [0, 0, 0, 1, 0]
    assert col(x, "prev_lex").tolist() == [0, 0, 0, 0, 1]  # the turn after the match
    assert col(x, "log_bm25")[3] == pytest.approx(np.log(5.0))
    assert not col(rf.features("x", np.zeros(2), np.zeros(2), ["a", "b"]), "lex").any()


def test_cosine_is_standardised_and_constant_cosine_gives_zero():
    z = col(feats(), "cos_z")
    assert z.mean() == pytest.approx(0.0) and z.std() == pytest.approx(1.0)
    assert int(np.argmax(z)) == 3
    flat = rf.features("q", np.full(3, 0.4), np.zeros(3), ["a", "b", "c"])
    assert not col(flat, "cos_z").any()


def test_neighbours_take_the_best_plain_mix_one_and_two_turns_away():
    x = feats()
    plain = 0.5 * np.array([0.1, 0.2, 0.0, 0.6, 0.2]) + 0.5 * np.array([0, 0, 0, 1, 0])
    assert col(x, "near1").tolist() == pytest.approx([plain[1], plain[0], plain[3], plain[4], plain[3]])
    assert col(x, "near2").tolist() == pytest.approx([plain[2], plain[3], plain[4], plain[1], plain[2]])


def test_questions_and_their_answers():
    x = feats()
    assert col(x, "asks").tolist() == [1, 0, 0, 0, 0]
    assert col(x, "prev_asks").tolist() == [0, 1, 0, 0, 0]


def test_speaker_named_in_the_message_and_the_other_speaker():
    x = feats()  # the message names Sam
    assert col(x, "speaker").tolist() == [0, 1, 0, 1, 0]
    assert col(x, "other_speaker").tolist() == [1, 0, 1, 0, 1]
    plain = rf.features("What happened?", np.zeros(2), np.zeros(2), ["I went home.", "Nice: really"])
    assert not col(plain, "speaker").any() and not col(plain, "other_speaker").any()


def test_when_questions_meet_turns_that_say_when():
    assert col(feats(), "when_time").tolist() == [1, 0, 0, 1, 0]  # "last week", "yesterday"
    assert not col(feats("What did Sam buy?"), "when_time").any()
    assert col(feats("How long has Sam had it?"), "when_time").any()


def test_length_recency_and_the_passage_around():
    x = feats()
    assert col(x, "length")[2] == pytest.approx(np.log(3))  # "Evan: Lovely!" is two words + 1
    assert col(x, "recency").tolist() == pytest.approx([0, 0.25, 0.5, 0.75, 1])
    assert rf.window_mean(np.array([0.0, 3.0, 0.0, 0.0, 6.0]), 1).tolist() == pytest.approx([1.5, 1.0, 1.0, 2.0, 3.0])
    assert col(rf.features("q", np.ones(1), np.zeros(1), ["one"]), "recency").tolist() == [1.0]


def test_shift_fills_the_ends_with_zeros():
    x = np.array([1.0, 2.0, 3.0])
    assert rf.shift(x, 1).tolist() == [0, 1, 2] and rf.shift(x, -1).tolist() == [2, 3, 0]
    assert rf.shift(x, 5).tolist() == [0, 0, 0]
