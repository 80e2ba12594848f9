"""The user's facts vs the assistant's chatter, in two saved conversations that differ in one turn.

``oversized_answer.jsonl``: budget 150, lag 2; the user states a fact ("My name is Marta and I have
a cat called Pickles"), then asks about the Roman Empire and gets a 159-token ramble. The ramble is
protected by the lag, so the memory evicts what it can: the fact leaves at the very step the answer
arrives, and a later question about the cat finds it gone.

``capped_answer.jsonl``: the same chat with answers capped relative to the budget, at
``min(150, budget // 4)`` = 37 tokens (the ramble cut there). Nothing is evicted: the fact stays in
memory through the whole conversation. The memory contract is unchanged (protected turns are never
evicted): the cap only keeps one answer from outgrowing the room the user's facts need.
"""

from __future__ import annotations

from tests.assistant.test_replay import replay_json

ANSWER_CAP = lambda budget: min(150, budget // 4)  # noqa: E731  (what the conversation file assumes)


def test_an_oversized_protected_answer_evicts_the_users_first_fact(store, counter):
    got = replay_json(store, counter, "oversized_answer")
    ramble = next(t for t in got["turns"] if t["turn"] == 4)
    assert ramble["role"] == "assistant" and ramble["tokens"] > ANSWER_CAP(got["settings"]["budget"])
    first_fact = [e for e in got["evictions"] if e["turn"] == 1]
    assert [e["step"] for e in first_fact] == [4]  # when the ramble arrived, inside its lag window
    assert all(1 not in entry["active"] for entry in got["timeline"] if entry["step"] >= 4)


def test_with_answers_capped_the_users_first_fact_stays_in_memory(store, counter):
    got = replay_json(store, counter, "capped_answer")
    cap = ANSWER_CAP(got["settings"]["budget"])
    assert all(t["tokens"] <= cap for t in got["turns"] if t["role"] == "assistant")
    assert not [e for e in got["evictions"] if e["turn"] == 1]
    assert all(1 in entry["active"] for entry in got["timeline"])
