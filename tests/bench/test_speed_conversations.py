"""``lagmem bench speed``'s generated conversations: one speaker, and a person with an assistant shaped like
the product's (alternating turns, the assistant's much longer, citations mostly to the person's turns, made
by the assistant's answers)."""

import statistics

import pytest

from bench import speed
from cli import bench as bench_cli


def test_the_person_assistant_conversation_alternates_and_its_assistant_turns_are_longer():
    who, costs, _ = speed.plan(400, seed=3, roles="alternate")
    assert who[:4] == ["user", "assistant", "user", "assistant"] and len(who) == len(costs) == 400
    assert all(a != b for a, b in zip(who, who[1:]))
    user = [c for r, c in zip(who, costs) if r == "user"]
    assistant = [c for r, c in zip(who, costs) if r == "assistant"]
    assert statistics.mean(assistant) > 4 * statistics.mean(user)
    assert max(user) < min(assistant)


def test_its_citations_go_mostly_to_user_turns_and_only_with_an_answer():
    who, _, rng = speed.plan(2000, seed=0, roles="alternate")
    active = list(range(1, 61))  # 30 user and 30 assistant turns in memory
    picks = [
        choose for n in range(61, 2000) if (choose := speed.choose_cites(rng, "alternate", who[n - 1], active, who))
    ]
    assert len(picks) == len(range(62, 2000, 2))  # every assistant turn cites, no user turn does
    cited = [who[c - 1] for pick in picks for c in pick]
    assert all(len(set(pick)) == speed.CITES for pick in picks)
    assert 0.93 < cited.count("user") / len(cited) < 1.0


def test_the_one_speaker_conversation_is_as_before():
    who, costs, rng = speed.plan(50, seed=0)
    assert set(who) == {"user"} and all(20 <= c <= 200 for c in costs)
    assert len(speed.choose_cites(rng, "user", "user", [1, 2, 3, 4], who)) == speed.CITES


def test_a_run_of_the_person_assistant_conversation_tells_its_citation_share():
    r = speed.run_size(300, persisted=False, naive_steps=2, roles="alternate")
    assert r["conversation"] == "alternate" and r["turns"] == 300
    assert r["user_cite_share"] > 0.9 and r["pure_median_ms"] > 0


def test_unknown_conversations_are_refused(capsys):
    assert bench_cli.main(["bench", "speed", "--roles", "user,both", "--sizes", "10"]) == 2
    assert "--roles takes user and/or alternate" in capsys.readouterr().err


@pytest.mark.parametrize("roles", ["user", "alternate"])
def test_each_table_is_labelled(roles, capsys):
    assert (
        bench_cli.main(["bench", "speed", "--roles", roles, "--sizes", "60", "--no-persisted", "--naive-steps", "1"])
        == 0
    )
    out = capsys.readouterr().out
    assert ("a person and an assistant" in out) == (roles == "alternate") and ("one speaker" in out) == (
        roles == "user"
    )
