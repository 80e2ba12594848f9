"""What a new user types in the first minute, answered by the embedded default's rules: the user's own
statement before the assistant's echo of it, a quote naming the turn it cites, a question answered
from the fact in its own message, a plain statement acknowledged unless the model's reply passes the
answer's checks, and "I don't know" when nothing in memory holds what is asked.
Scripted model (FakeLLM), hash embeddings: the rules are tested, not a model's wording."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import pytest

from assistant.answering.message import about_the_user, is_question, recalls, split
from assistant.answering.notes import expected_kind, has_kind, select_notes
from assistant.answering.replies import acknowledges, statement_reply
from assistant.retrieval import echoes
from assistant.retrieval.step import Candidate, Cite, RetrievalConfig, retrieve
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory.types import MemorySettings

WORDS = lambda text: len(text.split())  # noqa: E731  (a token counter: one token per word)
ECHO = "You're right, I should rephrase to: 'I keep my bicycle in the garage next to the red toolbox.'"
NUMBER = re.compile(r"\(turn (\d+)\)")


def grounded(store, llm, counter, threshold=0.0):
    cfg = RetrievalConfig(ask_model=False)
    svc = ChatService(
        store, llm, HashEmbedder(), counter, retrieval=replace(cfg, hybrid=replace(cfg.hybrid, threshold=threshold))
    )
    svc.answer_mode = "grounded"  # what the embedded model gets
    return svc


FACT = "I keep my bicycle in the garage next to the red toolbox."


def bicycle(store, llm, counter, threshold=0.0):
    """The issue's conversation: a fact, a model's unchecked echo of it (turn 2), two more facts."""
    svc = grounded(store, llm, counter, threshold)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    with store.transaction(conv) as tx:
        tx.add_turn("user", FACT, counter.count(FACT))
        tx.add_turn("assistant", ECHO, counter.count(ECHO))
    svc.ask(conv, "Also, my neighbour is called Oskar.")
    svc.ask(conv, "I work night shifts at the hospital.")
    return svc, conv


# ----------------------------------------------------------------------------- the user's words


def vec(*xs):
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_the_echo_of_a_users_statement_is_found_and_its_cite_moves_to_the_user():
    said = Candidate(1, "user", "I keep my bicycle in the garage next to the red toolbox.", vec(1, 0))
    echo = Candidate(2, "assistant", ECHO, vec(1, 0.1))
    other = Candidate(3, "user", "Also, my neighbour is called Oskar.", vec(0, 1))
    assert echoes.echoed(echo, [said, echo, other]) is said
    assert echoes.echoed(Candidate(4, "assistant", "Noted.", vec(0, 1)), [said, echo, other]) is None
    assert echoes.echoed(said, [said, echo, other]) is None  # a user turn echoes nobody
    # the ranker cites alone; even when only the echo ranks high, the user's turn is offered and cited
    cfg = RetrievalConfig(ask_model=False, k=1)
    cfg = replace(cfg, hybrid=replace(cfg.hybrid, threshold=0.0, min_cosine_alone=0.0))
    r = retrieve(None, "Where do I keep my bicycle?", vec(1, 0.2), [said, echo, other], (), cfg)
    assert 1 in r.offered and 2 not in r.cited_ids and r.cited_ids[0] == 1


def test_a_model_cite_of_an_echo_becomes_a_cite_of_the_users_turn():
    said = Candidate(1, "user", "My passport expires in March 2027.", vec(1, 0))
    echo = Candidate(2, "assistant", "Your passport expires in March 2027, noted.", vec(1, 0))
    llm = FakeLLM(default='{"turns": [2]}')
    r = retrieve(llm, "When does my passport expire?", vec(1, 0), [said, echo], (), RetrievalConfig(k=1))
    assert r.cited_ids == (1,)


def test_the_answer_quotes_the_users_turn_and_cites_the_turn_it_names(store, counter):
    llm = FakeLLM(default="Ok.")
    svc, conv = bicycle(store, llm, counter)
    llm.enqueue("I keep it in the garage.")  # the user's sentence spoken as "I": refused
    r = svc.ask(conv, "Where do I keep my bicycle?")
    assert r.answered_by == "extractive"
    assert r.answer == "You told me (turn 1): I keep my bicycle in the garage next to the red toolbox."
    assert r.cited == [1]  # the turn the quote names, and only it


def test_a_quote_always_names_its_citation(store, counter):
    """Whatever is asked, an extractive answer's "(turn N)" is its one citation."""
    llm = FakeLLM(default="Something else entirely.")
    svc = grounded(store, llm, counter)
    conv = store.create("t", MemorySettings(budget=600, lag=2))
    for text in (
        "My car is a blue Skoda Fabia.",
        "My wife drives a white Toyota Yaris.",
        "We share a parking spot behind the pharmacy.",
        "The plumber is coming on Tuesday.",
        "Actually it's not Tuesday, it's Thursday.",
    ):
        svc.ask(conv, text)
    for q in ("What car does my wife drive?", "Where do we park?", "When is the plumber coming?", "What's my car?"):
        r = svc.ask(conv, q)
        if r.answered_by == "extractive":
            assert [int(n) for n in NUMBER.findall(r.answer)] == r.cited, (q, r.answer, r.cited)


