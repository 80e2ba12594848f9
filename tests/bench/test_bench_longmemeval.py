"""LongMemEval's own JSON in the LoCoMo benchmark: chaining, roles, errors naming the record, the CLI."""

import copy
import json
from pathlib import Path

import pytest

from bench import locomo, longmemeval, protocol, report
from cli import bench as bench_cli

LME = Path("/work/shared/data/longmemeval")
if not LME.exists():
    LME = Path(__file__).resolve().parents[3] / "shared/data/longmemeval"
RAW, CHAINED = LME / "longmemeval_dev.json", LME / "lme_dev_chained.json"
needs_data = pytest.mark.skipif(not (RAW.exists() and CHAINED.exists()), reason="LongMemEval dev data not present")


def record(qid: str, sessions, dates, qtype="single-session-user", question="what?", answer="that"):
    """A LongMemEval record; ``sessions``: lists of (role, content, has_answer)."""
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": answer,
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_dates": dates,
        "haystack_session_ids": [f"s{i}" for i in range(len(sessions))],
        "answer_session_ids": [],
        "haystack_sessions": [
            [{"role": r, "content": c, **({"has_answer": True} if h else {})} for r, c, h in s] for s in sessions
        ],
    }


def small_file(tmp_path, name="longmemeval_small.json"):
    records = [
        record(
            "b2",
            [
                [("user", "I moved to Lyon in May", True), ("assistant", "Lyon is lovely " * 30, False)],
                [("user", "my dog is called Rex", False), ("assistant", "Rex! " * 20, False)],
            ],
            ["2023/05/30 (Tue) 21:48", "2023/05/30 (Tue) 03:52"],
        ),  # out of date order in the file
        record(
            "a1",
            [[("user", "I run 5k on Sundays", True), ("assistant", "nice " * 40, False)]],
            ["2023/04/01 (Sat) 09:00"],
            qtype="multi-session",
        ),
        record("c3_abs", [[("user", "nothing to find here", False)]], ["2023/01/01 (Sun) 08:00"]),
        record(
            "d4",
            [[("user", "my sister lives in Oslo", False), ("assistant", "Oslo it is", True)]],
            ["2023/03/03 (Fri) 12:00"],
            qtype="single-session-assistant",
        ),
    ]
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path, records


@needs_data
def test_chaining_reproduces_the_chained_dev_file_exactly():
    records = json.loads(RAW.read_text())
    assert longmemeval.chain(records, longmemeval.prefix_for(RAW.stem)) == json.loads(CHAINED.read_text())


@needs_data
def test_both_dev_files_load_as_the_same_person_assistant_conversations():
    raw, chained = locomo.load(RAW), locomo.load(CHAINED)
    assert [c.sample_id for c in raw] == ["lme-dev-1", "lme-dev-2"]
    for a, b in zip(raw, chained):
        assert a.turns == b.turns and a.questions == b.questions and a.session_end == b.session_end
        assert a.kind == b.kind == locomo.PERSON_ASSISTANT
    roles = [t.role for c in raw for t in c.turns]
    assert set(roles) == {"user", "assistant"} and roles == [t.speaker for c in raw for t in c.turns]
    evidence = [raw[0].turns[e - 1].role for c in raw[:1] for q in c.questions for e in q.evidence]
    assert evidence.count("user") > evidence.count("assistant")


def test_locomo_turns_are_all_the_users():
    from tests.bench.test_bench_locomo import DATA

    if not DATA.exists():
        pytest.skip("LoCoMo dev data not present")
    convs = locomo.load(DATA)
    assert all(t.role == "user" for c in convs for t in c.turns)
    assert locomo.kind_of(convs) == locomo.TWO_PEOPLE


