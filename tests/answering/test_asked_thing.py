"""The asked thing must be what the quoted turn holds: a turn about the same topic holding another
attribute is no answer ("how much" needs an amount, "who <verb>s" a named doer, "what <head> did I
<verb>" the head or the verb); a role nobody mentioned is not known; "which relative" asks for a
name; "what food" for a food; "which year" is answered by the label's value ("year 6"). Plain turns
and a scripted retrieval result: the rules of ``notes.select_notes`` are tested, not a model's
wording."""

from __future__ import annotations

from assistant.answering.answerable import judge
from assistant.answering.kinds import amounts, expected_kind, has_kind
from assistant.answering.note import Note
from assistant.answering.quoting import extractive
from tests.answering.test_answerable import notes
from tests.answering.test_changed_values import picked, quoted

FLAT = ["hey", "we moved to Bratislava last month", "our new flat number is 12B, top floor and no lift lol"]
DENTIST = ["dentist appointment is on tuesday at 3:45", "my dentist is dr Okwuosa, she's super nice"]
BAND = [
    "my band Velvet Gravy has a gig at the Copper Kettle on saturday",
    "oh nvm the gig moved to the Brass Monkey",
    "i play bass, been playing since i was 15",
]
GRANDAD = ["hi there", "my grandad Thaddeus is turning 90 on sunday", "we're throwing a party at the Lamplighter pub"]
DOG = ["heyy", "im Rasmus btw. just adopted a retired greyhound, his name is Turnip", "he turned 11 last month"]
TRIP = [
    "my flight to Tbilisi is on the 14th",
    "oh wait sorry, its the 16th not the 14th",
    "im going with my cousin Zainab, first time in georgia",
]
JOB = [
    "i'm a junior developer at Quillmark",
    "well actually as of today i'm a senior developer!",
    "celebrating with sushi tonight",
]
TEACH = ["hello!!", "i teach year 4 at a school in Dunedin", "well, taught. they just moved me up to year 6 this term"]


def test_how_much_needs_an_amount_not_a_labels_number_or_a_time():
    assert expected_kind("How much rent do we pay for the new flat?") == "amount"
    assert amounts("paid 6400 euros for it") == ["6400"]
    assert amounts("our new flat number is 12B") == [] and amounts("on tuesday at 3:45") == []
    assert not has_kind("it's on the 14th at 6pm", "amount")
    assert picked("How much rent do we pay for the new flat?", FLAT, cited=[5]).unknown
    assert picked("How much will the dentist visit cost?", DENTIST, cited=[1, 3]).unknown
    # an amount said answers it
    paid = ["finally bought a car", "paid 6400 euros for it"]
    assert quoted(picked("How much did the car cost?", paid, cited=[3])) == paid[1]


PLUMBER = [
    "my kitchen sink is leaking again smh",
    "plumber is coming thursday at 10",
    "scratch that he just texted, its friday at 10 now",
]


def test_a_number_after_at_is_a_clock_time_not_an_amount():
    assert amounts(PLUMBER[2]) == [] and amounts(PLUMBER[1]) == []
    assert amounts("sold them at 10 euros each") == ["10"]  # money after it: an amount
    # the correction of when the plumber comes says no price: "how much" was never said
    told = notes(*PLUMBER)
    assert judge([told[2]], "how much is the plumber charging me?", told=told).how == "unknown"


def test_a_length_of_time_a_span_of_hours_or_a_labelled_number_is_no_amount():
    assert amounts("he's been doing it for 20 years") == [] and amounts("staying 6 nights for 400") == ["400"]
    assert amounts("hes coming friday between 8 and 10") == [] and amounts("tomorrow from 9 to 11") == []
    assert amounts("my allotment plot number is 27 btw") == [] and amounts("locker number: 45") == []
    assert amounts("rent is 950 a month") == ["950"] and amounts("it costs 20 a year") == ["20"]
    # the plumber's name and hours say no price: "how much" was never said
    told = notes("finally getting the boiler fixed", "plumber is called Rhys, hes coming friday between 8 and 10")
    assert judge([told[1]], "how much is the plumber charging for the boiler?", told=told).how == "unknown"


def test_who_does_needs_a_named_person_doing_it():
    assert picked("Who plays drums in my band?", BAND, cited=[3, 5]).unknown
    fed = ["My neighbour Farid feeds my cat Pickles when I travel.", "Lovely weather lately."]
    assert quoted(picked("Who feeds my cat when I'm away?", fed, cited=[1])) == fed[0]


def test_who_does_is_answered_by_a_named_person_beside_the_thing_done_in_other_words():
    taught = ["my coach Wendeline runs my piano lessons on thursdays", "the weather is grim"]
    got = picked("Who gives me my piano lessons?", taught, cited=[1])
    assert not got.unknown and quoted(got) == taught[0]
    assert picked("Who gives me my piano lessons?", ["i love the piano", "the weather is grim"], cited=[1]).unknown


def test_a_turn_about_the_topic_with_another_attribute_is_not_the_asked_thing():
    assert picked("What present did I get my grandad?", GRANDAD, cited=[3]).unknown
    got = [*GRANDAD, "got my grandad a wool scarf, he'll love it"]
    assert quoted(picked("What present did I get my grandad?", got, cited=[7])) == got[3]
    played = [*BAND]
    assert quoted(picked("Which instrument do I play in the band?", played, cited=[5])) == played[2]


def test_a_role_nobody_mentioned_is_not_known():
    assert picked("What's the name of my vet?", DOG, cited=[3]).unknown


def test_which_relative_asks_for_a_name_and_finds_the_cousin():
    assert expected_kind("Which relative is coming on the trip?") == "name"
    assert "Zainab" in quoted(picked("Which relative is coming on the trip?", TRIP, ranked=[5, 3, 1]))


def test_what_food_is_answered_by_a_food():
    assert expected_kind("What food am I having to mark the occasion?") == "food"
    assert quoted(picked("What food am I having to mark the occasion?", JOB, ranked=[3, 5, 1])) == JOB[2]


def test_which_year_is_answered_by_the_labels_value_and_its_correction():
    assert quoted(picked("Which year do I teach?", TEACH, cited=[3])) == TEACH[2]


def test_a_quote_for_a_question_keeps_the_sentences_that_speak_of_it():
    note = Note(3, "user", DOG[1], 1.0, None)
    text = extractive([note], question="What kind of dog do I have?")
    assert "greyhound" in text and "Rasmus" not in text
    assert "Rasmus" in extractive([note])