# ----------------------------------------------------------------------------- one message


@pytest.mark.parametrize(
    "message, stated, asked",
    [
        (
            "My sister Ana moves to Porto in June. Where is she moving?",
            "My sister Ana moves to Porto in June.",
            "Where is she moving?",
        ),
        (
            "My mum's birthday is on the 23rd of November, so when is her birthday?",
            "My mum's birthday is on the 23rd of November.",
            "when is her birthday?",
        ),
        ("Hey, where did I park?", "", "Hey, where did I park?"),
        ("Thanks! What's my dog called?", "", "Thanks! What's my dog called?"),  # nothing about the question
        ("Where did I park?", "", "Where did I park?"),
        ("wat time do i drop the car off?", "", "what time do i drop the car off?"),  # "what" typed as said
    ],
)
def test_a_message_is_split_into_its_fact_and_its_question(message, stated, asked):
    parts = split(message)
    assert (parts.stated, parts.asked) == (stated, asked)


def test_a_question_beside_its_fact_is_answered_from_that_message(store, counter):
    llm = FakeLLM(default="Ok.")
    svc = grounded(store, llm, counter, threshold=1.01)  # the ranker cites nothing
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    svc.ask(conv, "Hi!")
    llm.enqueue("Nothing to say.")
    r = svc.ask(conv, "My sister Ana moves to Porto in June. Where is she moving?")
    assert r.answered_by == "extractive" and r.user_turn == 3
    assert r.answer == "You told me (turn 3): My sister Ana moves to Porto in June."
    assert r.cited == [3]
    prompt = llm.history[-1].messages[-1]["content"]
    assert "My sister Ana moves to Porto in June." in prompt and prompt.endswith("Question: Where is she moving?")
    llm.enqueue("Your sister Ana is moving to Porto.")
    r = svc.ask(conv, "My brother Tobias is moving to Gdansk. Where is he moving to?")
    assert r.answered_by == "extractive" and "Gdansk" in r.answer  # "Porto" is not in this message's fact
    llm.enqueue("He is moving to Gdansk.")
    r = svc.ask(conv, "My brother Tobias is moving to Gdansk. Where is he moving to?")
    assert (r.answer, r.answered_by) == ("He is moving to Gdansk.", "model")


# ----------------------------------------------------------------------------- acknowledgements


