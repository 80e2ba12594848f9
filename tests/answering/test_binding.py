"""A value answers only when it is the head's: a name bound to the thing it names, a job said as one."""

from __future__ import annotations

import numpy as np

from assistant.answering.answerable import judge
from assistant.answering.note import Note


def notes(*texts: str) -> list[Note]:
    return [Note(2 * i + 1, "user", t, 1.0) for i, t in enumerate(texts)]


def test_a_name_of_another_thing_or_a_place_does_not_name_the_head():
    said = notes("my choir is singing saturday at a church called St Brennan's")
    assert judge(said, "What's my choir called?", told=said).how == "unknown"
    said = notes("i'm Ottilie, i just got a job at a bakery in Lyon")
    assert judge(said, "What's the name of the bakery I work at?", told=said).how == "unknown"


def test_a_name_bound_to_the_head_answers():
    said = notes("my choir is called the Larkspur Singers and we meet on fridays")
    assert judge(said, "What's my choir called?", told=said).how == "answer"


def test_work_is_no_job_and_a_job_said_as_one_is():
    said = notes("my husband Casimir starts work early on tuesdays")
    assert judge(said, "What does my husband do for a living?", told=said).how == "unknown"
    said = notes("so im a welder at the shipyard, nights mostly")
    assert judge(said, "what's my occupation?", told=said).how == "answer"


def test_a_thing_said_only_as_a_one_is_not_which_one():
    said = notes("my uncle plays in an orchestra these days")
    assert judge(said, "Which orchestra does my uncle play in?", told=said).how == "unknown"


def test_a_name_with_digits_after_called_names_the_head():
    said = notes("the shared drive is called Archive2024B now")
    got = judge(said, "What's the shared drive called?", told=said)
    assert got.how == "answer" and "archive2024b" in got.values


def test_a_name_that_holds_the_thing_word_names_it():
    said = notes("we booked a table at the Trattoria Lucca for eight")
    got = judge(said, "What's the trattoria called?", told=said)
    assert got.how == "answer" and "lucca" in got.values


def test_the_rest_of_the_head_phrase_sits_between_thing_and_name():
    said = notes("my head of year Philippa wants the reports by friday")
    assert judge(said, "who's my head of year?", told=said).how == "answer"


def test_who_has_a_thing_is_answered_by_a_person_not_the_things_name():
    said = notes("I left my camera with my cousin Dorotea over the holidays")
    assert judge(said, "who has my camera?", told=said).how == "answer"
    said = notes("I left my camera at a shop called Lens & Co for repair")
    assert judge(said, "who has my camera?", told=said).how != "answer"


def test_a_call_back_to_the_thing_names_it_by_the_opening_name():
    said = notes("Biscuit chewed through the charger cable, that dog eats everything.")
    got = judge(said, "What's my dog called?", told=said)
    assert got.how == "answer" and "biscuit" in got.values
    said = notes("Anyway, that dog eats everything.")
    assert judge(said, "What's my dog called?", told=said).how != "answer"


def test_another_persons_role_is_not_close_enough_to_the_one_asked():
    said = notes("my aunt Rosalind sends a card every year")

    def close(text: str) -> np.ndarray:  # "aunt" and "uncle" one vector, as MiniLM puts them near
        v = np.zeros(8, dtype=np.float32)
        v[0 if text in ("aunt", "uncle") else hash(text) % 7 + 1] = 1.0
        return v

    assert judge(said, "What's my uncle's name?", embed=close, told=said).how != "answer"
    assert judge(said, "What's my aunt's name?", embed=close, told=said).how == "answer"


def test_a_place_of_the_thing_between_it_and_its_name_still_binds():
    said = notes("the wifi at my flat is PotatoNet_5G and the password's on the fridge.")
    got = judge(said, "what's the network called?", told=said)
    assert got.how == "answer" and "potatonet_5g" in got.values
