"""A value answers only when it is the head's: a name bound to the thing it names, a job said as one."""

from __future__ import annotations

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
