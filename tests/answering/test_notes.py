"""Which turns the embedded model's answer is built from (assistant.answering.notes) and the words it says
itself (assistant.answering.wording): the answer's kind rescues a statement holding it, a later correction
supersedes a note and must be carried by the answer, guesses prefer the user speaking of
themselves, a tag question is a statement, the fixed sentences follow the user's language.
Pure functions on hand-made turns; the service test uses the scripted model and hash embeddings."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.answering.agreement import agrees
from assistant.answering.message import about_the_user, is_question
from assistant.answering.note import Note
from assistant.answering.notes import correction_of, expected_kind, select_notes
from assistant.answering.quoting import extractive
from assistant.answering.replies import statement_reply
from assistant.answering.wording import language
from assistant.retrieval.step import Cite, RetrievalConfig
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory.types import MemorySettings
from tests.answering.conversation import Step, Turn, turns

WORDS = lambda text: len(text.split())  # noqa: E731  (a token counter: one token per word)


@pytest.mark.parametrize(
    "question, kind",
    [
        ("Who is coming to stay with me?", "name"),
        ("What is my dog called?", "name"),
        ("When is my flight?", "time"),
        ("What day is my haircut?", "time"),
        ("Where's home for me these days?", "place"),
        ("Which city did my sister move to?", "place"),
        ("How old am I?", "number"),
        ("What's my locker number?", "number"),
        ("What's my hobby?", None),
        ("Do I eat meat?", None),
    ],
)
def test_the_answers_kind_comes_from_the_question(question, kind):
    assert expected_kind(question) == kind


def test_a_cited_turn_without_the_answers_kind_gets_the_statement_that_has_it():
    active = turns(
        "Hey, how's it going?",
        "My older brother Tomasz is visiting this weekend.",
        "I need to tidy the guest room.",
        "Whatever, we'll stay in.",
    )
    step = Step([Cite(8, 0.38, 0.4), Cite(7, 0.36, 0.4)], (8, 7, 1, 3, 5, 2, 4, 6))
    picked = select_notes("Who is coming to stay with me?", active, step)
    assert picked.sure and [n.number for n in picked.notes][0] == 3
    assert extractive(picked.notes) == "You told me (turn 3): My older brother Tomasz is visiting this weekend."
    # a question whose kind a cited statement already holds gets nothing added
    step = Step([Cite(3, 0.5, 0.5)], (3, 7, 1, 5))
    assert [n.number for n in select_notes("Who is visiting?", active, step).notes] == [3]


def test_a_later_correction_replaces_the_note_and_its_new_value_is_required():
    active = turns(
        "My haircut is booked for Monday at 10.",
        "I really need it.",
        "Actually it's Tuesday, not Monday, I just checked.",
        "Anyway, grey day today.",
    )
    picked = select_notes("What day is my haircut?", active, Step([Cite(1, 0.41, 0.8)], (1, 7, 5, 3)))
    assert [n.number for n in picked.notes] == [5] and picked.required == {"tuesday"}
    assert extractive(picked.notes).startswith("You told me (turn 5): Actually it's Tuesday")
    assert not agrees("Your haircut is on Monday.", None, picked.notes, "What day is my haircut?", picked.required)
    assert agrees("Your haircut is on Tuesday.", None, picked.notes, "What day is my haircut?", picked.required)


def test_a_correction_needs_a_cue_a_shared_word_and_to_come_later():
    note = Note(3, "user", "I'm meeting Jonas at the Italian place on Friday.", 0.4)
    later = [Turn(7, "user", "Change of plan: we're meeting on Saturday instead.")]
    assert correction_of(note, later).number == 7
    assert correction_of(note, [Turn(7, "user", "We're meeting on Saturday too.")]) is None  # no cue
    assert correction_of(note, [Turn(7, "user", "Actually the soup was cold.")]) is None  # no shared word
    assert correction_of(note, [Turn(1, "user", "Change of plan: meeting on Saturday instead.")]) is None


def test_guesses_prefer_the_user_speaking_of_themselves_and_the_answers_kind():
    active = turns(
        "Evening.",
        "Spent Saturday at the pottery wheel again, my hands are covered in clay.",
        "It's relaxing.",
        "Never mind.",
    )
    picked = select_notes("What's my hobby?", active, Step([], (5, 1, 3, 7, 2, 4, 6, 8)))
    assert not picked.sure and picked.notes[0].number == 3
    active = turns("Hey.", "Time flies.", "I'll be turning 40 on the 2nd of November, can you believe it?")
    picked = select_notes("When is my birthday?", active, Step([], (3, 1, 5)))
    assert picked.notes[0].number == 5
    # nothing cited and the question is not about the user: no guesses
    assert select_notes("Can you tell me a fact about the sea?", active, Step([], (3, 1, 5))).notes == []


@pytest.mark.parametrize(
    "message, asks",
    [
        ("I'll be turning 40 on the 2nd of November, can you believe it?", False),
        ("We met on Friday, right?", False),
        ("Hi, what's my name?", True),
        ("What is my name? I forgot.", True),
        ("Do I eat meat?", True),
        ("I live in Lisbon.", False),
    ],
)
def test_a_tag_on_a_statement_about_the_user_is_not_a_question(message, asks):
    assert is_question(message) is asks


def test_a_request_to_tell_something_is_not_about_the_user():
    assert not about_the_user("Can you tell me one fact about the sea?")
    assert about_the_user("Tell me my name.") and about_the_user("Where's home for me these days?")


@pytest.mark.parametrize(
    "text, lang",
    [
        ("¿Cómo se llama mi perro?", "es"),
        ("Dans quelle ville est-ce que j'habite ?", "fr"),
        ("Qual é o nome do meu cão?", "pt"),
        ("Wie heißt mein Hund?", "de"),
        ("Come si chiama il mio cane?", "it"),
        ("Which city do I live in?", "en"),
        ("Lisbon.", "en"),
    ],
)
def test_the_language_is_guessed_from_function_words(text, lang):
    assert language(text) == lang


def test_fixed_sentences_are_in_the_users_language():
    notes = [Note(3, "user", "Mi perro se llama Toby.", 0.5)]
    assert extractive(notes, lang="es") == "Me dijiste (turno 3): Mi perro se llama Toby."
    assert extractive(notes, sure=False, lang="es").startswith("No estoy seguro")
    llm = FakeLLM(default="That is a lovely dog, I hope he is well.")
    assert statement_reply(llm, "Mi perro se llama Toby.", 37, WORDS) == ("Anotado.", "acknowledged")


def test_a_statement_reply_is_one_sentence():
    llm = FakeLLM(default="Sounds lovely. I would plant roses and tulips and more.")
    assert statement_reply(llm, "The garden is lovely today.", 37, WORDS) == ("Sounds lovely.", "model")


def test_the_service_answers_from_the_correction_in_the_users_language(store, counter):
    llm = FakeLLM(default="Ok.")
    cfg = RetrievalConfig(ask_model=False)
    svc = ChatService(
        store, llm, HashEmbedder(), counter, retrieval=replace(cfg, hybrid=replace(cfg.hybrid, threshold=0.0))
    )
    svc.answer_mode = "grounded"
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    svc.ask(conv, "Mi cita es el lunes.")
    svc.ask(conv, "Perdón, typo: es el martes, no el lunes.")
    llm.enqueue("Tu cita es el lunes.")  # the stale day: refused, the correction is quoted
    r = svc.ask(conv, "¿Qué día es mi cita?")
    assert r.answered_by == "extractive"
    # quoted without its part naming the old day (``parts.without_stale``)
    assert r.answer == "Me dijiste (turno 3): Perdón, typo: es el martes"


def test_a_statement_beside_a_question_is_still_a_statement_of_the_users():
    active = turns("My name is Sam, what's yours?", "The weather is fine.")
    picked = select_notes("What is my name?", active, Step([], (3, 1)))
    assert picked.notes[0].number == 1
    assert not about_the_user("My name is Sam, what's yours?")
    assert about_the_user("Hi, what's my name?")


def test_a_cited_reply_brings_the_users_statement_it_answered():
    active = [
        Turn(1, "user", "Hi, how are things?"),
        Turn(2, "assistant", "Fine."),
        Turn(3, "user", "I play the cello in a local orchestra."),
        Turn(4, "assistant", "A cello is a wonderful instrument."),
    ]
    picked = select_notes("What instrument do I play?", active, Step([Cite(4, 0.4, 0.6)], (4, 3, 1, 2)))
    assert [n.number for n in picked.notes] == [3, 4]
    assert extractive(picked.notes) == "You told me (turn 3): I play the cello in a local orchestra."


def test_the_model_is_asked_for_one_sentence_and_the_server_stops_there():
    llm = FakeLLM(default="Fine.")
    statement_reply(llm, "The garden is lovely today.", 37, WORDS)
    assert llm.history[-1].extra_body == {"stop": [". ", "! ", "? ", "\n"]}


def test_a_model_answer_speaking_as_the_user_or_opening_with_its_own_name_is_refused():
    notes = [Note(3, "user", "Ana, my little sister, just moved to Montreal for her studies.", 0.5)]
    q = "Which city did my sister move to?"
    assert agrees("Your little sister moved to Montreal.", None, notes, q)
    assert agrees("Ana moved to Montreal for her studies.", None, notes, q)
    assert not agrees("My sister moved to Montreal.", None, notes, q)  # the user's words copied
    assert not agrees("Monsieur A.N., your little sister, moved to Montreal.", None, notes, q)


def test_an_answer_repeating_the_users_i_phrase_speaks_as_the_user():
    notes = [Note(3, "user", "I work at a bakery called Crumbs.", 0.5)]
    q = "What is the name of the bakery where I work?"
    assert not agrees("The bakery I work at is called Crumbs.", None, notes, q)
    assert agrees("The bakery you work at is called Crumbs.", None, notes, q)
    assert agrees("It is called Crumbs, I'm told.", None, notes, q)


def test_a_typing_slip_is_a_correction():
    note = Note(2, "user", "The ferry to Naxos leaves at 07:10.", 0.5)
    assert correction_of(note, [Turn(3, "user", "I mis-typed, the ferry leaves at 07:40")]).number == 3
    assert correction_of(note, [Turn(3, "user", "My bad, the ferry leaves at 07:40")]).number == 3
    assert correction_of(note, [Turn(3, "user", "The ferry leaves at 07:40 on Sundays too")]) is None  # no cue
