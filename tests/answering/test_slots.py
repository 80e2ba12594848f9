"""The slot a question asks to have filled (assistant.answering.slots) and how the answer uses it: a
turn that speaks of the slot's owner or modifiers without filling its head is not the answer, none
filling it is "I don't know", and a model answer may give only the slot's own values. Also: a
correction keeps the weight of the note it replaces, so chatter cited below it cannot come first.
Hand-made turns, none of them a probe's."""

from __future__ import annotations

import pytest

from assistant.answering.agreement import agrees
from assistant.answering.asked import asked_slot
from assistant.answering.note import Note
from assistant.answering.notes import select_notes
from assistant.answering.quoting import extractive
from assistant.answering.slots import fills, grounded_for_slot, judged, speaks_of
from assistant.retrieval.lexical import stem
from assistant.retrieval.step import Cite
from tests.answering.conversation import Step, Turn, turns


@pytest.mark.parametrize(
    "question, head, around",
    [
        ("What's my passport number?", "number", {"passport"}),
        ("What is the name of my goldfish?", "name", {"goldfish"}),
        ("What's my tortoise called?", "name", {"tortoise"}),
        ("What's my nephew's name?", "name", {"nephew"}),
        ("What's the alarm code at the studio?", "code", {"alarm", "studio"}),
        ("What's my favourite book?", "book", {"favourite"}),
        ("What breed is my dog?", "breed", {"dog"}),
        ("Which flavour was the cake?", "flavour", {"cake"}),
    ],
)
def test_a_what_is_question_asks_for_the_head_of_its_noun_phrase(question, head, around):
    slot = asked_slot(question)
    assert slot is not None and slot.head == stem(head) and around <= slot.around


@pytest.mark.parametrize(
    "question",
    [
        "What is love?",
        "What day is my dentist appointment?",  # the kind of answer is the question's own word
        "What's your name?",  # the assistant's
        "What's my plan for tomorrow?",  # "for tomorrow" is not an owner
        "What's going on with my sister?",
        "Where does my nephew live?",
        "What car is my brother driving?",
        "What colour is my bike?",  # a colour: the kind of answer, judged by the answer's kinds
    ],
)
def test_other_questions_ask_for_no_slot(question):
    assert asked_slot(question) is None


@pytest.mark.parametrize(
    "question, text, speaks, filled",
    [
        # the owner or a modifier said, the head not filled: a neighbouring slot
        ("What's my shoe size?", "I bought new shoes yesterday.", True, False),
        ("What's my favourite book?", "My favourite podcast is Hardcore History.", True, False),
        ("What's my nephew's name?", "My brother Karl just became a dad, so I have a nephew now.", True, False),
        ("What are my goldfish's names?", "I have three goldfish in a tank.", True, False),
        ("What's my car's colour?", "I washed my car this morning.", True, False),
        ("What's my dog's name?", "I forgot my dog's name at the vet, how embarrassing.", True, False),
        ("What's the code for my shed?", "My shed is number 4 on the allotment.", True, False),
        # filled: the value, or a head that is no kind of value said
        ("What's my favourite book?", "My favourite book is Dune.", True, True),
        ("What's my favourite book?", "My favourite book is the one about the lighthouse keeper.", True, True),
        ("What's my nephew's name?", "My nephew Bruno turns five today.", True, True),
        ("What are my goldfish's names?", "The goldfish are called Bubbles and Fin.", True, True),
        ("What's my car's colour?", "My car is a dark green hatchback.", True, True),
        ("What's my bird called?", "Pip woke me up again at dawn, silly bird.", True, True),
        ("What's my boyfriend's name?", "my bf tomasz is cooking tonight", True, True),
        ("What's the code for my shed?", "The shed padlock code is 7316.", True, True),
        ("What breed is my dog?", "I walk my dog twice a day.", True, False),
        ("What breed is my dog?", "My dog is a whippet.", True, True),
        ("What breed is my dog?", "My dog is sleeping on the sofa.", True, False),
        # none of the slot's words: not judged here
        ("What's my hobby?", "Spent Sunday restoring an old sailing boat.", False, False),
    ],
)
def test_a_turn_speaks_of_the_slot_and_fills_it_or_not(question, text, speaks, filled):
    slot = asked_slot(question)
    assert speaks_of(text, slot) is speaks
    assert fills(text, slot, question) is filled