def test_chain_rule_on_a_small_file(tmp_path):
    path, _ = small_file(tmp_path)
    convs = locomo.load(path, chain_seed=7, per_conversation=2)
    # c3_abs is skipped; a1, b2, d4 sorted by id, shuffled with seed 7, two a conversation
    import random

    order = ["a1", "b2", "d4"]
    random.Random(7).shuffle(order)
    assert [c.sample_id for c in convs] == ["lme-small-1", "lme-small-2"]
    assert [len(c.questions) for c in convs] == [2, 1]
    texts = [t.text for c in convs for t in c.turns]
    assert not any("nothing to find" in t for t in texts)
    # b2's sessions in date order: the 03:52 one (the dog) before the 21:48 one (Lyon)
    assert texts.index("user: my dog is called Rex") < texts.index("user: I moved to Lyon in May")
    by_text = {t.text: t for c in convs for t in c.turns}
    # evidence = the has_answer turns, an assistant turn included
    ev = {t.text for c in convs for q in c.questions for e in q.evidence for t in [c.turns[e - 1]]}
    assert ev == {"user: I moved to Lyon in May", "user: I run 5k on Sundays", "assistant: Oslo it is"}
    assert by_text["assistant: Oslo it is"].role == "assistant"
    assert sorted(q.category for c in convs for q in c.questions) == [1, 4, 4]


def test_a_record_without_evidence_keeps_its_turns_and_its_question_is_counted_as_skipped(tmp_path):
    path = tmp_path / "longmemeval_x.json"
    path.write_text(
        json.dumps(
            [
                record("q1", [[("user", "hello there", False)]], ["2023/01/01 (Sun) 08:00"]),
                record("q2", [[("user", "I live in Rome", True)]], ["2023/01/02 (Mon) 08:00"]),
            ]
        )
    )
    (conv,) = locomo.load(path)
    assert len(conv.turns) == 2 and len(conv.questions) == 1 and conv.skipped_questions == 1


@pytest.mark.parametrize(
    "breaks, says",
    [
        (lambda r: r.pop("haystack_dates"), "'haystack_dates' must be a list, got missing"),
        (lambda r: r["haystack_dates"].append("2023/01/01 (Sun) 08:00"), "2 haystack_sessions but 3 haystack_dates"),
        (lambda r: r["haystack_sessions"][0].append({"role": "bot", "content": "x"}), "role must be user or assistant"),
        (lambda r: r["haystack_sessions"][1][0].pop("content"), "haystack_sessions[1][0]: 'content' must be a string"),
        (lambda r: r.update(question_type="trivia"), "unknown question_type 'trivia'"),
        (lambda r: r["haystack_sessions"][0][0].update(has_answer="yes"), "'has_answer' must be true or false"),
        (lambda r: r.update(question_id=3), "'question_id' must be a string"),
    ],
)
def test_a_malformed_record_is_named(tmp_path, breaks, says):
    path, records = small_file(tmp_path)
    bad = copy.deepcopy(records)
    breaks(bad[0])
    path.write_text(json.dumps(bad))
    with pytest.raises(longmemeval.LongMemEvalError) as err:
        locomo.load(path)
    assert str(err.value).startswith("record 0") and says in str(err.value)


def test_a_duplicate_question_id_is_named(tmp_path):
    path, records = small_file(tmp_path)
    path.write_text(json.dumps(records + [records[1]]))
    with pytest.raises(
        longmemeval.LongMemEvalError, match=r"record 4 \(question_id 'a1'\): question_id also used by record 1"
    ):
        locomo.load(path)


