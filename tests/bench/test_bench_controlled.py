"""Controlled conversations as text: the generator keeps its promises, the score is what the product
recorded in a replay, and the commands run end to end (real token counter, real replay, real SQLite)."""

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.runtime import token_counter as counter_for
from bench import controlled, replay_score, synthetic, synthetic_text
from cli import bench as bench_cli
from memory import transcript as T

ROOT = Path(__file__).resolve().parents[2]
SMALL = replace(controlled.Settings(), exchanges=110, facts=4)


@pytest.fixture(scope="module")
def count():
    return counter_for().count


def test_the_generator_keeps_the_controlled_design(count):
    s = controlled.Settings()
    c = controlled.generate(7, count)
    turns, items = c.transcript.turns, c.transcript.items
    assert len(turns) == 2 * s.exchanges and [t.role for t in turns[:4]] == ["user", "assistant"] * 2
    assert len(c.facts) == s.facts and all(turns[f - 1].role == "user" for f in c.facts)
    cites = Counter(n for t in turns for n, _ in t.cites)
    by_fact = {f: [t.number for t in turns if any(n == f for n, _ in t.cites)] for f in c.facts}
    liked = {e.turn for e in items if isinstance(e, T.EventLine) and e.event == "feedback" and e.value == 1.0}
    assert not any(isinstance(e, T.EventLine) and e.value is not None and e.value < 0 for e in items)
    for f in c.facts:
        confirm, need = by_fact[f]  # cited exactly twice: once soon, once much later
        assert 1 <= confirm - f <= 8 and 85 <= need - f <= 130
        assert controlled.Need(f, need) in c.needs and need not in liked
        assert "?" in turns[need - 2].content  # the person asks, the answer cites
    chatter = [
        t.number
        for t in turns
        if t.role == "user" and t.number not in c.facts and t.number + 1 not in {n.answer for n in c.needs}
    ]
    assert all(1 <= cites[n] <= 3 for n in chatter)
    chatter_answers = [
        t.number for t in turns if t.cites and all(n in chatter or turns[n - 1].role == "assistant" for n, _ in t.cites)
    ]
    share = len(set(chatter_answers) & liked) / len(chatter_answers)
    assert 0.15 < share < 0.35  # a quarter of them liked
    tokens = [count(t.content) for t in turns]
    assert c.transcript.header["budget"] == controlled.budget_for(tokens, c.facts, c.needs, s.lag, s.headroom)
    assert T.write(controlled.generate(7, count).transcript) == T.write(c.transcript)  # deterministic
    assert T.write(controlled.generate(8, count).transcript) != T.write(c.transcript)


def test_texts_vary_and_facts_are_not_one_template(count):
    c = controlled.generate(3, count)
    facts = [c.transcript.turns[f - 1].content for f in c.facts]
    assert len(set(facts)) == len(facts) and len({f.split()[0] for f in facts}) >= 4
    users = [t.content for t in c.transcript.turns if t.role == "user"]
    assert len(set(users)) > 0.6 * len(users)


def test_needs_file_round_trip_and_the_rule_without_it(tmp_path, count):
    c = controlled.generate(11, count, SMALL)
    path = tmp_path / "c.jsonl"
    controlled.write(c, path, "cl100k")
    transcript = T.parse(path.read_text())
    assert controlled.needs_of(transcript, path) == (c.needs, "c.needs.json")
    controlled.needs_path(path).unlink()
    rule, source = controlled.needs_of(transcript, path)
    assert set(c.needs) <= set(rule) and "40+" in source  # every need is a far citation
    assert all(n.answer - n.fact >= 40 for n in rule)


def _tiny(budget: int, policy: str = "fifo") -> T.Transcript:
    return T.parse(
        "\n".join(
            [
                json.dumps({"lagmem": 1, "budget": budget, "lag": 0, "policy": policy}),
                json.dumps({"role": "user", "content": "My sister Clara moved to Porto."}),
                json.dumps({"role": "assistant", "content": "Noted, Porto. " * 10, "cites": [1]}),
                json.dumps({"role": "user", "content": "Where did my sister move?"}),
                json.dumps({"role": "assistant", "content": "To Porto.", "cites": [1]}),
            ]
        )
    )


def test_kept_is_whether_the_product_recorded_the_need():
    need = [controlled.Need(1, 4)]
    counter = counter_for()
    roomy, tight = _tiny(500), _tiny(40)
    assert replay_score.kept(
        roomy, need, replay_score.settings_for(roomy.header, replay_score.parse_variant("fifo")), counter
    ) == [True]
    # 40 tokens: the long answer (turn 2) pushes turn 1 out under fifo before the question is answered
    assert replay_score.kept(
        tight, need, replay_score.settings_for(tight.header, replay_score.parse_variant("fifo")), counter
    ) == [False]