def user(number: int, text: str) -> Note:
    return Note(number, "user", text, 0.5)


def test_turns_that_speak_of_the_slot_without_filling_it_mean_i_dont_know():
    born = [user(1, "My cousin Hanna just had a baby."), user(3, "How was your weekend?")]
    assert judged(born, "What's the baby's name?") == ([], True)
    # another turn fills it: the one beside it is left out, the rest kept in order
    named = [*born, user(5, "They named the little one Elias.")]
    kept, unknown = judged(named, "What's the baby's name?")
    assert not unknown and [n.number for n in kept] == [3, 5]
    # no turn says a word of the slot: nothing is decided, every note stays
    indirect = [user(1, "Spent Sunday restoring an old sailing boat.")]
    assert judged(indirect, "What's my hobby?") == (indirect, False)
    # a question of no slot's shape: nothing is decided either
    assert judged(born, "Who had a baby?") == (born, False)


def test_the_users_own_words_fill_a_slot_not_the_assistants():
    notes = [user(1, "I just adopted a kitten."), Note(2, "assistant", "Congratulations to Whiskers!", 0.5)]
    assert judged(notes, "What's my kitten's name?") == ([], True)


def test_the_answer_to_an_unfilled_slot_is_i_dont_know():
    active = turns("Hi there", "I gave blood at the clinic this morning.", "Feeling a bit dizzy.")
    step = Step([Cite(3, 0.6, 0.5)], (3, 5, 1))
    assert select_notes("What's my blood type?", active, step).unknown
    active = turns("Hey", "My favourite podcast is Hardcore History.", "It's long but good.")
    assert select_notes("What's my favourite book?", active, Step([Cite(3, 0.6, 0.5)], (3, 5, 1))).unknown
    # a slot that is filled is still answered
    active = turns("Hey", "My favourite book is Dune.", "I reread it every summer.")
    picked = select_notes("What's my favourite book?", active, Step([Cite(3, 0.6, 0.5)], (3, 5, 1)))
    assert not picked.unknown and picked.notes[0].number == 3


def test_guesses_about_a_neighbouring_slot_are_i_dont_know_too():
    active = turns("I have three goldfish in a tank.", "Thanks!", "They're very shiny.")
    assert select_notes("What are my goldfish's names?", active, Step([], (1, 5, 3))).unknown


def test_a_model_answer_may_give_only_the_slots_own_values():
    born = [user(1, "My cousin Hanna just had a baby.")]
    assert not grounded_for_slot("The baby's name is Hanna.", born, "What's the baby's name?")
    assert not agrees("The baby's name is Hanna.", None, born, "What's the baby's name?")
    named = [user(5, "The baby is called Elias.")]
    assert grounded_for_slot("The baby's name is Elias.", named, "What's the baby's name?")
    assert agrees("The baby's name is Elias.", None, named, "What's the baby's name?")
    # a question of no slot's shape is not held to one
    assert grounded_for_slot("Hanna had a baby.", born, "Who had a baby?")


def test_a_correction_keeps_the_weight_of_the_note_it_replaces():
    active = turns(
        "hello",
        "My dentist appointment is on Wednesday at 9.",
        "I keep putting it off.",
        "Actually it's Thursday, not Wednesday, they emailed me.",
        "Anyway, rainy day today.",
    )
    # the retrieval step cites the first statement and the chatter below it; the correction comes in
    # twice: replacing the cited statement, and pointing back along "it" at the chatter's weight
    step = Step([Cite(3, 0.43, 0.5), Cite(9, 0.3, 0.4)], (3, 9, 7, 5, 1))
    picked = select_notes("What day is my dentist appointment?", active, step)
    assert picked.notes[0].number == 7 and picked.notes[0].weight == 0.43
    assert extractive(picked.notes) == "You told me (turn 7): Actually it's Thursday, not Wednesday, they emailed me."


def test_chatter_with_a_day_word_still_answers_when_it_is_all_there_is():
    active = [Turn(1, "user", "Rainy day today, I'm staying in.")]
    picked = select_notes("What day am I staying in?", active, Step([Cite(1, 0.5, 0.5)], (1,)))
    assert picked.notes[0].number == 1
