"""A question that offers the answers ("Does the party start at 2pm or 3pm?"): the values people say in
words are read ("two o'clock", "half six", "row eleven"), the option a statement says is named first,
a later statement corrects an earlier one, and a statement saying both or neither picks nothing."""

from __future__ import annotations

import pytest

from assistant.answering.choice import chosen, options, values_in
from assistant.answering.note import Note
from bench.fakes.llm import FakeLLM
from memory.types import MemorySettings
from tests.answering.test_first_minute import grounded


def notes(*texts: str) -> list[Note]:
    return [Note(2 * i + 1, "user", t, 1.0) for i, t in enumerate(texts)]


@pytest.mark.parametrize(
    "text, kind, value",
    [
        ("it starts at two o'clock", "time", ("time", 2, 0)),
        ("induction is wednesday at half six in the evening", "time", ("time", 6, 30)),
        ("leaving Heathrow at quarter past seven", "time", ("time", 7, 15)),
        ("drop off is twenty past nine sat morning", "time", ("time", 9, 20)),
        ("be there by quarter to eight", "time", ("time", 7, 45)),
        ("the meeting is at 14:00", "time", ("time", 2, 0)),
        ("we eat at six thirty", "time", ("time", 6, 30)),
        ("the deadline on the thirty-first of January", "date", ("date", 31, 1)),
        ("it's on the 24th of May", "date", ("date", 24, 5)),
        ("we're sitting in the stalls, row eleven", "number", ("number", 11)),
        ("ready in three working days", "number", ("number", 3)),
    ],
)
def test_a_value_said_in_words_is_read(text, kind, value):
    assert [v for v, _ in values_in(text, kind)] == [value]


def test_a_price_is_no_number_of_an_option():
    assert values_in("membership is £34.99 a month", "number") == []


@pytest.mark.parametrize(
    "question, offered",
    [
        ("Does Amara's party start at 2pm or 3pm?", ["2pm", "3pm"]),
        ("Are our seats in row 11 or row 12?", ["row 11", "row 12"]),
        ("Is it ready in 3 working days or 5 working days?", ["3 working days", "5 working days"]),
        ("can i grab my bike from 4:30 or is it not till 5:30", ["4:30", "5:30"]),
        ("Is the deadline the 31st of January or the 31st of October?", ["the 31st of January", "the 31st of October"]),
        ("What time is the party?", []),
        ("Is the party at 2pm?", []),
        ("Is it at 2pm or later?", []),  # one value offered
    ],
)
def test_the_options_a_question_offers(question, offered):
    assert [o.text for o in options(question)] == offered


def test_the_statement_saying_one_option_is_chosen():
    told = notes("my daughter's party is on Saturday", "it starts at two o'clock", "twelve kids are coming")
    option, said = chosen("Does the party start at 2pm or 3pm?", [], told)
    assert option.text == "2pm" and said.number == 3


def test_a_later_statement_corrects_an_earlier_one():
    told = notes("the party starts at 2pm", "the cake is from Crumbs", "update: the party now starts at 3pm")
    option, said = chosen("Does the party start at 2pm or 3pm?", told[:1], told)
    assert option.text == "3pm" and said.number == 5
    # taken back in the same breath
    told = notes("the party starts at 2pm, no wait, 3pm")
    assert chosen("Does the party start at 2pm or 3pm?", [], told)[0].text == "3pm"


def test_a_number_is_chosen_only_by_a_statement_on_the_question():
    told = notes("I have 2 cats and a dog", "we're sitting in the stalls, row eleven")
    assert chosen("Are our seats in row 11 or row 12?", [], told)[1].number == 3
    assert chosen("Should I bring 2 or 3 towels?", [], told) is None  # the cats are no towels


def test_a_statement_saying_both_or_neither_chooses_nothing():
    assert chosen("Does the party start at 2pm or 3pm?", [], notes("lunch at 2pm then the party at 3pm")) is None
    assert chosen("Does the party start at 2pm or 3pm?", [], notes("the party starts at four")) is None


def test_the_answer_names_the_option_then_quotes_the_turn_it_cites(store, counter):
    llm = FakeLLM(default="Ok.")
    svc = grounded(store, llm, counter)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    for text in ("booked my gym induction finally", "induction is wednesday at half six w a trainer called marco"):
        svc.ask(conv, text)
    r = svc.ask(conv, "is my gym induction at 6:30 or 7:30?")
    assert r.answer == "6:30. You told me (turn 3): induction is wednesday at half six w a trainer called marco"
    assert r.cited == [3]