def test_a_score_agrees_with_lagmem_replay(tmp_path, count):
    c = controlled.generate(12, count, SMALL)
    path = tmp_path / "c.jsonl"
    controlled.write(c, path, "cl100k")
    only_needs = T.Transcript(
        c.transcript.header,
        [
            replace(i, cites=tuple(x for x in i.cites if controlled.Need(x[0], i.number) in c.needs))
            if isinstance(i, T.TurnLine)
            else i
            for i in c.transcript.items
        ],
    )
    path.write_text(T.write(only_needs))
    out = subprocess.run(
        [sys.executable, "-m", "cli.main", "replay", str(path), "--policy", "accumulate", "--lag", "6", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    dropped = json.loads(out.stdout)["dropped_cites"]
    settings = replay_score.settings_for(only_needs.header, replay_score.parse_variant("accumulate"), lag=6)
    kept = replay_score.kept(only_needs, c.needs, settings, counter_for())
    assert kept.count(False) == dropped  # the same replay: each need not kept is a dropped citation


def test_variants_parse_with_parameters():
    v = replay_score.parse_variant("measured[need_weight=0,citations=0.5]")
    assert v.name == "measured" and dict(v.params) == {"need_weight": 0.0, "citations": 0.5}
    assert v.title == "measured[need_weight=0,citations=0.5]"
    settings = replay_score.settings_for({"lagmem": 1, "policy": "fifo", "policy_params": {}}, v, lag=6)
    assert settings.policy == "measured" and settings.lag == 6 and settings.policy_params == dict(v.params)
    with pytest.raises(ValueError):
        replay_score.parse_variant("measured[need_weight]")


def test_controlled_commands_write_and_score(tmp_path, capsys):
    assert (
        bench_cli.main(
            [
                "bench",
                "controlled-write",
                "--seeds",
                "3,4",
                "--out",
                str(tmp_path),
                "--exchanges",
                "110",
                "--facts",
                "4",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "controlled-3.jsonl",
        "controlled-3.needs.json",
        "controlled-4.jsonl",
        "controlled-4.needs.json",
    ]
    out = tmp_path / "r.json"
    assert (
        bench_cli.main(
            [
                "bench",
                "controlled",
                "--dir",
                str(tmp_path),
                "--jobs",
                "1",
                "--lag",
                "6",
                "--policies",
                "fifo,accumulate,measured,measured[need=0]",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    res = json.loads(out.read_text())
    assert [r["conversation"] for r in res["results"]] == ["controlled-3.jsonl", "controlled-4.jsonl"]
    assert all(
        r["needs"] == 4 and set(r["kept"]) == {"fifo", "accumulate", "measured", "measured[need=0]"}
        for r in res["results"]
    )
    assert "goal: measured >= 0.8 in each conversation" in text and "mean >= accumulate + 0.1" in text


def test_controlled_refuses_a_folder_without_conversations(tmp_path):
    with pytest.raises(SystemExit, match="no saved conversations"):
        bench_cli.main(["bench", "controlled", "--dir", str(tmp_path), "--jobs", "1"])


def test_the_checked_in_set_matches_its_seeds(count):
    folder = ROOT / "bench" / "controlled"
    files = sorted(folder.glob("controlled-*.jsonl"))
    assert len(files) == 10
    for f in files[:2]:
        meta = json.loads(controlled.needs_path(f).read_text())
        again = controlled.generate(meta["seed"], count)
        assert T.write(again.transcript) == f.read_text()


def test_a_synthetic_trace_as_text_keeps_its_events(count):
    trace = synthetic.generate(3, turns=150)
    transcript, needs = synthetic_text.render(trace, count)
    reuses = sum(len(v) for k, v in trace.reuses.items() if k <= trace.turns)
    assert len(needs) == reuses
    turns = transcript.turns
    users = [t for t in turns if t.role == "user"]
    assert len(users) == trace.turns + reuses  # each trace turn, and each question a need brings
    for n in needs:
        assert turns[n.fact - 1].role == "user" and (n.fact, 1.0) in turns[n.answer - 1].cites
    events = Counter(e.value for e in transcript.items if isinstance(e, T.EventLine))
    wanted = Counter(
        r.feedback for k, rs in trace.steps.items() if k <= trace.turns for r in rs if r.feedback is not None
    )
    assert set(events) <= set(wanted) and events[-1.0] <= wanted[-1.0] and events[1.0] <= wanted[1.0]
    assert transcript.header["lag"] == synthetic_text.TEXT_LAG and transcript.header["budget"] > 0
