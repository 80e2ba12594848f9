"""What someone named told the user ("How often did Gwen tell me to water the fig?"): the statement in
which she says it, by a pronoun pointing back to her or by her name, comes first; a statement that
only names her does not."""

from __future__ import annotations

from assistant.answering.notes import select_notes
from assistant.answering.referents import reported
from assistant.retrieval.step import Cite
from tests.answering.conversation import Step, turns

FIG = turns(
    "My neighbour Gwen gave me a fiddle-leaf fig as a housewarming present.",
    "She said to water it once every ten days and to keep it out of direct sun.",
    "I've named it Bartholomew, which my partner thinks is ridiculous.",
)


def test_what_a_named_person_said_is_found_by_the_pronoun_pointing_back():
    told = [t for t in FIG if t.role == "user"]
    assert reported("How often did Gwen tell me to water the fig?", told).number == 3
    # by name too
    told2 = [*told, *turns("x", "y", "z", "Gwen said the pot should have a drainage hole")[6:7]]
    assert reported("What did Gwen say about the pot?", told2).number == 7


def test_what_no_one_named_said_or_a_word_no_statement_shares_finds_nothing():
    told = [t for t in FIG if t.role == "user"]
    assert reported("How often should I feed the fig with fertiliser?", told) is None  # no one named
    assert reported("What did Gwen say about the fertiliser?", told) is None  # she said nothing of it
    assert reported("How often did Oskar tell me to water the fig?", told) is None  # "she" is Gwen


def test_the_statement_of_what_she_said_comes_first_among_the_notes():
    # the retrieval step cited the turn that names her
    picked = select_notes("How often did Gwen tell me to water the fig?", FIG, Step([Cite(1, 0.4, 0.4)], (1, 3, 5)))
    assert picked.notes[0].number == 3
