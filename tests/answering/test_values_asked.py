"""What a question asks for and which words of a turn give it: a name bound to the nearer noun, counts
said in words and partitives, amounts with a unit, a stay said by its end, "call" as a noun, a
correction in its own message, and a reply to a question that narrates the user. Hand-made
sentences, none of them a probe's; scripted model (FakeLLM)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from assistant.answering.answerable import asked_for, judge
from assistant.answering.asked import asked_slot
from assistant.answering.corrections import uncorrected
from assistant.answering.kinds import expected_kind, kind_beyond
from assistant.answering.note import Note
from assistant.answering.replies import statement_reply
from assistant.answering.slots import fills
from bench.fakes.llm import FakeLLM
from tests.answering.conversation import turns

WORDS = lambda text: len(text.split())  # noqa: E731  (one token per word)


@pytest.mark.parametrize(
    "question, text, filled",
    [
        # the asked owner comes between "my X is" and the name: the name is the coach's
        ("what's my coach's name?", "my swim club is on fridays w a coach named Oyelowo", True),
        ("what's my coach's name?", "my swim club is called Otters", False),
        ("What's my favourite film?", "my favourite band is Khruangbin", False),
    ],
)
def test_a_name_is_bound_to_the_nearer_noun(question, text, filled):
    assert fills(text, asked_slot(question), question) is filled


@pytest.mark.parametrize(
    "question, text, holds",
    [
        ("how many times a week do i swim?", "coach says swim three times a week", True),
        ("how many times a day do i feed the fish?", "the fish get fed twice a day", True),
        ("how many guests are coming?", "two of them are bringing kids", False),  # which ones, not how many
        ("how many guests are coming?", "we're expecting 12 guests", True),
        ("how much ibuprofen can i take?", "the gp said 400mg at most", True),
        ("how much water should i drink?", "aim for 2 litres a day", True),
        ("how long is my bike at the repair shop?", "the bike stays at the shop till thursday", True),
        ("how long is my bike at the repair shop?", "the bike is at the shop, no idea till when", False),
        # a day of the month is when, not where
        ("where is my aunt flying in from?", "she lands on the 3rd and stays a week", False),
        ("where is my aunt flying in from?", "my aunt is flying in from Accra", True),
        # a clock time is no count and no number of a thing
        ("what's my brother's flight number?", "his flight's delayed, landing at 10pm now", False),
        ("what's my brother's flight number?", "his flight is EZ 4417, landing at 10pm", True),
        ("what's my brother's flight number?", "he flies to porto on the 21st", False),
    ],
)
def test_the_value_a_count_an_amount_or_a_stay_needs(question, text, holds):
    assert kind_beyond(text, expected_kind(question), question) is holds


@pytest.mark.parametrize(
    "question, kind",
    [
        ("what time is the team call?", "clock"),
        ("when is my phone call with the school?", "time"),
        ("What did we call the kitten?", "name"),
        ("what should i call my new plant?", "name"),
        ("What's the hamster called?", "name"),
    ],
)
def test_call_asks_for_a_name_only_as_a_verb(question, kind):
    assert expected_kind(question) == kind


def test_a_correction_gives_way_only_to_a_statement_holding_the_asked_kind():
    # "they moved it" points back to the greeting, which holds no name: the correction stays
    told = [t for t in turns("morning all", "the dentist is at 9am, actually scratch that they moved it to 10:45")]
    told = [t for t in told if t.role == "user"]
    note = Note(3, "user", told[1].content, 0.4)
    assert uncorrected(note, told, "name", "who is my dentist?").number == 3


def test_a_reply_to_a_question_never_narrates_the_user():
    llm = FakeLLM(default="The user's last message is a question about food.")
    assert statement_reply(llm, "who eats no meat?", 37, WORDS, statement=False) == ("I'm not sure.", "unsure")
    llm = FakeLLM(default="I can't say for sure.")
    assert statement_reply(llm, "which animals eat no meat?", 37, WORDS, statement=False)[1] == "model"


def _close_words(*groups: tuple[str, ...]):
    """A stand-in for the sentence-embedding model on single words: the words of a group share one
    vector, every other text gets its own (seeded by the text)."""

    def embed(text: str) -> np.ndarray:
        group = next((i for i, g in enumerate(groups) if text.lower() in g), None)
        if group is not None:
            v = np.eye(64)[group]
        else:
            v = np.random.default_rng(zlib.crc32(text.encode())).normal(size=64)
        return v / np.linalg.norm(v)

    return embed


def test_a_neighbouring_things_code_is_no_answer_and_no_guess():
    embed = _close_words(("lock", "locker"))
    notes = [Note(3, "user", "my suitcase lock combo is 0812", 0.4)]
    assert judge(notes, "what's the code for my office locker?", embed).how == "unknown"
    assert judge(notes, "what's the code for my suitcase lock?", embed).how == "answer"


def test_need_is_a_light_verb_that_names_nothing_asked():
    assert "need" not in asked_for("what time do i need to be at the clinic?").head
    notes = [Note(7, "user", "so anxious. my shift starts at 9:15.", 1.0)]
    assert judge(notes, "what time do i need to be there?").how == "answer"


def test_the_narrowing_word_said_in_another_spelling_is_the_same_thing():
    embed = _close_words(("favorite", "favourite"), ("color", "colour"))
    notes = [Note(1, "user", "my favourite colour is mustard yellow.", 1.0)]
    assert judge(notes, "what's my favorite color?", embed).how == "answer"


def test_a_neighbouring_things_password_narrowed_by_two_words_is_no_answer():
    # "the router admin password": the noun narrowed by "admin"; the guest wifi's password is another's
    notes = [Note(3, "user", "guest wifi password is Plum4827!", 1.0)]
    assert judge(notes, "what's the router admin password?").how != "answer"
    assert judge(notes, "what's the guest wifi password?").how == "answer"
