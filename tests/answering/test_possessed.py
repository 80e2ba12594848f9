"""A thing asked of someone by name ("Which day is Clementine's appointment?") answered by a statement
that says "the appointment" and names no one else, the name said in another turn; a name asked of
"the person" by no role ("the name of the person i need to talk to")."""

from __future__ import annotations

from assistant.answering.answerable import judge
from assistant.answering.note import Note
from assistant.answering.notes import select_notes
from assistant.answering.referents import the_possessed
from tests.answering.conversation import Step, turns

VET = turns(
    "I would like some help keeping track of my rabbit's vet visit this week.",
    "Her name is Clementine, and she is booked in with Dr Anjali Mistry at Hollybank Veterinary Clinic.",
    "The appointment is on Thursday at 10:40, and the consultation itself costs £48.",
)


def test_the_thing_said_with_the_is_the_named_ones():
    question = "Which day is Clementine's appointment?"
    assert the_possessed("The appointment is on Thursday at 10:40.", question)
    # the user's own, or someone else's by name, is not
    assert not the_possessed("My appointment is on Thursday.", question)
    assert not the_possessed("The appointment with Dr Mistry is on Thursday.", question)
    assert not the_possessed("The appointment is on Thursday.", "Which day is the appointment?")


def test_a_named_ones_thing_said_in_another_turn_is_answered():
    picked = select_notes("Which day is Clementine's appointment?", VET, Step([], (5, 3, 1)))
    assert not picked.unknown and 5 in [n.number for n in picked.notes]
    # a thing of theirs no turn speaks of is still unknown
    picked = select_notes("Which day is Clementine's grooming?", VET, Step([], (5, 3, 1)))
    assert picked.unknown and not picked.notes


PARTY = turns(
    "I'm planning my daughter Amara's seventh birthday party.",
    "The party is at Jumping Jacks trampoline park on Saturday.",
    "I've booked it for twelve children.",
    "Update: the guest list has grown, so it's fourteen children now.",
)


def test_the_thing_once_said_to_be_theirs_is_theirs_whatever_else_is_named():
    told = [t for t in PARTY if t.role == "user"]
    question = "How many children is Amara's party booked for?"
    assert the_possessed("The party is at Jumping Jacks trampoline park.", question, told)
    assert not the_possessed("The party is at Jumping Jacks trampoline park.", question)  # not said to be hers
    # a statement pointing back to "the party" answers, and the correction of it
    picked = select_notes(question, PARTY, Step([], (5, 1, 3, 7)))
    assert not picked.unknown and 7 in [n.number for n in picked.notes]


def test_a_name_asked_of_a_person_by_no_role_is_any_persons_name():
    said = "the person i need to speak to is called Ilse, in the revenues team"
    question = "whats the name of the person i need to talk to at the council?"
    assert judge([Note(5, "user", said, 1.0)], question).how == "answer"
    # a place's name is still no person's
    assert judge([Note(5, "user", "the office is in Leeds", 1.0)], question).how != "answer"
