"""What people say in one breath: a value taken back in the message that said it, a value given
beside the question that asks for it, a thing named and its details given in the next message, a
number that is an hour or a price, a time word after a pet that is no name, a "no" the model says
where the notes do not, a fact the question's own message gives in other words than it asks, the
event's other end, and whose question it is when it says no "my"."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.answering.agreement import agrees
from assistant.answering.answer import grounded_answer
from assistant.answering.answerable import judge
from assistant.answering.corrections import CORRECTION
from assistant.answering.kinds import amounts, expected_kind, kind_beyond
from assistant.answering.message import about_the_user, is_question, split
from assistant.answering.note import Note
from assistant.answering.notes import mentions, select_notes
from assistant.answering.quoting import quote_turn
from assistant.answering.recase import named
from assistant.answering.selffix import self_fixed
from bench.fakes.llm import FakeLLM
from tests.answering.conversation import Step

WORDS = lambda text: len(text.split())  # noqa: E731  (a token counter: one token per word)


def notes(*texts: str) -> list[Note]:
    return [Note(2 * i + 1, "user", t, 1.0) for i, t in enumerate(texts)]


# ----------------------------------------------------------------------------- taken back


@pytest.mark.parametrize(
    "text, kept, gone",
    [
        ("he quoted me £340 for new pads. no sorry, £430, i misread it", "£430", "340"),
        ("my phone contract is $38 a month - no wait, they raised it, it's $42 now", "$42", "38"),
        ("dessert is a lemon tart. oh wait, we're doing a crumble instead", "crumble", "tart"),
        ("it's on the 29th, and it's 35 a head. no hang on, 38 a head", "38", "35"),
        ("the flight is at 6, i mean 7", "7", "6"),
        ("my dentist is Dr Lindqvist, no sorry, Dr Amani", "Amani", "Lindqvist"),  # a name for a name
        ("dentist is tuesday at 10... wait no, wednesday", "wednesday", "tuesday"),
        # taken back in a sentence of its own
        ("The appointment is at 2:30pm. Oh, hang on, the confirmation text says 1:30pm.", "1:30pm", "2:30"),
        ("The policy number is HM-448190. Apologies, I mistyped that: it's HM-448109.", "HM-448109", "448190"),
        ("I need to be there for 8:45. Actually, I've just checked the email again and it says 9:15.", "9:15", "8:45"),
        ("the key safe code is 1906... oh hang on no it's 1609", "1609", "1906"),
        ("My hospital number is RGH-0098765; my mistake, it's RGH-0098756.", "RGH-0098756", "0098765"),
        ("The visit was booked for 9.30, but correction: they have moved it to 8.45.", "8.45", "9.30"),
        ("its at the church hall at 2.20, typo sorry, meant 2.50", "2.50", "2.20"),
        ("ordered 40 burgers from the butcher, actually ignore that number, i upped it to 60", "60", "40"),
        ("sofa comes friday!! its the big grey corner one, well it was, i switched it to teal", "teal", "grey"),
        # straight after the value, no mark; after a dash
        ("shes expecting a parcel, its coming tuesday no wait wednesday, i mix them up", "wednesday", "tuesday"),
        ("they quoted £45 scratch that £65, they need to put a new chain on too", "£65", "45"),
        ("It's for my tablets, amlodipine 5mg \u2014 correction, it's 10mg now.", "10mg", "5mg"),
    ],
)
def test_a_turn_that_takes_a_value_back_is_quoted_without_it(text, kept, gone):
    quote = quote_turn(Note(5, "user", text, 1.0))
    assert quote.startswith("You told me (turn 5): ") and kept in quote and gone not in quote


def test_only_the_part_just_before_the_cue_is_taken_back():
    fixed = self_fixed("it's on the 29th, and it's 35 a head. no hang on, 38 a head")
    assert "29th" in fixed.text and "35" not in fixed.text and fixed.stale == {"35"}


@pytest.mark.parametrize(
    "text",
    [
        "no wait, its thursday",  # a correction of an earlier turn: nothing before the cue
        "wait for me at the station",
        "sorry to bother you, my dentist is Dr Okafor",
        "ok sorry",
        "i cant wait, the party is at 8",
        "pick me up at 6, wait for me at the gate",  # "wait" in a sentence of its own
        "thanks, sorry for the spam",
        # the part says a name beside the number or day corrected: Alfama and Mateo stand
        "Staying at an Airbnb in Alfama for 6 nights... actually no, 8 nights, I extended it",
        "my son Mateo has his school play on the 22nd, no sorry, the 23rd",
        "the party was at 7, it was fun",  # what it was, and nothing changed it
        "we went to the lake, it was, we think, the best day",
        "see you monday i mean it",
    ],
)
def test_a_turn_that_takes_nothing_back_is_left_as_it_is(text):
    assert self_fixed(text) is None
    assert quote_turn(Note(3, "user", text, 1.0)).endswith(text)


def test_the_models_text_may_not_give_the_value_taken_back():
    said = notes("my phone contract is $38 a month - no wait, they raised it, it's $42 now")
    llm = FakeLLM(default="Your phone contract is $38 a month.")
    text, _, how, _ = grounded_answer(llm, lambda t: None, said, "how much is my phone contract?", 40, WORDS)
    assert how == "extractive" and "$42" in text and "38" not in text


def test_the_models_text_cut_short_at_a_title_is_not_the_answer():
    said = notes("landlord is a guy called Mr Haddad, seems nice enough")
    llm = FakeLLM(default="Your landlord is Mr")
    text, _, how, _ = grounded_answer(llm, lambda t: None, said, "who is my landlord?", 40, WORDS)
    assert how == "extractive" and "Haddad" in text


# ----------------------------------------------------------------------------- given beside the question


@pytest.mark.parametrize(
    "message, value",
    [
        ("the price was £1,249 btw, how much is the sofa?", "1,249"),
        ("the goal is 6000 by december. how much am i trying to save?", "6000"),
    ],
)
def test_a_value_of_the_asked_kind_beside_the_question_is_its_fact(message, value):
    parts = split(message)
    assert value in parts.stated and value not in parts.asked


def test_a_remark_beside_a_question_states_nothing_when_it_gives_no_value_of_the_kind():
    assert split("so bored lol. how much is the sofa?").stated == ""


def test_a_thing_named_beside_a_question_asking_which_is_its_fact():
    parts = split("the letting agent is Brightmoor Lettings, which agency is handling the flat?")
    assert "Brightmoor Lettings" in parts.stated and parts.asked == "which agency is handling the flat?"
    assert split("so tired lol, which agency is handling the flat?").stated == ""


def test_a_value_given_in_the_questions_own_message_answers_in_other_words():
    told = notes("got tickets for the Lumen Drift concert!!", "its at the Harbour Arena on 18 march")
    own = Note(9, "user", "my cousin Rohan is coming with me.", 1.0)
    question = "who did i say is coming to the concert?"
    # the earlier turns say the concert's words; the message's own statement says who, in other words
    assert judge([own, *reversed(told)], question, told=[*told, own]).notes[0].number != 9
    v = judge([own, *reversed(told)], question, told=[*told, own], own=9)
    assert v.how == "answer" and v.notes[0].number == 9


def test_a_name_opening_the_messages_own_statement_is_someone_the_user_spoke_of():
    own = Note(11, "user", "Rania is vegan btw.", 1.0)
    picked = select_notes("what diet does Rania follow?", [], Step([], ()), current=own)
    assert not picked.unknown and [n.number for n in picked.notes] == [11]


# ----------------------------------------------------------------------------- what kind of value


def test_the_kind_said_first_is_the_kind_asked():
    assert expected_kind("what's the reference number for the boiler job?") == "number"
    assert expected_kind("how much is the brake job going to cost me?") == "amount"
    assert expected_kind("what's my new job?") == "job"
    assert expected_kind("what price did i put the macbook up for?") == "amount"
    assert expected_kind("who do i pay the deposit to?") == "name"


def test_a_price_with_pence_is_no_clock_time():
    assert amounts("btw the fee is 88.50") == ["88.50"]
    assert amounts("the train leaves at 8.50") == []


def test_a_range_of_weeks_is_no_amount():
    assert amounts("delivery is 6-8 weeks which is annoying") == []
    assert amounts("it was 6 or 7 quid") == ["6", "7"]


@pytest.mark.parametrize(
    "text, length",
    [
        ("its plot 27 at Fernhill allotments", False),
        ("i have 2 kids", False),
        ("been on the list for 3 years", True),
        ("lessons are 30 minutes, 28 dollars each", True),
        ("half an hour", True),
        ("in the shop till friday", True),
    ],
)
def test_how_long_asks_for_a_length_not_a_bare_number(text, length):
    assert kind_beyond(text, "number", "how long has he been on the waiting list?") == length


def test_an_hour_a_day_is_bounded_by_is_no_amount():
    assert amounts("i can pick it up friday after 4") == []
    assert amounts("saturday around 30 kids are coming") == ["30"]


# ----------------------------------------------------------------------------- named, then detailed


def test_a_thing_named_then_detailed_in_the_next_message_is_no_sign_it_was_never_said():
    told = notes("signed up for a pottery class finally!!", "teacher is Esperanza and its on wednesdays")
    v = judge(told[1:], "what day is my pottery class?", told=told)
    assert v.how != "unknown" and v.notes[0].number == 3


def test_a_thing_named_and_never_detailed_is_still_unknown():
    told = notes("the insurance quote is killing me though", "anyway the weather is grim")
    assert judge(told[1:], "how much is my insurance quote?", told=told).how == "unknown"


def test_a_time_word_after_a_pet_is_no_name():
    assert named("i adopted a cat last weekend") == set()
    assert named("my cat mochi is fat") == {"mochi"}


# ----------------------------------------------------------------------------- the model's "no"


def test_the_models_text_may_not_say_no_where_the_notes_do_not():
    said = notes("I keep my bicycle in the garage next to the red toolbox.")
    q = "Where do I keep my bicycle?"
    assert not agrees("You can't keep your bicycle in the garage next to the red toolbox.", None, said, q)
    assert agrees("You keep your bicycle in the garage next to the red toolbox.", None, said, q)
    # a "not" the user said is theirs to repeat
    vegan = notes("i don't eat meat, i'm vegan")
    assert agrees("You don't eat meat; you're vegan.", None, vegan, "do i eat meat?")


# ----------------------------------------------------------------------------- the other end


@pytest.mark.parametrize(
    "told, question",
    [
        ("flight lands at 7:20 in the morning local time", "what time does our flight take off?"),
        ("pick up from nursery is at 5:30", "what time is drop off at nursery?"),
        ("we check out on the 14th", "when do we check in?"),
        ("the airline moved it, our flight lands at 12:55 now", "what time does our flight home leave?"),
        ("i hired a car thru swiftwheels, pickup thursday at 9", "what time do i have to drop the car back"),
    ],
)
def test_a_value_of_the_events_other_end_is_no_answer(told, question):
    said = notes("planning a trip in april!!", told)
    assert judge(said[1:], question, told=said).how == "unknown"


def test_a_corrections_new_value_of_the_other_end_is_no_answer():
    said = notes("raj picks me up at 7.40 outside the co-op", "change of plan, pickup is 7.25 from now on")
    question = "what time does raj drop me back home in the evening?"
    assert judge(said[::-1], question, required={"25"}, told=said).how != "answer"


@pytest.mark.parametrize(
    "told, question",
    [
        ("flight lands at 7:20 in the morning local time", "what time does our flight land?"),
        ("pick up from nursery is at 5:30", "what time is pick up?"),
    ],
)
def test_a_value_of_the_asked_end_answers(told, question):
    said = notes("planning a trip in april!!", told)
    assert judge(said[1:], question, told=said).how == "answer"


# ----------------------------------------------------------------------------- whose question it is


def test_he_or_she_asks_after_someone_the_user_spoke_of_whatever_chatter_came_between():
    told = notes(
        "my dog mochi is a shiba inu, shes kind of a diva tbh",
        "anyway what do u think is a good thing to cook after a night shift lol",
        "i like eggs",
        "and toast",
    )
    assert mentions("what breed is she?", told)
    assert mentions("what company is he from again?", notes("the repair guy is called Kwame, hes from HeatRight"))
    assert not mentions("what breed is she?", notes("i like eggs", "and toast"))


def test_im_typed_without_its_apostrophe_speaks_of_the_user():
    assert about_the_user("whats the place im staying at called?")
    assert not about_the_user("whats the place called?")


def test_a_question_close_to_a_statement_of_the_users_asks_about_it():
    told = notes("its with dr halvorsen at the clinic on birch st")
    vectors = {
        "where's the dental office?": [0.6, 0.8],
        told[0].content: [0.8, 0.6],
        "how far is the moon?": [0.0, -1.0],
    }
    embed = lambda text: np.array(vectors[text])  # noqa: E731
    assert mentions("where's the dental office?", told, embed)  # cosine 0.96
    assert not mentions("how far is the moon?", told, embed)  # cosine -0.6
    assert not mentions("where's the dental office?", told)  # no vectors: the words alone say nothing


def test_a_value_bound_to_another_label_is_no_answer():
    told = notes("my gate is C22, boarding at 6:05", "oh wait they just changed it on the board, gate is now D7")
    # the correction carries the new gate: it answers for the gate, never for the seat
    assert judge(told[1:], "what's my seat number on the plane?", required={"d7"}, told=told).how == "unknown"
    assert judge(told[1:], "what's my gate number?", required={"d7"}, told=told).how == "answer"


# ----------------------------------------------------------------------------- said in a hurry


@pytest.mark.parametrize(
    "text, kept, gone",
    [
        ("its thursday at 10:15 no wait sorry 11:40, i misread the text", "11:40", "10:15"),
        ("tracking number is QX48817 no sorry QX48871, i cant read my own writing lol", "QX48871", "QX48817"),
        ("we're staying three nights, oh no actually four since rhys can only come friday", "four", "three"),
    ],
)
def test_a_value_taken_back_with_no_mark_before_the_cue_is_left_out(text, kept, gone):
    quote = quote_turn(Note(5, "user", text, 1.0))
    assert kept in quote and gone not in quote


def test_no_wait_with_no_value_before_it_takes_nothing_back():
    assert self_fixed("there is no wait at the bakery on sundays") is None


def test_sorry_i_mean_in_the_next_message_corrects():
    said = notes(
        "took it to the shop, they said it'll be ready wednesday",
        "sorry i mean thursday, wednesday is when the tubes come",
    )
    assert CORRECTION.search(said[1].content) and not CORRECTION.search("it was ok i mean whatever")


def test_a_question_before_a_question_is_no_fact():
    assert split("where do we practise, what road is it on?").stated == ""


def test_a_question_with_a_remark_after_it_asks():
    message = "the plumber is gareth pryce, he just texted. what was his surname again? want to save him in my phone"
    assert is_question(message) and split(message).asked == "what was his surname again?"
    assert not is_question("i got the job. how cool is that? so happy")


def test_a_surname_is_a_name():
    assert expected_kind("whats her surname, the woman teaching my boy piano?") == "name"


def test_a_name_given_by_another_pronoun_is_not_the_one_asked():
    said = notes("booked her in at the vets, the vet is a guy called Mr Adeyemi", "her name's Clover btw, shes a lop")
    v = judge(said[::-1], "what was his name, the vet looking at her?", told=said)
    assert v.how == "answer" and v.notes[0].number == 1


def test_a_titled_name_beside_the_role_answers_who_it_is():
    said = notes("got an emergency appt at the dentist on Harrow Road, its with a dr Okafor, she's meant to be good")
    v = judge(said, "whats her name again, the dentist whos seeing me?", told=said)
    assert v.how == "answer" and any("Okafor" in c for c in v.clauses)
