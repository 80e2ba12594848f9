"""The answer builder: no prompt syntax reaches the user, answers are capped, the model's text is
kept only when it agrees with the cited turns (else an extractive quote), citations carry their
retriever's name. Scripted model (FakeLLM), hash embeddings: nothing here judges a model's wording."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from assistant.answering.agreement import agrees
from assistant.answering.cleaning import StreamCleaner, answer_cap, cap_text, clean_answer
from assistant.answering.note import Note
from assistant.answering.prompts import grounded_messages
from assistant.answering.quoting import extractive
from assistant.retrieval.step import RetrievalConfig
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory.types import MemorySettings
from storage.models import CitationRow

WORDS = lambda text: len(text.split())  # noqa: E731  (a token counter: one token per word)


def test_cap_is_a_quarter_of_the_budget_and_never_over_150():
    assert answer_cap(150) == 37 and answer_cap(4000) == 150 and answer_cap(None) == 150
    assert answer_cap(20) == 16  # a floor, so an answer can still say something


def test_cap_text_keeps_whole_sentences_then_whole_words():
    text = "One two three. Four five six. Seven eight nine."
    assert cap_text(text, 7, WORDS) == "One two three. Four five six."
    assert cap_text(text, 100, WORDS) == text
    cut = cap_text("a b c d e f g h", 4, WORDS)
    assert cut.endswith("…") and WORDS(cut) <= 4


@pytest.mark.parametrize(
    "raw", ["[cited] You live in Lisbon [T3].", "[ T 12 ]You live in Lisbon.", "You live in Lisbon. [Turn 2]"]
)
def test_clean_answer_removes_prompt_syntax(raw):
    out = clean_answer(raw)
    assert "[" not in out and "Lisbon" in out


def test_stream_cleaner_holds_back_split_markers():
    c = StreamCleaner()
    shown = "".join(c.feed(d) for d in ["Sure, [cit", "ed] you ", "live in [T", "3] Lisbon [x"]) + c.flush()
    assert shown == "Sure, you live in Lisbon [x"


NOTES = [Note(3, "user", "I live in Lisbon, near the river.", 0.8), Note(4, "assistant", "Lisbon sounds lovely.", 0.3)]


def test_agreement_needs_the_cited_words_not_the_wording():
    q = "Which city do I live in?"
    assert agrees("Lisbon, by the river.", None, NOTES, q)
    assert not agrees("You live in Tokyo.", None, NOTES, q)
    assert not agrees("Ao trabalha com a LASAM, está em Tokyo.", None, NOTES, q)
    assert not agrees("", None, NOTES, q)
    far = np.array([1.0, 0.0]), [Note(3, "user", "I live in Lisbon.", 1.0, np.array([0.0, 1.0]))]
    assert not agrees("Lisbon.", far[0], far[1], q)  # words match, vectors far apart: no


def test_agreement_refuses_invented_or_dropped_names_and_numbers():
    son = [Note(3, "user", "My son Mateo turns six next week.", 1.0)]
    assert not agrees("Your son is turning 12 next week.", None, son, "How old is my son turning?")
    assert agrees("Your son Mateo turns six next week.", None, son, "How old is my son turning?")
    home = [Note(3, "user", "I grew up in Tromso in the far north.", 1.0)]
    assert not agrees("You grew up in the far north.", None, home, "Where did I grow up?")
    assert agrees("You grew up in Tromso, I'm told.", None, home, "Where did I grow up?")


def test_extractive_quotes_the_best_user_statement_not_a_question():
    notes = [Note(5, "user", "Which city do I live in?", 0.9), *NOTES]
    assert extractive(notes) == "You told me (turn 3): I live in Lisbon, near the river."
    assert extractive(notes, sure=False).startswith("I am not sure")


def test_grounded_prompt_shows_only_the_notes_without_ids_in_the_users_message():
    msgs = grounded_messages(NOTES, "Which city do I live in?")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "Lisbon" not in msgs[0]["content"]  # the system role holds our instructions only
    user = msgs[1]["content"]
    assert "<notes>" in user and "Lisbon, near the river" in user and "[T" not in user
    assert user.endswith("Question: Which city do I live in?")


def grounded_service(store, llm, counter, threshold=None):
    cfg = RetrievalConfig(ask_model=False)
    if threshold is not None:
        cfg = replace(cfg, hybrid=replace(cfg.hybrid, threshold=threshold))
    svc = ChatService(store, llm, HashEmbedder(), counter, retrieval=cfg)
    svc.answer_mode = "grounded"  # what the embedded model gets
    return svc


def test_grounded_answer_falls_back_to_a_quote_when_the_model_disagrees(store, counter):
    llm = FakeLLM(default="Ok.")
    svc = grounded_service(store, llm, counter)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    svc.ask(conv, "I live in Lisbon, near the river.")
    svc.ask(conv, "The weather is lovely.")
    llm.enqueue("[cited] Ao trabalha com a LASAM, está em Tokyo. [T2]")
    r = svc.ask(conv, "Which city do I live in?")
    assert r.answered_by == "extractive"
    assert r.answer == "You told me (turn 1): I live in Lisbon, near the river."
    assert 1 in r.cited


def test_grounded_answer_keeps_agreeing_model_text_and_names_the_retriever(store, counter, engine):
    llm = FakeLLM(default="Ok.")
    svc = grounded_service(store, llm, counter, threshold=0.0)  # cite whatever ranks
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    svc.ask(conv, "I live in Lisbon, near the river.")
    llm.enqueue("[cited] You live in Lisbon, near the river.")
    r = svc.ask(conv, "Which city do I live in?")
    assert r.answered_by == "model" and r.answer == "You live in Lisbon, near the river."
    assert 1 in r.cited and all(0 < w <= 1 for w in r.cite_weights.values())
    with Session(engine) as s:
        sources = set(s.scalars(select(CitationRow.source)))
    assert sources == {"hybrid"}  # the inspector shows which retriever cited, and its weight


def test_streamed_answer_is_clean_and_capped(store, counter):
    llm = FakeLLM(chunk_size=3)
    svc = ChatService(store, llm, HashEmbedder(), counter, retrieval=RetrievalConfig(ask_model=False))
    conv = store.create("t", MemorySettings(budget=100, lag=2))
    llm.enqueue("[cited] " + "word " * 200)
    ex = svc.send(conv, "Tell me a long story.")
    shown = "".join(ex.stream())
    assert "[cited]" not in shown
    assert counter.count(ex.result.answer) <= answer_cap(100)
    assert "[" not in ex.result.answer


def test_why_forgotten_names_the_retriever_and_its_confidence(store, counter):
    from web.chart_series import citation_series
    from web.views import load_view
    from web.why_forgotten import why_forgotten

    llm = FakeLLM(default="Ok.")
    svc = grounded_service(store, llm, counter, threshold=0.0)
    conv = store.create("t", MemorySettings(budget=40, lag=1, policy="fifo"))
    svc.ask(conv, "I live in Lisbon, near the river.")
    svc.ask(conv, "Which city do I live in?")  # cites turn 1 (threshold 0: whatever ranks)
    for text in ("The weather is lovely today in the park.", "We had soup and bread for dinner."):
        svc.ask(conv, text)
    view = load_view(store, conv)
    assert not view.layer.turn(1).active
    assert "by the hybrid retriever, confidence 0." in why_forgotten(view, 1)
    assert set(citation_series(view)["source"]) == {"hybrid"}


def test_a_statement_reply_inventing_names_becomes_an_acknowledgement(store, counter):
    llm = FakeLLM(default="Ok.")
    svc = grounded_service(store, llm, counter)
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    llm.enqueue("Eu está situada no Rio de Janeiro, no Brasil.")
    r = svc.ask(conv, "I live in Lisbon, near the river.")
    assert (r.answer, r.answered_by) == ("Noted.", "acknowledged")
    llm.enqueue("Lisbon, how lovely!")
    r = svc.ask(conv, "I moved to Lisbon last year.")
    assert (r.answer, r.answered_by) == ("Lisbon, how lovely!", "model")


def test_agreement_with_the_assistants_own_chatter_does_not_count():
    notes = [
        Note(9, "user", "I work as a veterinary nurse at a small clinic.", 0.9),
        Note(10, "assistant", "I'm glad to help. What kind of work do you do?", 0.8),
    ]
    q = "What do I do for a living?"
    assert not agrees("I'm glad to help, but I'd like to know what you do for a living.", None, notes, q)
    assert agrees("You work as a veterinary nurse.", None, notes, q)


def test_guesses_only_for_questions_about_the_user(store, counter):
    llm = FakeLLM(default="Ok.")
    svc = grounded_service(store, llm, counter, threshold=1.01)  # the ranker never cites
    conv = store.create("t", MemorySettings(budget=400, lag=2))
    svc.ask(conv, "I live in Lisbon, near the river.")
    llm.enqueue("I am fine, thanks.")
    assert svc.ask(conv, "How are you today?").answer == "I am fine, thanks."
    r = svc.ask(conv, "Which city do I live in?")
    assert r.answered_by == "extractive" and r.cited == [1]  # the guess names the turn it cites
    # the guessed turn says the head ("live") and a place in one clause: quoted as the fact
    assert r.answer == "You told me (turn 1): I live in Lisbon, near the river."
    assert 0 < r.cite_weights[1] < 0.5  # a guess weighs what the ranker gave it, not a citation's 1.0
    r = svc.ask(conv, "Which street do I work on?")  # a guess that says no head: quoted as a guess
    assert r.answer.startswith("I am not sure; the closest thing in memory: you told me (turn 1)")
