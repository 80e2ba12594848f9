"""Who does a thing for the user, found when the retrieval step did not cite it ("whos leading the
choir?" and "the conductor is this guy called lewis"); a reply to a "who" question that names no one;
a name's cue in the question ("the piano called") is no noun of a neighbouring thing; a name typed
in lower case that ends in "s" ("my neighbour dilys"); a price said of another thing is no answer."""

from __future__ import annotations

import pytest

from assistant.answering.answerable import judge
from assistant.answering.binding import another_of
from assistant.answering.note import Note
from assistant.answering.notes import select_notes
from assistant.answering.priced import other_money
from assistant.answering.recase import named
from assistant.answering.replies import statement_reply
from assistant.retrieval.step import Cite
from bench.fakes.llm import FakeLLM
from tests.answering.conversation import Step, turns

WORDS = lambda text: len(text.split())  # noqa: E731  (a token counter: one token per word)

CHOIR = turns(
    "ok so ive joined a community choir and our big concert is in december",
    "its at 7.45 at the Methodist Hall on king st, i need to find parking somewhere",
    "the conductor is this guy called Lewis, apparently hes really strict about being on time lol",
    "oh and i got put in the altos",
)


def test_the_doer_the_retrieval_step_did_not_cite_is_found_by_role():
    # the retrieval step cited the hall's turn; the conductor's turn says who leads
    step = Step([Cite(3, 0.4, 0.4)], (3, 1, 5, 7))
    picked = select_notes("whos leading the choir?", CHOIR, step)
    assert 5 in [n.number for n in picked.notes]
    # asked by another verb, no doer's role is added
    picked = select_notes("whos singing with me?", CHOIR, step)
    assert 5 not in [n.number for n in picked.notes]


def test_a_question_not_about_the_user_by_its_words_finds_the_doer():
    gym = turns(
        "Hello. I've just joined a new gym.",
        "The induction is at 18:30, and my instructor will be a man called Marcus Achterberg.",
        "The monthly fee is £34.99.",
    )
    picked = select_notes("Who is going to show me how to use the equipment?", gym, Step([], (1, 3, 5)))
    assert [n.number for n in picked.notes] == [3]
    # no statement names a doer of the verb: nothing is picked
    picked = select_notes("Who wrote Hamlet?", gym, Step([], (1, 3, 5)))
    assert picked.notes == []


def test_a_question_about_the_users_world_guesses_the_doer_first():
    swim = turns(
        "I have signed my daughter Poppy up for toddler swimming lessons at Riverside Leisure Centre.",
        "The class is on Saturday mornings and starts at 9:30.",
        "Her instructor is Ms Harriet Oyelaran.",
        "We need to bring a swim nappy and a towel each week.",
    )
    # nothing cited; the daughter's turn names a person too, but the instructor's says who teaches
    picked = select_notes("Who will be teaching my little girl?", swim, Step([], (1, 3, 5, 7)))
    assert picked.notes[0].number == 5
    picked = select_notes("Who is my little girl?", swim, Step([], (1, 3, 5, 7)))
    assert picked.notes[0].number != 5


def test_a_reply_to_who_that_names_no_one_is_not_an_answer():
    llm = FakeLLM(default="The reading group is led by a team of experts.")
    assert statement_reply(llm, "whos in charge of the reading group?", 37, WORDS, statement=False) == (
        "I'm not sure.",
        "unsure",
    )
    # a question of another kind keeps a free reply
    llm = FakeLLM(default="Why did the chicken cross the road? To get to the other side.")
    assert statement_reply(llm, "Can you tell me a joke?", 37, WORDS, statement=False)[1] == "model"


def test_a_names_cue_in_the_question_is_no_noun_of_a_neighbouring_thing():
    question = "wait what was the company i booked for the piano called?"
    said = "booked a company called Harlow removals, they quoted £240 for the whole job"
    assert not another_of("booked a company called Harlow removals", question)
    assert judge([Note(3, "user", said, 1.0)], question).how == "answer"


def test_a_name_ending_in_s_that_no_vocabulary_has_is_a_name():
    assert named("theyll leave it with my neighbour dilys next door") == {"dilys"}
    assert named("my wife works in a bank") == set() and named("my dog barks at night") == set()


def test_a_price_said_of_another_thing_is_not_the_answer():
    said = notes_of("She thinks I may need a filling. The receptionist told me the check-up itself costs £28.50.")
    assert judge(said, "How much is the filling going to cost me?").how != "answer"
    said = notes_of("The course runs for ten weeks and cost me £145.")
    assert judge(said, "How much does the textbook cost?").how != "answer"
    # a price said of a pronoun is the price of whom the turn is about
    said = notes_of("shes called jo fenwick, she charges £12 a walk")
    assert judge(said, "how much does she charge?").how == "answer"
    said = notes_of("my mechanic quoted £340 for the repair")
    assert judge(said, "how much is the repair?").how == "answer"


@pytest.mark.parametrize(
    "said, question",
    [
        ("I paid a £120 deposit, and breakfast is from seven.", "What's the total cost of my hotel stay?"),
        ("membership is £34.99 a month and the locker code is 2918", "how much was the joining fee"),
        ("I've got about £3,200 of freelance income to declare this year.", "How much tax do I owe this year?"),
        ("His call-out charge is £65, which seems reasonable.", "What is his hourly rate?"),
    ],
)
def test_money_named_otherwise_is_not_the_answer(said, question):
    assert judge(notes_of(said), question).how != "answer"


def test_money_named_as_asked_or_not_named_is_the_answer():
    assert judge(notes_of("the deposit was £120"), "how much was the deposit?").how == "answer"
    assert judge(notes_of("membership is £34.99 a month"), "how much is my gym membership?").how == "answer"
    assert judge(notes_of("its £95 for the service"), "how much is the boiler service?").how == "answer"
    # a sum said with no name beside one named otherwise may be the one asked
    said = "its £34.99 a month and theres a joining fee of £20"
    assert not other_money(said, "whats my ongoing membership cost, not counting the one-off bit?")
    assert other_money("membership is £34.99 a month and the locker code is 2918", "how much was the joining fee")


def notes_of(*texts: str) -> list[Note]:
    return [Note(2 * i + 1, "user", t, 1.0) for i, t in enumerate(texts)]
