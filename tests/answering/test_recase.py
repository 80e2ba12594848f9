"""Names typed in lower case, capitalised for the answer rules (``assistant.answering.recase``)."""

from dataclasses import dataclass

import pytest

from assistant.answering.kinds import has_kind
from assistant.answering.recase import named, recase, recased_turns, restore


@dataclass(frozen=True)
class Turn:
    number: int
    role: str
    content: str


@pytest.mark.parametrize(
    "text, names",
    [
        ("my roommate dariusz makes amazing dumplings", {"dariusz"}),
        ("my brother james is 30", {"james"}),
        ("my teacher is a guy called yusuf", {"yusuf"}),
        ("appointment tuesday with dr okonkwo", {"okonkwo"}),
        ("the bakery is called pan de oro, its in cuenca", {"pan", "cuenca"}),
        ("im flying to ljubljana on the 14th", {"ljubljana"}),
        ("btw the club secretary is bev hollis.", {"bev", "hollis"}),
    ],
)
def test_a_name_is_known_by_its_place(text, names):
    assert named(text) == names


@pytest.mark.parametrize(
    "text",
    [
        "my wife works in finance",
        "my sister lives in town",
        "my friend told me to go to bed",
        "nice to meet you, i want to learn",
        "my son is in year 4",
        "listening to music at home",
        "we moved it to the 28th bc my aunt cant make the 21st",
        "the vet hasnt rung back yet",
        "next one is wednesday, he picks me up from outside the library",
    ],
)
def test_common_words_after_a_role_or_preposition_are_no_names(text):
    assert named(text) == set()


def test_recasing_changes_only_the_names_letter_for_letter():
    text = "my flatmate siobhan makes amazing pierogi"
    cased = recase(text, {"siobhan"})
    assert cased == "my flatmate Siobhan makes amazing pierogi"
    assert len(cased) == len(text)
    assert restore(cased, {"siobhan"}) == text


def test_a_lower_case_name_then_counts_as_a_name_for_the_rules():
    text = "my flatmate siobhan makes amazing pierogi"
    assert not has_kind(text.replace("my flatmate ", "then "), "name")
    (turn,), names = recased_turns([Turn(3, "user", text)])
    assert has_kind(turn.content, "name") and names == {"siobhan"}


def test_the_assistants_turns_and_turns_without_names_are_left_as_they_are():
    turns = [Turn(1, "user", "hello there"), Turn(2, "assistant", "my friend bob says hi")]
    out, names = recased_turns(turns)
    assert out == turns and names == set()


def test_a_name_from_one_turn_is_capitalised_in_the_others():
    turns = [Turn(1, "user", "my cousin zainab is coming"), Turn(3, "user", "zainab loves hiking")]
    out, _ = recased_turns(turns, "where does zainab live?")
    assert [t.content for t in out] == ["my cousin Zainab is coming", "Zainab loves hiking"]


def test_a_name_said_called_the_and_a_venue_name_are_capitalised_but_a_call_is_not():
    assert named("i sing alto in a choir called the harbour voices") == {"harbour", "voices"}
    assert named("a pub called the crooked lantern on friday") == {"crooked", "lantern"}
    assert named("i called the bank today") == set()
    assert {"greenfield", "primary"} <= named("my nephew just started at greenfield primary")
    assert named("he goes to the local school") == set()


@pytest.mark.parametrize(
    "text, name",
    [
        ("my hairdresser siobhán is great", "siobhán"),
        ("my sister zoë is visiting from lisbon", "zoë"),
        ("we moved to málaga last spring", "málaga"),
    ],
)
def test_a_name_in_letters_beyond_a_to_z_is_a_name(text, name):
    assert name in named(text)
    shown = recase(text, {name})
    assert name.capitalize() in shown and restore(shown, {name}) == text
    assert has_kind(recase("my hairdresser siobhán is great", {"siobhán"}), "name")


def test_a_first_name_and_surname_said_as_who_a_role_is_are_names():
    assert named("my manager is priya raman, she seems nice") == {"priya", "raman"}
    # one word after "is" may say how the person is, and an intensifier opens no name
    assert named("my dad is sick") == set() and named("my boss is super nice.") == set()
    boss = [Turn(1, "user", "first day at the new job"), Turn(3, "user", "my manager is priya raman, she seems nice")]
    shown, typed = recased_turns(boss, "who's my boss?")
    assert typed == {"priya", "raman"} and has_kind(shown[1].content, "name")


@pytest.mark.parametrize(
    "text, names",
    [
        ("my coach is bongani, he's tough", {"bongani"}),
        ("the walker is priya, she comes at noon", {"priya"}),
        ("our vet is siobhan", {"siobhan"}),
        # a word of English says how the person is
        ("my coach is tough, he shouts", set()),
        ("my boss is away this week", set()),
        ("my dentist is great and cheap", set()),
    ],
)
def test_one_rare_word_said_as_who_a_role_is_is_a_name(text, names):
    assert named(text) == names


def test_a_street_said_short_after_on_is_a_place_name():
    assert named("my niece's party is at bounce house on elm st") >= {"elm", "st"}
    assert named("see you on monday at the gym") == set() and named("we live on the main road") == set()


def test_a_question_says_a_lower_case_name_as_its_possessive_without_the_apostrophe():
    assert recase("whats the tracking number for rashidas parcel", {"rashida"}, owners=True) == (
        "whats the tracking number for Rashida's parcel"
    )
    # a turn, which is quoted, keeps the user's letters but the capital
    assert recase("rashidas parcel came", {"rashida"}) == "rashidas parcel came"