def test_the_protocol_gives_the_layer_each_turns_role(tmp_path):
    conv = {
        "sample_id": "pa",
        "conversation": {
            "speaker_a": "user",
            "speaker_b": "assistant",
            "session_1": [
                {"speaker": "user", "dia_id": "D1:1", "text": "a b c"},
                {"speaker": "assistant", "dia_id": "D1:2", "text": "x " * 20},
                {"speaker": "user", "dia_id": "D1:3", "text": "d e f"},
                {"speaker": "assistant", "dia_id": "D1:4", "text": "y " * 20},
            ],
        },
        "qa": [{"question": "q", "evidence": ["D1:1", "D1:3"], "category": 4}],
    }
    path = tmp_path / "pa.json"
    path.write_text(json.dumps([conv]))
    convs = locomo.load(path)
    assert [t.role for t in convs[0].turns] == ["user", "assistant", "user", "assistant"]
    scale = locomo.token_scale("words")

    def kept(name):
        return sum(r.kept for r in protocol.run(convs, protocol.spec(name), 40, 0, scale, "end"))

    # costs 5.2, 27.3, 5.2, 27.3 tokens; budget 40. Turn 4 brings 65: fifo drops turns 1 and 2 (one
    # evidence turn left); userfirst drops answer 2 only (both kept); largest drops the older of the
    # two equal answers, 2 (both kept); the oracle keeps both
    assert (kept("fifo"), kept("userfirst"), kept("largest"), kept("oracle")) == (1, 2, 2, 2)


def test_cli_prints_the_full_table_for_a_longmemeval_file(tmp_path, capsys):
    path, _ = small_file(tmp_path)
    out, plot = tmp_path / "r.json", tmp_path / "r.png"
    assert (
        bench_cli.main(
            [
                "bench",
                "locomo",
                "--data",
                str(path),
                "--chain-size",
                "2",
                "--seeds",
                "0,1",
                "--jobs",
                "1",
                "--priors",
                "none",
                "--json",
                str(out),
                "--plot",
                str(plot),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    res = json.loads(out.read_text())
    assert res["settings"]["kind"] == "person-assistant" and res["settings"]["budgets"] == [1000, 2000, 4000, 8000]
    assert res["settings"]["chain"] == {"seed": 7, "size": 2}
    policies = {r["policy"] for r in res["results"]}
    assert policies == {"fifo", "lru", "accumulate", "window", "userfirst", "largest", "measured", "oracle"}
    for name in policies:
        assert f" {name} " in text
    assert "person-assistant" in text and "c1 multi-session" in text and "gap" in text
    assert plot.stat().st_size > 0


def test_cli_names_the_malformed_record(tmp_path):
    path, records = small_file(tmp_path)
    records[2].pop("question")
    path.write_text(json.dumps(records))
    with pytest.raises(SystemExit, match=r"record 2 \(question_id 'c3_abs'\): 'question' must be a string"):
        bench_cli.main(["bench", "locomo", "--data", str(path), "--jobs", "1"])


def test_category_names_follow_the_kind():
    assert report.category_names(locomo.PERSON_ASSISTANT)[3] == "knowledge-update"
    assert report.category_names(locomo.TWO_PEOPLE)[3] == "open-domain"


def test_the_real_loop_offers_person_assistant_turns_as_the_app_holds_them(tmp_path):
    import numpy as np

    from bench.cites import Corpus

    path, _ = small_file(tmp_path)
    convs = locomo.load(path, per_conversation=10)
    corpus = Corpus(convs, lambda texts: np.ones((len(texts), 3), dtype=np.float32))
    cands = corpus.turns[0]
    assert [c.role for c in cands] == [t.role for t in convs[0].turns]
    by_content = {c.content: c.role for c in cands}
    assert by_content["I run 5k on Sundays"] == "user" and by_content["Oslo it is"] == "assistant"
    assert not any(c.content.startswith(("user: ", "assistant: ")) for c in cands)


def test_cli_heldout_priors_name_the_missing_training_files(tmp_path, monkeypatch):
    path, _ = small_file(tmp_path)
    monkeypatch.chdir(tmp_path)  # no ../shared/data beside it
    with pytest.raises(
        SystemExit, match=r"--priors heldout trains on the dev conversations; not found .*locomo_dev\.json"
    ):
        bench_cli.main(["bench", "locomo", "--data", str(path), "--jobs", "1", "--priors", "heldout"])