@pytest.mark.parametrize(
    "reply, ok",
    [
        ("I'm here to help with any medical or health-related tasks", False),  # a role of its own
        ("You're right, I should rephrase to: 'I work night shifts at the hospital.'", False),
        ("We work night shifts at the hospital.", False),  # the user's sentence spoken back
        ("I work night shifts at the hospital.", False),
        ("Night shifts at the hospital, got it.", False),  # most of the user's words again
        ("That sounds tiring, good luck!", False),  # "tiring": a claim of its own
        ("Good luck!", True),
        ("Thanks for sharing.", True),
        ("Noted, thanks for letting me know.", True),
        ("Dr. House works there too.", False),  # an invented name
    ],
)
def test_a_statement_reply_must_pass_the_answers_checks(reply, ok):
    assert acknowledges(reply, "I work night shifts at the hospital.") is ok


def test_a_garbled_reply_or_one_spoken_to_someone_named_is_refused():
    message = "My neighbour Gwen gave me a fig. She said to water it once every ten days."
    assert not acknowledges("Gwen, \"I'm sorry to hear that", message)
    assert not acknowledges("Gwen, thanks for sharing.", message)
    assert acknowledges("Thanks for sharing.", message)
    # a value echoed with no acknowledgement
    assert not acknowledges("BF7731Q:", "The booking reference is BF7731Q, and we've got a cabin.")


def test_a_statement_gets_an_acknowledgement_unless_the_reply_passes(store, counter):
    llm = FakeLLM(default="I'm here to help with any medical or health-related tasks.")
    assert statement_reply(llm, "I work night shifts at the hospital.", 37, WORDS) == ("Noted.", "acknowledged")
    llm = FakeLLM(default=ECHO)
    assert statement_reply(llm, "I keep my bicycle in the garage.", 37, WORDS) == ("Noted.", "acknowledged")
    llm = FakeLLM(default="Good luck! I hope the shifts go well.")
    assert statement_reply(llm, "I work night shifts at the hospital.", 37, WORDS) == ("Good luck!", "model")
    # the server's stop at ". " cut "Mr. Haddad seems nice" to a title with no name after it
    llm = FakeLLM(default="Mr")
    said = "landlord is a guy called Mr Haddad, seems nice enough"
    assert statement_reply(llm, said, 37, WORDS) == ("Noted.", "acknowledged")
    llm = FakeLLM(default="The plumber is called Mr")
    assert statement_reply(llm, "the plumber is called Mr. Evans", 37, WORDS) == ("Noted.", "acknowledged")
    # a question to the assistant keeps its free reply (a joke is not an acknowledgement)
    llm = FakeLLM(default="Why did the chicken cross the road? To get to the other side.")
    svc = grounded(store, llm, counter)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    r = svc.ask(conv, "Can you tell me a joke?")
    assert r.answered_by == "model" and r.answer.startswith("Why did the chicken")


# ----------------------------------------------------------------------------- "I don't know"


@pytest.mark.parametrize(
    "question, text, holds",
    [
        ("What time does my flight leave?", "I'm flying to Oslo on Friday.", False),
        ("What time is dinner?", "He just texted, make that 8:15.", True),
        ("Where is the meeting?", "Actually, it's on Wednesday.", False),
        ("Where do I keep my kayak?", "I keep my kayak in the shed behind the greenhouse.", True),
        ("When is my wife's birthday?", "My wife Hana loves orchids.", False),
        ("What's my boss's name?", "I have a meeting with my boss tomorrow.", False),
        ("whats my boyfriends name", "my bf kwame is cooking tonight lol", True),
        ("What colour is my car?", "I finally bought a car, a used Honda Civic.", False),
        ("What does my sister do for work?", "My sister Noor is visiting next week.", False),
        ("What does Lena do?", "My partner Lena is a firefighter.", True),
        ("How much did my bike cost?", "It's a Cube road bike.", False),
    ],
)
def test_the_answers_kind_is_held_or_not(question, text, holds):
    assert has_kind(text, expected_kind(question)) is holds


