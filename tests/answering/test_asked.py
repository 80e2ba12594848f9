"""What a question gets when memory does not hold its answer, and what a model answer must carry when
it does: a question is never acknowledged "Noted." (about someone the user spoke of it is "I don't
know", to the assistant "I'm not sure."); a label or a place asked for is filled only by a label's
or a place's value; a model answer must give the note's name or job, else the note is quoted.
Hand-made sentences, none of them a probe's; scripted model (FakeLLM)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.answering.agreement import agrees
from assistant.answering.answer import grounded_answer
from assistant.answering.asked import asked_slot
from assistant.answering.carries import carries_answer
from assistant.answering.note import Note
from assistant.answering.notes import mentions, select_notes
from assistant.answering.quoting import without_old
from assistant.answering.replies import statement_reply
from assistant.answering.slots import fills, judged
from assistant.retrieval.step import Cite, RetrievalConfig
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory.types import MemorySettings
from tests.answering.conversation import Step, turns

WORDS = lambda text: len(text.split())  # noqa: E731  (one token per word)


def user(number: int, text: str) -> Note:
    return Note(number, "user", text, 0.5)


# ----------------------------------------------------------------------------- never "Noted." for a question


def test_a_refused_reply_to_a_question_is_not_sure_never_noted():
    llm = FakeLLM(default="You should visit Marrakesh in April.")  # a city of the model's own
    assert statement_reply(llm, "Can you suggest somewhere warm to travel?", 37, WORDS, statement=False) == (
        "I'm not sure.",
        "unsure",
    )
    llm = FakeLLM(default="Deberías visitar Sevilla.")
    assert statement_reply(llm, "¿Puedes recomendarme un viaje?", 37, WORDS, statement=False)[0] == "No estoy seguro."
    # a statement keeps its acknowledgement
    llm = FakeLLM(default="You should visit Marrakesh in April.")
    assert statement_reply(llm, "I like warm places.", 37, WORDS) == ("Noted.", "acknowledged")


def test_a_question_naming_someone_the_user_spoke_of_recalls():
    told = turns("My niece Marisol started ballet lessons.")
    statements = [t for t in told if t.role == "user"]
    assert mentions("How tall is Marisol?", statements)
    assert not mentions("How tall is Everest?", statements)  # nobody the user spoke of
    assert not mentions("Can you write a poem about Marisol?", statements)  # a favour, not a recall
    # nothing holds a number: "I don't know", whether the ranker cites the turn, guesses it or not
    q = "How many siblings does Marisol have?"
    assert select_notes(q, told, Step([], ())).unknown
    assert select_notes(q, told, Step([], (1,))).unknown
    assert select_notes(q, told, Step([Cite(1, 0.6, 0.5)], (1,))).unknown
    # no kind of answer to miss: the turn about her is a guess, quoted as one
    picked = select_notes("Is Marisol any good?", told, Step([], (1,)))
    assert not picked.sure and [n.number for n in picked.notes] == [1]


def test_a_question_asking_after_someone_by_he_or_she_recalls():
    told = turns("My aunt Rosalba teaches chemistry in Bari.")
    statements = [t for t in told if t.role == "user"]
    assert mentions("Where does she teach?", statements)
    assert not mentions("Where does he teach?", statements)  # an aunt is not "he"
    assert not mentions("Where does she teach?", turns("I bought a new kettle."))  # nobody she can be
    picked = select_notes("What does she teach?", told, Step([], (1,)))
    assert [n.number for n in picked.notes] == [1]  # quoted from memory, not the model's free text


def test_a_question_about_someone_mentioned_is_not_acknowledged(store, counter):
    cfg = RetrievalConfig(ask_model=False)
    svc = ChatService(
        store,
        FakeLLM(default="Ok."),
        HashEmbedder(),
        counter,
        retrieval=replace(cfg, hybrid=replace(cfg.hybrid, threshold=1.01)),
    )
    svc.answer_mode = "grounded"
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    svc.ask(conv, "My neighbour Bertil collects old radios.")
    r = svc.ask(conv, "How old is Bertil?")
    assert r.answered_by == "unknown" and r.answer.startswith("I don't know")


# ----------------------------------------------------------------------------- a label, a place


@pytest.mark.parametrize(
    "text, filled",
    [
        ("My train to Lyon leaves at 9:40.", False),  # the train's time and city, not its seat
        ("I booked seat 14C on the train.", True),
        ("Seat 22 again, by the window.", True),
    ],
)
def test_a_label_asked_for_is_filled_where_it_is_said(text, filled):
    q = "Which seat is my train?"
    assert fills(text, asked_slot(q), q) is filled


@pytest.mark.parametrize(
    "question, text, filled",
    [
        ("Where is Tomas's party?", "My friend Tomas is throwing a party on the 3rd.", False),  # a day, no place
        ("Where is Tomas's party?", "Tomas's party is at the boathouse.", True),
        ("Where is Tomas's party?", "Tomas's party is in Ghent.", True),
        ("Where are my gloves?", "I bought my gloves on 4 March at 10:30.", False),
        ("Where are my gloves?", "My gloves are at home.", True),
        ("Where are my gloves?", "My gloves are in locker 9.", True),
        ("Where are my gloves?", "Left my gloves on level B2.", True),
    ],
)
def test_a_where_question_asks_for_a_place(question, text, filled):
    slot = asked_slot(question)
    assert slot is not None and fills(text, slot, question) is filled


@pytest.mark.parametrize(
    "question", ["Where is Tomas?", "Where is my cousin staying?", "Where does Tomas live?", "Where did I park?"]
)
def test_other_where_questions_ask_for_no_slot(question):
    assert asked_slot(question) is None


def test_a_turn_about_the_owner_without_a_place_means_i_dont_know():
    notes = [user(1, "My friend Tomas is throwing a party on the 3rd."), user(3, "ugh, still no present")]
    assert judged(notes, "Where is Tomas's party?") == ([], True)
    notes = [user(1, "My bus to Graz leaves at 6:15."), user(3, "thanks")]
    assert judged(notes, "What platform is my bus?") == ([], True)


# ----------------------------------------------------------------------------- a model answer carries the answer


def test_a_model_answer_must_give_the_notes_name():
    notes = [user(1, "We got a kitten on Sunday."), user(3, "His name is Bramble and he's tiny.")]
    q = "What's the kitten called?"
    assert not carries_answer("The kitten is a real little troublemaker.", notes, q)
    assert not agrees("The kitten is a real little troublemaker.", None, notes, q)
    assert carries_answer("The kitten is called Bramble.", notes, q)
    # no note holds a name: nothing is asked of the answer
    assert carries_answer("The kitten is tiny.", [user(1, "We got a kitten on Sunday.")], q)


def test_a_model_answer_must_give_the_notes_job():
    notes = [user(1, "I'm Hanne, hi"), user(3, "I work as a tram driver in Leipzig.")]
    q = "What do I do for a living?"
    assert not carries_answer("You do many things for a living, Hanne.", notes, q)
    assert carries_answer("You drive trams; you're a tram driver.", notes, q)
    assert carries_answer("Anything.", [user(1, "I'm Hanne, hi")], q)  # no job said: nothing to carry


def test_an_answer_without_the_value_falls_back_to_the_quote():
    notes = [user(3, "His name is Bramble and he's tiny."), user(1, "We got a kitten on Sunday.")]
    llm = FakeLLM(default="The kitten is a real little troublemaker.")
    text, _, how, used = grounded_answer(llm, lambda t: None, notes, "What's the kitten called?", 37, WORDS)
    assert how == "extractive" and text == "You told me (turn 3): His name is Bramble and he's tiny."
    assert [n.number for n in used] == [3]


def test_a_slot_the_user_spoke_of_is_about_their_world():
    told = turns("We took in a stray tabby.", "Her name is Clementine and she purrs a lot.")
    statements = [t for t in told if t.role == "user"]
    assert mentions("What's the cat called?", statements)  # "the cat": the slot, a name, is spoken of
    assert not mentions("What's the tallest mountain?", statements)
    picked = select_notes("What's the cat called?", told, Step([], (3, 1)))
    assert not picked.sure and picked.notes[0].number == 3  # a guess, the turn holding a name first


# ----------------------------------------------------------------------------- a correction's quote


@pytest.mark.parametrize(
    "text, quoted",
    [
        ("oh, it's gate B12 not B21", "oh, it's gate B12"),
        ("Actually it's Saturday, not Sunday, they moved it.", "Actually it's Saturday, they moved it."),
        ("I'm not sure it's Saturday", "I'm not sure it's Saturday"),  # no old value after "not"
        ("It's Ghent, not far from Brussels", "It's Ghent, not far from Brussels"),
        ("sorry, its £285 not £240, i misread the email", "sorry, its £285, i misread the email"),
    ],
)
def test_a_corrections_quote_leaves_out_the_old_value(text, quoted):
    assert without_old(text) == quoted


def test_the_quote_of_a_correction_that_replaced_a_note_names_only_the_new_value():
    told = turns("My gate is B21.", "actually it's gate B12 not B21")
    picked = select_notes("What's my gate?", told, Step([Cite(1, 0.6, 0.5)], (1, 3)))
    assert picked.required and picked.notes[0].number == 3
    llm = FakeLLM(default="Gate 7.")  # a value of its own: refused
    text, _, how, _ = grounded_answer(
        llm, lambda t: None, picked.notes, "What's my gate?", 37, WORDS, True, picked.required
    )
    assert how == "extractive" and text == "You told me (turn 3): actually it's gate B12"
