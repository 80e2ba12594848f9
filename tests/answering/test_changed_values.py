"""The asked attribute must be in the turn an answer stands on; a correction changes only the value it
changes; a question may name a thing by a related word; a relation nobody stated is not known.
Plain turns and a scripted retrieval result: the rules of ``notes.select_notes`` and the checks beside
it are tested, not a model's wording."""

from __future__ import annotations

from types import SimpleNamespace

from assistant.answering.agreement import agrees
from assistant.answering.asked import asked_slot
from assistant.answering.carries import carries_answer
from assistant.answering.kinds import has_kind
from assistant.answering.note import Note
from assistant.answering.notes import changes_asked, select_notes
from assistant.answering.referents import unmentioned_role
from assistant.answering.slots import fills

TRAIN = [
    "Hey, quick one",
    "my train to Bilbao leaves at 7:05 tomorrow from platform 12",
    "ugh, it's 7:50 actually, I misread the ticket",
    "thanks!",
]
CAR = [
    "hi!",
    "finally bought a car, a used green Fiat Panda, 2016 model",
    "paid 6400 euros for it",
    "my dad thinks I overpaid haha",
]


def turns(texts):
    """User turns numbered 1, 3, 5, ... (the assistant's replies between them are not in memory)."""
    return [SimpleNamespace(number=2 * i + 1, role="user", content=t, vector=None) for i, t in enumerate(texts)]


def result(cited=(), ranked=()):
    return SimpleNamespace(cited=[SimpleNamespace(turn=t, weight=1.0) for t in cited], ranked=list(ranked))


def picked(question, texts, cited=(), ranked=None, current=None):
    active = turns(texts)
    ranked = [c.number for c in reversed(active)] if ranked is None else ranked
    return select_notes(question, active, result(cited, ranked), current=current)


def quoted(notes):
    return notes.notes[0].content if notes.notes else None


# corrections change the value they change


def test_a_time_correction_is_not_the_answer_for_the_place_or_the_platform():
    for q in ("What platform is it?", "Where am I travelling to tomorrow?"):
        assert quoted(picked(q, TRAIN, cited=[5])) == TRAIN[1], q
    # it still answers the time it changed
    assert quoted(picked("What time does my train leave?", TRAIN, cited=[3])) == TRAIN[2]


def test_changes_asked_reads_what_the_correction_changes():
    assert not changes_asked(TRAIN[2], TRAIN[1], "place")
    assert not changes_asked(TRAIN[2], TRAIN[1], None, "What platform is it?")
    assert changes_asked(TRAIN[2], TRAIN[1], "clock")
    assert changes_asked("sorry, it's gate B9 actually", "my flight leaves from gate B7", None, "What gate is it?")
    # a dotted number after a label is the label's value, not a time
    room = ("Oops, it's room 5.02, 3.14 is being renovated.", "The team meeting tomorrow is in room 3.14.")
    assert changes_asked(*room, None, "Which room is the meeting in?")


def test_an_update_supersedes_the_old_job_and_city():
    job = ["hello again", "I work as a barista at a cafe in Hobart", "big news: I got promoted to manager yesterday!"]
    assert "manager" in quoted(picked("What's my job now?", job, cited=[3]))
    city = ["my brother lives in Quito", "hmm no sorry, he moved to Cuenca last year", "how's it going?"]
    assert "Cuenca" in quoted(picked("Where's my brother based?", city, cited=[1]))


# the asked attribute must be present


def test_a_bare_number_or_a_name_beside_a_role_is_no_place():
    assert not has_kind("my niece Amara just turned 7", "place")
    assert has_kind("she lives in Kraków", "place")
    assert picked("Which school does my niece go to?", ["my niece Amara just turned 7"], cited=[1]).unknown


def test_a_number_or_a_thing_is_no_person():
    assert not has_kind("the budget meeting is on Friday at 10", "name")
    assert not has_kind(CAR[1], "name")
    assert has_kind("my friend Aiko just started a new job", "name")
    assert picked("Who is coming to the budget meeting?", ["the budget meeting is on Friday at 10"], cited=[1]).unknown
    assert picked("Who did I buy the car from?", CAR, cited=[5]).unknown