@dataclass
class Step:
    cited: list
    ranked: tuple


def test_nothing_that_holds_what_is_asked_means_i_dont_know():
    active = [Candidate(1, "user", "I'm flying to Oslo on Friday.", None), Candidate(2, "assistant", "Noted.", None)]
    cited = Step([Cite(1, 0.6, 0.5)], (1, 2))
    picked = select_notes("What time does my flight leave?", active, cited)
    assert picked.unknown and picked.notes == []
    assert select_notes("What day do I fly?", active, cited).notes[0].number == 1
    quiet = [Candidate(1, "user", "Today is my day off.", None), Candidate(2, "user", "I might bake some bread.", None)]
    assert select_notes("What's my mother's name?", quiet, Step([], (2, 1))).unknown  # no name anywhere
    # an assistant's turn holding the kind is not evidence for what the user said
    active.append(Candidate(3, "assistant", "Have a good flight at 9:40!", None))
    assert select_notes("What time does my flight leave?", active, Step([Cite(1, 0.6, 0.5)], (1, 3, 2))).unknown


@pytest.mark.parametrize(
    "question, recall",
    [
        ("What's my favourite colour?", True),
        ("Do I eat meat?", True),
        ("Can you help me plan my week?", False),
        ("What's the capital of Australia?", False),
        ("How are you?", False),
    ],
)
def test_only_questions_about_the_user_that_memory_must_answer_recall(question, recall):
    assert recalls(question) is recall


def test_the_service_says_it_does_not_know(store, counter):
    llm = FakeLLM(default="That's a great question!")
    svc = grounded(store, llm, counter)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    r = svc.ask(conv, "What's my favourite colour?")  # the first message: nothing in memory
    assert (r.answer, r.answered_by, r.cited) == ("I don't know; you haven't told me that.", "unknown", [])
    svc.ask(conv, "I'm flying to Oslo on Friday.")
    r = svc.ask(conv, "What time does my flight leave?")
    assert (r.answer, r.answered_by, r.cited) == ("I don't know; you haven't told me that.", "unknown", [])
    llm.enqueue("You are flying to Oslo on Friday.")
    r = svc.ask(conv, "What day is my flight?")  # what memory does hold is still answered
    assert (r.answer, r.answered_by) == ("You are flying to Oslo on Friday.", "model")


def test_a_model_answer_naming_what_is_beside_the_question_is_refused():
    from assistant.answering.agreement import agrees
    from assistant.answering.note import Note

    notes = [Note(3, "user", "My cat Miso is twelve and my parrot Kiwi is two.", 1.0)]
    assert not agrees("Miso is a cat.", None, notes, "What is my parrot called?")
    assert agrees("Your parrot is called Kiwi.", None, notes, "What is my parrot called?")


def test_the_user_speaking_as_i_comes_first_only_among_answers_of_the_kind():
    active = [
        Candidate(1, "user", "I'm an electrician.", None),
        Candidate(2, "user", "My brother Yusuf is an accountant.", None),
        Candidate(3, "user", "Started my new job at Siemens on Monday.", None),
        Candidate(4, "user", "I listen to podcasts on the train.", None),
    ]
    assert select_notes("What do I do for a living?", active[:2], Step([], (2, 1))).notes[0].number == 1
    # no kind asked for: the ranker's order stands, "I ..." is not preferred
    assert select_notes("Which company do I work for?", active[2:], Step([], (3, 4))).notes[0].number == 3


def test_a_name_opening_a_sentence_keeps_i_dont_know_from_being_said():
    active = [
        Candidate(1, "user", "Long day at work, finally home.", None),
        Candidate(2, "user", "Mochi knocked my coffee off the desk again, that cat has zero remorse.", None),
    ]
    picked = select_notes("What's the name of my cat?", active, Step([], (1, 2)))
    assert not picked.unknown and picked.notes[0].number == 2
    assert has_kind("I've been a pharmacist for about six years now.", "job")


