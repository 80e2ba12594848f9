"""Who does a thing for the user, said by role ("who owns my flat?" and "landlord is a guy called mr
haddad"); the model's text that ties a value to a word of the question nobody said ("You're making a
lasagne for dessert." when only a lasagne and a salad were spoken of); dates: a birthday's ordinal,
a correction's new day first, what "it got moved" speaks of; a value taken back in a sentence of its
own ("Sorry, I misread the ticket, it's 09:30.")."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.answering.answer import grounded_answer
from assistant.answering.answerable import judge, ties_unsaid
from assistant.answering.binding import another_of
from assistant.answering.doing import no_doer
from assistant.answering.heads import Similar, asked_for, says_head
from assistant.answering.kinds import has_kind, kind_beyond
from assistant.answering.note import Note
from assistant.answering.quoting import quote_turn
from assistant.answering.referents import holds_code, referent
from assistant.answering.selffix import self_fixed
from assistant.answering.slots import asked_slot, fills
from bench.fakes.llm import FakeLLM

WORDS = lambda text: len(text.split())  # noqa: E731  (a token counter: one token per word)


def notes(*texts: str) -> list[Note]:
    return [Note(2 * i + 1, "user", t, 1.0) for i, t in enumerate(texts)]


# ----------------------------------------------------------------------------- the doer by role


@pytest.mark.parametrize(
    "question, said",
    [
        ("who owns my flat?", ["moved into the new flat", "landlord is a guy called Mr Haddad, seems nice enough"]),
        ("who am i renting from?", ["moving in this weekend!!", "landlord is a Mr Achterberg, seems nice enough"]),
        ("who's training me?", ["signed up for a half marathon", "my coach is called Bongani, he's tough"]),
        ("who services my car?", ["the mechanic is Tully's Auto on Birch rd"]),
        ("who runs things at the allotment?", ["got an allotment finally", "the secretary is a lady called Ingrid"]),
    ],
)
def test_the_doer_of_the_verb_said_by_role_answers_who(question, said):
    told = notes(*said)
    verdict = judge(told, question, None, (), told)
    assert verdict.how == "answer"
    assert verdict.clauses and all(c in said[-1] for c in verdict.clauses)
    assert not no_doer(question, told)


def test_a_role_is_no_doer_of_another_verb():
    # a coach trains; the question asks who cleans
    told = notes("my coach is called Bongani, he's tough")
    assert no_doer("who cleans my flat?", told)


def test_the_doers_roles_count_only_for_a_name():
    # "where do I run on sundays?" asks a place: a manager said somewhere is not the run
    asked = asked_for("where do i run on sundays?")
    assert asked is not None and asked.kind == "place"
    assert not says_head("my manager lives in Leeds", asked, Similar(None))
    assert says_head("my manager is Priya", asked_for("who runs the team?"), Similar(None))


# ----------------------------------------------------------------------------- the model's unsaid word


def test_a_word_of_the_question_no_statement_says_is_not_the_models_to_tie():
    said = notes("thinking of doing a big lasagne and a salad")
    assert ties_unsaid("You're making a lasagne for dessert.", "what am i making for dessert?", said)
    assert not ties_unsaid("You're making a big lasagne and a salad.", "what am i making for dinner?", said)
    # the question's words that a statement says are the model's to repeat
    lukas = notes("My best friend Lukas lives in Vienna.")
    assert not ties_unsaid("Lukas lives in Vienna.", "Where does Lukas live?", lukas)


def test_the_models_dessert_falls_back_to_the_notes_own_words():
    said = notes(
        "having friends over for dinner on friday",
        "thinking of doing a big lasagne and a salad",
        "oh and Tomasz is coeliac so everything has to be gluten free",
    )
    llm = FakeLLM(default="You're making a lasagne for dessert.")
    text, _, how, _ = grounded_answer(
        llm, lambda t: None, said[1:2], "what am i making for dessert?", 40, WORDS, told=said
    )
    assert "for dessert" not in text
    assert how == "extractive"


# ----------------------------------------------------------------------------- dates


def test_a_corrections_note_comes_before_another_answering_note():
    said = notes(
        "my son Dmitri has his chemistry exam coming up",
        "its on the 22nd in room 3B",
        "actually the school just emailed, they moved it to the 24th",
        "he's been studying every night, im so proud of him",
    )
    vectors = {"exam": [1.0, 0.1], "studying": [0.9, 0.2]}  # "studying" says the exam, by the embeddings

    def embed(text):
        v = np.asarray(vectors.get(text, [0.0, 1.0]), dtype=np.float32)
        return v / np.linalg.norm(v)

    cited = [said[3], said[2], said[0]]
    verdict = judge(cited, "when is dmitri's chemistry exam?", embed, {"24th"}, said)
    assert verdict.how == "answer" and verdict.notes[0].content == said[2].content


@pytest.mark.parametrize(
    "text, kind, holds",
    [
        # an ordinal before a birthday or an anniversary is an age, not a date
        ("planning my mom's 60th birthday party!!", "time", False),
        ("it's their 25th anniversary next month", "time", True),  # "next month" is the when
        ("the 25th anniversary dinner", "time", False),
        ("my 30th birthday is on the 5th", "time", True),
        ("its on the 22nd", "time", True),
        # a house number and its street is a place, typed in lower case too
        ("he lives round the corner at 22 orchard close", "place", True),
        ("my flat is at 4b Calder Street", "place", True),
        ("we need 2 more chairs", "place", False),
        ("it's 14 days away", "place", False),
    ],
)
def test_a_text_holds_a_value_of_the_kind(text, kind, holds):
    assert has_kind(text, kind) is holds


def test_what_was_moved_to_another_day_is_the_statement_that_had_a_day():
    told = notes(
        "big presentation for the board on friday, my manager Fatima is presenting with me",
        "i barely slept",
        "actually it got moved to monday, Fatima just messaged me",
    )
    assert referent(told[2], told) is told[0]
    # people who move house had no day
    family = notes("my parents are retired now", "they moved to Leeds last year")
    assert referent(family[1], family) is family[0]


# ----------------------------------------------------------------------------- taken back in a sentence of its own


@pytest.mark.parametrize(
    "text",
    ["My flight is at 9:40. Actually, I'm a bit nervous.", "My flight is at 9:40. Sorry, I'm all over the place."],
)
def test_a_sorry_or_actually_that_gives_no_value_takes_nothing_back(text):
    assert self_fixed(text) is None


def test_asked_for_the_number_a_turn_takes_back_the_fix_alone_answers():
    text = "My train leaves King's Cross at 08:30 on Tuesday. Sorry, I misread the ticket, it's 09:30."
    timed = quote_turn(Note(3, "user", text, 1.0), question="What time does my train leave on Tuesday?")
    assert "09:30" in timed and "08:30" not in timed
    # asked for the station, the part that names it stands
    assert "King's Cross" in quote_turn(Note(3, "user", text, 1.0), question="Which station does my train leave from?")
    # the whole turn fits the cap: the answer still quotes the fix alone (seen driving the app)
    said = [Note(3, "user", text, 1.0)]
    answer, _, how, _ = grounded_answer(
        FakeLLM(), lambda t: None, said, "What time does my train leave on Tuesday?", 80, WORDS
    )
    assert how == "extractive" and "09:30" in answer and "08:30" not in answer


def test_the_other_one_of_a_pair_is_a_neighbouring_thing_though_the_vectors_are_close():
    # an embedding that puts "front" right beside "back"
    def embed(text):
        v = np.asarray([1.0, 0.05] if text in ("front", "back") else [0.0, 1.0], dtype=np.float32)
        return v / np.linalg.norm(v)

    question = "Where do I keep the spare key for the back door?"
    assert another_of("The spare front door key is in the blue tin on top of the fridge.", question, Similar(embed))
    assert not another_of("The spare back door key is under the mat.", question, Similar(embed))


def test_the_hour_of_something_on_another_day_is_no_answer():
    said = notes(
        "I'm travelling up to Edinburgh next week for a conference.",
        "My train leaves King's Cross at 08:30 on Tuesday.",
    )
    assert judge(said, "What time is my return train on Friday?", None, (), said).how != "answer"
    assert judge(said, "What time does my train leave on Tuesday?", None, (), said).how == "answer"


def test_a_stretch_of_time_is_no_date():
    asked = "what date is the party?"
    assert not kind_beyond("my nan's turning 90 next month and we're doing a surprise party", "time", asked)
    assert kind_beyond("the party is on the 22nd", "time", asked)
    assert kind_beyond("my nan's turning 90 next month", "time", "when is the party?")  # a when, though


def test_a_name_after_in_names_the_thing_asked_of_when_that_thing_follows_it():
    question = "what's his class called?"
    slot = asked_slot(question)
    assert fills("oh and they've put him in Hedgehogs class.", slot, question)
    # a name after "in" with no such thing after it is the place's
    assert not fills("his class went on a trip to Whitby", slot, question)


def test_the_wifis_word_and_digits_are_its_password():
    question = "what password should i pass on to her for the internet?"
    assert holds_code("oh and if she needs the wifi it's fernhill22.", question)
    assert has_kind("oh and if she needs the wifi it's fernhill22.", "code")
    assert not holds_code("the wifi is down again", question)


def test_the_questions_own_fact_stays_before_a_correction_of_another_thing():
    said = notes(
        "learning portuguese for my trip to Recife in march",
        "update: the tour company changed the itinerary, it's Fortaleza now",
        "my tutor Anselmo does lessons with me on tuesday evenings.",
    )
    question = "who gives me my portuguese lessons?"
    verdict = judge([said[2], said[1]], question, None, {"fortaleza"}, said, own=said[2].number)
    assert verdict.how == "answer" and verdict.notes[0].number == said[2].number


def test_a_time_after_at_is_one_time_and_no_number():
    said = "My train leaves King's Cross at 08:30 on Tuesday."
    assert not has_kind(said, "number") and has_kind(said, "clock")
    told = notes(said)
    assert judge(told, "What's my seat number on the plane?", None, (), told).how == "unknown"