def test_a_named_persons_job_comes_from_a_statement_about_them():
    texts = [
        "hi, I'm Hamza",
        "just got home from work, long day",
        "My neighbour Gideon lent me his ladder until Saturday.",
    ]
    assert picked("What does Gideon do for a living?", texts, cited=[5]).unknown
    with_job = [*texts, "Gideon works as a plumber"]
    assert "plumber" in quoted(picked("What does Gideon do for a living?", with_job, cited=[5]))


def test_a_job_statement_naming_the_job_comes_before_one_that_only_says_there_is_one():
    texts = ["hey", "my friend Aiko just started a new job", "she works as a nurse at St. Luke's"]
    assert "nurse" in quoted(picked("What does she do?", texts, ranked=[3, 5, 1]))


def test_a_label_modifier_must_be_said():
    seat = asked_slot("What's my seat number on the train?")
    assert not fills(TRAIN[1], seat)
    assert fills("my seat on the train is 42B", seat)
    assert picked("What's my seat number on the train?", TRAIN, cited=[5]).unknown
    plate = asked_slot("What's my car's licence plate?")
    assert not fills("my car is a silver Toyota Corolla", plate)
    assert fills("my car's plate is KX-449", plate)


def test_a_name_after_in_is_the_place_not_the_things_name():
    cafe = asked_slot("What's the name of the cafe?")
    assert not fills("I work as a barista at a cafe in Hobart", cafe)
    assert fills("I work as a barista at a cafe called Moonbean", cafe)


def test_the_answer_carries_the_colour_the_note_holds():
    notes = [Note(3, "user", CAR[1], 1.0, None)]
    assert not carries_answer("The colour of the sky is a classic example of imagery", notes, "What colour is it?")
    assert carries_answer("It is green.", notes, "What colour is it?")


# related words and pronouns


def test_a_pronoun_question_is_answered_from_memory():
    notes = picked("How much did it cost?", CAR, cited=[])
    assert notes.notes and "6400" in " ".join(n.content for n in notes.notes)
    assert not picked("What time is it?", CAR, cited=[]).notes  # the impersonal "it" is not a recall


def test_a_related_word_finds_the_statement():
    dinner = ["hey hey", "Booked a table at Osteria Nonna for 8 people on Friday", "Sorry, I meant 6 people"]
    assert "Friday" in quoted(picked("What day is the dinner?", dinner, cited=[]))
    car = picked("What vehicle did I get?", CAR, cited=[])
    assert quoted(car) == CAR[1]


# never stated


def test_a_role_nobody_mentioned_is_not_known_but_a_visit_is_no_role():
    assert unmentioned_role("What's the name of their teacher?", ["my twins Ludo and Imogen start school on Monday"])
    assert unmentioned_role("What does her husband do?", ["My sister Ana moves to Porto."])
    assert not unmentioned_role("What day is my doctor's appointment?", ["my annual checkup is on Wednesday"])
    assert unmentioned_role("What's my doctor's name?", ["my annual checkup is on Wednesday"])


def test_the_fact_of_the_questions_own_message_is_about_the_name_opening_it():
    texts = ["good evening", "my twins Ludo and Imogen start school on Monday"]
    current = SimpleNamespace(
        number=9, role="user", content="Ludo wants to be a train driver, by the way.", vector=None
    )
    assert quoted(picked("What does Ludo want to be?", texts, cited=[3], current=current)) == current.content


def test_the_model_may_not_put_words_in_the_users_mouth():
    notes = [
        Note(3, "user", "we adopted a greyhound named Biscuit last week", 1.0, None),
        Note(7, "user", "she's super lazy haha", 1.0, None),
    ]
    made_up = "The user's message is: \"I'm super lazy, I just love a greyhound named Biscuit.\""
    assert not agrees(made_up, None, notes, "What's my dog called?")
    assert agrees('You said "a greyhound named Biscuit".', None, notes, "What's my dog called?")