def test_a_title_s_full_stop_ends_no_sentence():
    from assistant.answering.cleaning import cap_text
    from assistant.answering.message import split

    parts = split("Lunch with Mrs. Achterberg on Sunday at 12:15, when is lunch?")
    assert parts.stated.startswith("Lunch with Mrs. Achterberg on Sunday at 12:15")
    two = split("My doctor is Dr. Haddad. What's my doctor called?")
    assert "Haddad" in two.stated and two.asked == "What's my doctor called?"
    words = lambda text: len(text.split())  # noqa: E731
    assert cap_text("See Dr. Haddad at 9. Bring the forms.", 5, words) == "See Dr. Haddad at 9."
    # "See Dr." is no sentence: too little room for the first one cuts words, with an ellipsis
    assert cap_text("See Dr. Haddad at 9. Bring the forms.", 3, words) == "See Dr. …"


def test_a_fact_and_its_question_in_one_message_split_in_the_shapes_people_type():
    shapes = {
        "Our daughter Amara's piano recital is on Saturday at 4pm; what day is the recital?": "Saturday",
        "i'm allergic to cashews but peanuts are fine — which nut am i allergic to?": "cashews",
        "spare key is under the blue flowerpot by the back door lol where's the spare key": "flowerpot",
        "my favourite colour is teal. what's my favorite color?": "teal",
        "ok so my friend Mai lands on the 9th n stays w me til the 15th, wen does she arrive?": "9th",
        "parked on level 3 spot G14 at the mall, whats my spot number": "G14",
        "remind me, my dentist appointment is friday with dr okafor. who is the appointment with?": "okafor",
        "the wifi at my flat is PotatoNet_5G. remind me, what's the network called?": "PotatoNet_5G",
        # the fact and the question in the message's last sentence, after a sentence of chatter
        "so tired today. oh and my shift starts at 7:45, what time do i start?": "7:45",
        "grandad hates fish so what should i cook for him?": "fish",
    }
    for message, fact in shapes.items():
        parts = split(message)
        assert is_question(message) and fact in parts.stated and fact not in parts.asked, message


def test_a_question_run_on_after_its_fact_with_no_stop_is_asked():
    shapes = {
        "flight home is ua 872 whats my flight number": ("872", "whats my flight number"),
        "quick one: dentist appt is monday at 8:45, can u tell me when my dentist appt is": (
            "monday",
            "when my dentist appt is",
        ),
    }
    for message, (fact, asked) in shapes.items():
        parts = split(message)
        assert is_question(message) and fact in parts.stated and parts.asked == asked, message
    # a question word inside a statement that runs into no "my" asks nothing
    assert not is_question("i forgot where the keys are") and not is_question("ok thanks. also tell me a joke")


def test_a_greeting_or_a_remind_me_alone_states_nothing():
    for message in ("Hey, where did I park?", "Thanks! What is my dog called?", "remind me, what is my code?"):
        assert split(message).stated == "", message


def test_a_question_of_the_world_beside_a_statement_is_not_about_the_user():
    assert not about_the_user("do u know any good podcasts? i like true crime")
    assert about_the_user("what's my dog called? he is a beagle")


def test_a_street_said_short_answers_what_street():
    # "st" is "street": the question's head is said ("what street is the apartment on?")
    from assistant.answering.answerable import judge
    from assistant.answering.note import Note
    from assistant.retrieval.lexical import stem

    assert stem("st") == stem("street") and stem("appts") == stem("appointment")
    turns = ["ok new apartment update", "rent is 1875 a month", "its on Delancey st, 3rd floor, no elevator ugh"]
    told = [Note(2 * i + 1, "user", t, 1.0, None) for i, t in enumerate(turns)]
    verdict = judge(told[::-1], "what street is the apartment on?", None, (), told)
    assert verdict.how == "answer" and verdict.notes[0].number == 5
