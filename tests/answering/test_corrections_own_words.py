"""A fact corrected in the user's own words: the answer gives the new value and not the old one, and
the correction replaces only the slot it corrects. Plain turns and a scripted retrieval result: the
rules are tested, not the ranker or the model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from assistant.answering.answer import grounded_answer
from assistant.answering.corrections import CORRECTION, changes_asked
from assistant.answering.kinds import amounts, has_kind, kind_beyond
from assistant.answering.latest import newer_value
from assistant.answering.note import Note
from assistant.answering.notes import select_notes
from assistant.answering.parts import stale_words, without_stale
from assistant.answering.quoting import extractive
from assistant.answering.recase import named
from assistant.answering.referents import unmentioned_role
from bench.fakes.llm import FakeLLM

CAMERA = [
    "evening",
    "saving for a second-hand camera, a nikon d750, put away 600 pounds so far",
    "hang on, it's a lumix gh-5 i want, the nikon was what my dad used",
    "is it silly to spend that much on a hobby",
]
SOFA = ["hi", "my limit for the new sofa is 900 pounds", "turns out i can go up to 1200 since my tax refund arrived"]
READING = [
    "hello",
    "we're hosting the reading group in my kitchen on friday",
    "scratch that, it's moving to the community library because of the leak",
]
WHIPPET = [
    "hey",
    "my whippet Juniper hurt her paw on a walk",
    "the vet said 10 days of rest",
    "the vet just rang back, make that 14 days not 10",
]
CAT = [
    "hi",
    "we adopted a tabby called Emil from the rescue",
    "sorry, wrong one, his name is Oskar, Emil was the other cat",
]
UNCLE = [
    "morning",
    "my uncle Piet turns 60 and we're taking him to a place called the Blue Anchor",
    "update: the Blue Anchor was full so we're doing it at Rosalind's",
]


def turns(texts):
    """User turns numbered 1, 3, 5, ... (the assistant's replies are not in memory)."""
    return [SimpleNamespace(number=2 * i + 1, role="user", content=t, vector=None) for i, t in enumerate(texts)]


def picked(question, texts, cited):
    active = turns(texts)
    step = SimpleNamespace(
        cited=[SimpleNamespace(turn=t, weight=1.0) for t in cited], ranked=[c.number for c in reversed(active)]
    )
    return select_notes(question, active, step)


def first(notes):
    return notes.notes[0].content if notes.notes else None


@pytest.mark.parametrize(
    "text",
    [
        "hold on, it's the green one",
        "hang on, it's 12 not 14",
        "turns out the shop closes at 6",
        "on second thoughts we'll take the train",
        "we changed our minds and picked oak",
        "i typed that wrong, it's the 9th",
        "or rather, the week after",
        "they pushed it back to june",
        "it's moving to the town hall",
        "make that three",
        "my mistake, it's Lena",
        "never mind the bakery, it's the deli",
        "no sorry, tuesday and saturday, friday didnt work for her",
    ],
)
def test_a_correction_is_said_in_many_words(text):
    assert CORRECTION.search(text)


@pytest.mark.parametrize("text", ["I'm going with my sister", "I'm not 30 yet", "the garden is lovely today"])
def test_plain_statements_are_no_corrections(text):
    assert not CORRECTION.search(text)


def test_no_sorry_in_the_next_message_corrects_the_days():
    told = ["lessons are tuesday and friday at 7pm", "no sorry, tuesday and saturday, friday didnt work for her"]
    assert first(picked("which days are my korean lessons?", told, [1])).startswith("no sorry")


def test_hold_on_corrects_the_thing_and_the_quote_leaves_out_the_old_one():
    notes = picked("which camera am i saving for?", CAMERA, cited=[3])
    assert first(notes) == CAMERA[2]
    assert "nikon" in notes.stale
    quote = extractive(notes.notes, stale=notes.stale)
    assert "gh-5" in quote and "nikon" not in quote.lower()


def test_a_correction_of_the_thing_leaves_the_amount_saved_to_the_earlier_turn():
    notes = picked("how much money have i put away so far?", CAMERA, cited=[3])
    assert first(notes) == CAMERA[1]
    assert amounts(CAMERA[2]) == []  # "gh-5" is a model's code, not an amount


def test_the_new_value_in_a_part_of_its_own_is_a_newer_value_of_the_slot_without_a_cue():
    told = turns([CAMERA[1], "it's a lumix gh-5 i want, the nikon was what my dad used"])
    assert newer_value(told[0], told, None, "which camera am i saving for?").number == 3
    # someone else's value is still no update: the new value is in the part about the sister
    told = turns(["I live in Paris.", "My sister lives in Rome."])
    assert newer_value(told[0], told, "place", "Where do I live?") is None


def test_turns_out_raises_the_amount():
    notes = picked("How much can I spend on the sofa?", SOFA, cited=[3])
    assert first(notes) == SOFA[2] and "1200" in notes.required


def test_a_place_moved_to_in_lower_case_replaces_the_old_place():
    assert has_kind(READING[2], "place")
    notes = picked("Where is the reading group meeting?", READING, cited=[3])
    assert first(notes) == READING[2]


def test_make_that_corrects_a_number_and_a_breed_says_the_dog():
    assert not unmentioned_role("How many days of rest does my dog need?", WHIPPET)
    notes = picked("How many days of rest does my dog need?", WHIPPET, cited=[5])
    assert not notes.unknown and first(notes) == WHIPPET[3]
    quote = extractive(notes.notes, corrected=bool(notes.required), stale=notes.stale)
    assert "14 days" in quote and "10" not in quote


def test_a_cited_correction_is_quoted_without_the_part_naming_the_old_name():
    notes = picked("what's my cat's name?", CAT, cited=[5])
    assert first(notes) == CAT[2] and "emil" in notes.stale
    assert extractive(notes.notes, stale=notes.stale) == "You told me (turn 5): sorry, wrong one, his name is Oskar"


def test_the_model_naming_the_old_value_gives_way_to_the_quote():
    notes = [Note(5, "user", CAT[2], 1.0)]
    llm = FakeLLM(default="Your cat is Oskar, not Emil.")
    text, _, how, _ = grounded_answer(
        llm, lambda t: None, notes, "what's my cat's name?", 60, lambda t: len(t.split()), stale={"emil"}
    )
    assert how == "extractive" and "Emil" not in text and "Oskar" in text


def test_a_correction_of_the_venue_speaks_of_whom_the_venue_was_for():
    notes = picked("Where is Piet's party going to be?", UNCLE, cited=[3])
    assert first(notes) == UNCLE[2]
    assert extractive(notes.notes, stale=notes.stale) == "You told me (turn 5): update: we're doing it at Rosalind's"


def test_a_correction_of_the_venue_does_not_answer_the_name():
    assert not changes_asked(UNCLE[2], UNCLE[1], "name", "What's my uncle called?")
    assert first(picked("What's my uncle called?", UNCLE, cited=[3])) == UNCLE[1]


def test_a_statement_said_again_names_no_stale_value():
    said = "my cousin Ilse is moving to Graz"
    assert stale_words(said, said, "Where is Ilse moving?") == set()
    assert without_stale("it's friday not thursday", {"thursday"}) == "it's friday"
    # "it's not thursday" denies the old day in a part of its own: the part goes
    fix = "Actually it's not Thursday, it's Friday."
    stale = stale_words(fix, "The piano tuner comes on Thursday.", "What day does the piano tuner come?")
    assert stale == {"thursday"} and without_stale(fix, stale) == "it's Friday."


def test_names_in_lower_case_after_a_name_cue_or_as_someones_place():
    assert named("her name is clementine") == {"clementine"}
    assert "rosalind" in named("we're meeting at rosalind's tonight")


def test_a_part_saying_the_new_day_in_lower_case_is_no_old_part():
    old, fix = "plumber is coming thursday at 10", "scratch that he just texted, its friday at 10 now"
    stale = stale_words(fix, old, "when is the plumber coming?")
    assert "friday" in without_stale(fix, stale) and "thursday" not in without_stale(fix, stale)
    # the old part without a value of its own still goes ("Emil was the neighbour's cat")
    assert without_stale("his name is Oskar, Emil was the neighbour's cat", {"emil"}) == "his name is Oskar"


def test_the_old_value_said_in_another_form_is_stale():
    # "monday" repeats "mondays"; the part giving the new day beside a repeated one ("tuesdays and
    # thursdays") says something new, so the part naming only the old day goes
    old, fix = (
        "sessions are mondays and thursdays at 6:30",
        "oh wait no, tuesdays and thursdays. monday is the kids class lol",
    )
    stale = stale_words(fix, old, "what days are my climbing sessions?")
    assert stale == {"monday"}
    assert without_stale(fix, stale) == "oh wait no, tuesdays and thursdays"


def test_a_reason_naming_the_old_value_is_a_part_of_its_own():
    old, fix = (
        "dinner at a place called Osteria Vela on the 21st",
        "actually we moved it to the 28th bc my aunt cant make the 21st",
    )
    stale = stale_words(fix, old, "what date is the dinner?")
    assert stale == {"21st"} and without_stale(fix, stale) == "actually we moved it to the 28th"


def test_a_later_hour_does_not_correct_the_day_asked_for():
    day = "what day does she get here?"
    assert not kind_beyond("update: her flights delayed, landing at 9pm now", "time", day)
    assert kind_beyond("update: her flights delayed, landing at 9pm now", "time", "when does she land?")
    lands, later = "she lands friday around 6pm", "update: her flights delayed, landing at 9pm now"
    assert not changes_asked(later, lands, "time", day)
    assert changes_asked(later, lands, "clock", "what time does she land?")
