"""The LoCoMo protocol's citation-source hook (`bench locomo --cites`) and its summary line."""

from __future__ import annotations

from bench import locomo, protocol
from bench.cite_source import gain_kept
from tests.bench.test_bench_cites import TINY


def test_cite_source_sees_only_turns_in_memory_and_its_cites_replace_the_gold_ones():
    conv = locomo.parse_conversation(TINY[0])
    schedule = {5: list(conv.questions)}
    calls = []

    def source(c, q, active):
        calls.append((q.index, list(active)))
        return [(active[0], 0.5)]  # always the oldest turn in memory, half confident

    costs = [10] * len(conv.turns)
    res = protocol.run_conversation(
        conv, schedule, protocol.spec("fifo").build(), budget=30, lag=0, costs=costs, cite_source=source
    )
    assert [i for i, _ in calls] == [q.index for q in conv.questions]
    assert all(active == [3, 4, 5] for _, active in calls)  # budget 30 keeps the newest three
    assert [r.kept for r in res] == [0, 1]  # scoring is unchanged: evidence D1:1 gone, D2:1 kept


def test_gain_kept_reports_share_and_beaten_baselines():
    rows = [
        {"cites": c, "budget": 4000, "policy": p, "recall": v}
        for c, p, v in [
            ("gold", "fifo", 0.40),
            ("gold", "measured", 0.60),
            ("gold", "lru", 0.45),
            ("hybrid", "fifo", 0.40),
            ("hybrid", "measured", 0.55),
            ("hybrid", "lru", 0.56),
        ]
    ]
    text = gain_kept(rows, "gold")
    assert "gold         B=4000  measured 0.600, fifo 0.400, gain kept 100%; >= every baseline" in text
    assert "hybrid       B=4000  measured 0.550, fifo 0.400, gain kept 75%; beaten by lru" in text
