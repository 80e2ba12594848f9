"""What an answer quotes: the latest value of a slot (a correction in the user's own words, no cue),
the sentence of a turn that answers, the statement closest to a reworded question, and a name bound
to the person asked about rather than to their pet. Plain turns, a scripted retrieval result and a
scripted embedding: the rules are tested, not the sentence-embedding model."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from assistant.answering.latest import newer_value, same_slot
from assistant.answering.note import Note
from assistant.answering.notes import changes_asked, select_notes
from assistant.answering.quoting import focused, quote_turn
from assistant.answering.sentences import answering, closeness
from assistant.answering.slots import grounded_for_slot

PARAMEDIC = [
    "good evening",
    "Radomir here. i work night shifts as a paramedic in Olomouc",
    "well, i did. transferred to the station in Ostrava two weeks ago",
    "my girlfriend hates the night shifts even more than i do haha",
]
CLIMBING = [
    "hi :)",
    "been bouldering at a gym called Cragstone for 2 years now",
    "finally sent my first V5 yesterday! my climbing buddy Ignatius moved away last month so i was solo",
    "ugh they regraded it to V4 this morning. so it was my first V4 i guess",
]
HAMSTER = [
    "hellooo",
    "my son Lysander just got a hamster and he named it Professor Whiskers",
    "he's 7 and totally obsessed",
]
PITCH = [
    "hey",
    "big pitch to Halvorsen & Quist tomorrow, kinda nervous",
    "it was at 10 but they pushed it to 2:30",
    "my manager Philippa is sitting in too, no pressure lol",
]


def turns(texts):
    """User turns numbered 1, 3, 5, ... (the assistant's replies between them are not in memory)."""
    return [SimpleNamespace(number=2 * i + 1, role="user", content=t, vector=None) for i, t in enumerate(texts)]


def result(cited=(), ranked=()):
    return SimpleNamespace(cited=[SimpleNamespace(turn=t, weight=1.0) for t in cited], ranked=list(ranked))


class Embed:
    """A scripted embedding: each listed text gets a unit vector with the given cosine to the first
    axis (the "topic"); anything else is orthogonal to it and to every other text."""

    def __init__(self, close: dict[str, float]):
        self.close, self.seen = close, {}

    def __call__(self, text: str) -> np.ndarray:
        if text not in self.seen:
            v = np.zeros(64)
            c = self.close.get(text, 0.0)
            v[0], v[1 + len(self.seen)] = c, np.sqrt(1 - c * c)
            self.seen[text] = v
        return self.seen[text]


def picked(question, texts, cited=(), ranked=None, embed=None):
    active = turns(texts)
    ranked = [c.number for c in reversed(active)] if ranked is None else ranked
    return select_notes(question, active, result(cited, ranked), embed=embed)


def first(notes):
    return notes.notes[0].content if notes.notes else None


# the latest value of a slot wins


def test_an_update_in_other_words_supersedes_the_earlier_place():
    embed = Embed({PARAMEDIC[1]: 1.0, PARAMEDIC[2]: 0.5})  # the two turns: cosine 0.5
    assert first(picked("Which city do I work in?", PARAMEDIC, cited=[3], embed=embed)) == PARAMEDIC[2]


def test_without_close_embeddings_an_unrelated_later_place_does_not_supersede():
    embed = Embed({PARAMEDIC[1]: 1.0, PARAMEDIC[2]: 0.1})
    assert first(picked("Which city do I work in?", PARAMEDIC, cited=[3], embed=embed)) == PARAMEDIC[1]


def test_a_regraded_value_sharing_a_word_supersedes_without_embeddings():
    notes = picked("What grade was the problem I sent?", CLIMBING, cited=[5])
    assert first(notes) == CLIMBING[3]
    assert "v4" in notes.required


def test_someone_elses_value_is_not_an_update():
    told = turns(["I live in Paris.", "My sister lives in Rome."])
    assert newer_value(told[0], told, "place", "Where do I live?") is None
    told = turns(["My aunt is Farida.", "She's based in Tangier."])
    assert newer_value(told[0], told, "name", "What's my aunt's name?") is None
    told = turns(
        ["I go to a knitting group called the Purl Jam.", "The woman who runs it is Agnieszka, knitting for years."]
    )
    assert newer_value(told[0], told, "name", "What's my knitting group called?") is None


def test_two_my_x_is_slots_are_different_slots():
    assert not same_slot("my locker number at the pool is 218", "and my flat is number 41", None, "number")
    assert same_slot("My gym is FitZone on Main Street.", "My gym is Iron Works now.", None, "place")


def test_the_same_slot_filled_again_supersedes():
    told = turns(["My gym is FitZone on Main Street.", "My gym is Iron Works now."])
    assert newer_value(told[0], told, "place", "Which gym do I go to?").number == 3


# a correction changes the value it changes


def test_a_time_only_correction_leaves_a_question_of_no_kind_to_the_original():
    assert not changes_asked(PITCH[2], PITCH[1], None, "Which company am I presenting to?")
    # a number that looks like a year is no time for a question of no kind
    assert changes_asked(
        "wait no, it's the 2008, the bigger one", "just bought a used Peugeot 208", None, "Which car model did I buy?"
    )
    # without a question: is it a correction at all
    assert changes_asked(PITCH[2], PITCH[1], None)


# the sentence that answers


def test_the_quote_keeps_the_sentence_holding_the_asked_kind():
    assert answering(PARAMEDIC[1], "What's my profession?", "job") == ["i work night shifts as a paramedic in Olomouc"]
    assert focused(PARAMEDIC[1], "What's my profession?") == "i work night shifts as a paramedic in Olomouc"
    quote = quote_turn(Note(3, "user", PARAMEDIC[1], 1.0), question="What's my profession?")
    assert quote.endswith("paramedic in Olomouc") and "(turn 3)" in quote


def test_among_sentences_of_the_kind_the_closest_by_embedding():
    text = "so i'm Ottoline. moving into a flat in Coimbra next week."
    embed = Embed({"Which town am I relocating to?": 1.0, "moving into a flat in Coimbra next week.": 0.6})
    assert answering(text, "Which town am I relocating to?", None, embed) == [
        "moving into a flat in Coimbra next week."
    ]


def test_a_turn_of_one_sentence_is_quoted_whole():
    assert answering(HAMSTER[1], "What's my kid called?", "name") == [HAMSTER[1]]


# reworded questions: the closest statement holding the kind


def test_a_guess_prefers_the_statement_whose_sentence_is_closest_to_the_question():
    q = "How long have I been going there?"
    embed = Embed({q: 1.0, CLIMBING[1]: 0.4, "finally sent my first V5 yesterday!": 0.1})
    assert closeness(CLIMBING[1], q, "number", embed) > closeness(CLIMBING[2], q, "number", embed)
    assert first(picked(q, CLIMBING, ranked=[5, 3, 7, 1], embed=embed)) == CLIMBING[1]


def test_which_thing_prefers_a_statement_naming_a_thing_to_a_person_beside_their_role():
    notes = picked("Which company am I presenting to?", PITCH, ranked=[7, 5, 3, 1])
    assert first(notes) == PITCH[1]


# a name bound to the person asked about


def test_the_kids_name_is_the_sons_not_the_hamsters():
    notes = [SimpleNamespace(role="user", content=HAMSTER[1])]
    assert not grounded_for_slot("Your kid's name is Professor Whiskers.", notes, "What's my kid called?")
    assert grounded_for_slot("Your kid is called Lysander.", notes, "What's my kid called?")
    assert grounded_for_slot("Your hamster is called Professor Whiskers.", notes, "What's my hamster called?")
