"""LoCoMo loading, evidence repair, placement, and the reference fifo, lru and oracle figures."""

import json
from pathlib import Path

import pytest

from bench import locomo, protocol, report

DATA = Path("/work/shared/data/locomo/locomo_dev.json")
if not DATA.exists():
    DATA = Path(__file__).resolve().parents[3] / "shared/data/locomo/locomo_dev.json"


def test_repair_evidence():
    assert locomo.repair_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert locomo.repair_evidence("D:11:26") == ["D11:26"]
    assert locomo.repair_evidence("D30:05") == ["D30:5"]
    assert locomo.repair_evidence("D9:1 D4:4") == ["D9:1", "D4:4"]


def _tiny(tmp_path):
    conv = {
        "sample_id": "t",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1_date_time": "x",
            "session_1": [
                {"speaker": "A", "dia_id": "D1:1", "text": "hi there"},
                {"speaker": "B", "dia_id": "D1:2", "text": "look", "blip_caption": "a cat"},
            ],
            "session_2_date_time": "y",
            "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "one two three"}],
            "session_3_date_time": "z",  # a date without its session: skipped
        },
        "qa": [
            {"question": "q1", "evidence": ["D1:02; D2:1"], "category": 1},
            {"question": "q2", "evidence": ["D:1:1", "D7:7"], "category": 4},
            {"question": "q3", "evidence": [], "category": 3},
        ],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([conv]))
    return path


def test_parse_tiny(tmp_path):
    (c,) = locomo.load(_tiny(tmp_path))
    assert [t.text for t in c.turns] == ["A: hi there", "B: look [shares photo: a cat]", "A: one two three"]
    assert c.session_end == {1: 2, 2: 3}
    assert [q.evidence for q in c.questions] == [(2, 3), (1,)]
    assert c.dropped_ids == 1 and c.skipped_questions == 1
    assert locomo.token_scale("words").count(c.turns[1].text) == 13 * 6
    assert locomo.place([c], "earliest")[0] == {3: [c.questions[0]], 2: [c.questions[1]]}
    assert locomo.place([c], "end")[0] == {3: c.questions}


def test_question_never_helps_itself(tmp_path):
    convs = locomo.load(_tiny(tmp_path))
    res = protocol.run(convs, protocol.spec("fifo"), 1, 0, locomo.token_scale("words"), "end")
    assert all(r.kept == 0 for r in res)  # budget 1 token: nothing fits


@pytest.mark.skipif(not DATA.exists(), reason="LoCoMo dev data not present")
def test_reference_figures_fifo_lru():
    convs = locomo.load(DATA)
    scale = locomo.token_scale("words")
    costs = [[scale.count(t.text) for t in c.turns] for c in convs]
    ref = {"fifo": (0.1458, 0.2729, 0.4450), "lru": (0.1552, 0.2797, 0.4735)}
    for name, want in ref.items():
        for b, w in zip((1000, 2000, 4000), want):
            res = [r for s in range(5) for r in protocol.run(convs, protocol.spec(name), b, s, scale, costs=costs)]
            assert round(report.metrics(res)["recall"], 4) == w


@pytest.mark.skipif(not DATA.exists(), reason="LoCoMo dev data not present")
def test_reference_figure_oracle_4000():
    convs = locomo.load(DATA)
    scale = locomo.token_scale("words")
    res = [r for s in range(5) for r in protocol.run(convs, protocol.spec("oracle"), 4000, s, scale)]
    assert round(report.metrics(res)["recall"], 4) == 0.9653
