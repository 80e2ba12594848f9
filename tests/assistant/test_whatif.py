"""What-if replays (``assistant.whatif``, ``lagmem whatif``, ``lagmem replay --compare``).

The hand-worked case: six turns of 10 tokens, budget 30, lag 0, answers 2, 4 and 6 cite turn 1.
fifo evicts turn 1 at step 4 (the oldest), so the cite at step 6 is a miss; lru keeps turn 1
(cited at step 4, the most recent use) and evicts 2, 3 and 4 instead: no miss.
"""

from __future__ import annotations

import json

import pytest

from assistant import runtime
from assistant import whatif as W
from assistant.replay import replay, settings_from
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory import transcript as T
from memory.types import MemorySettings
from tests.assistant.test_replay import run_cli
from tests.conftest import CL100K_MODEL_ENV as CL100K_MODEL
from tests.conftest import CONVERSATIONS


def six_turns() -> W.Recording:
    cite1 = ((1, 1.0),)
    items = tuple(T.TurnLine(n, "user" if n % 2 else "assistant", "", () if n % 2 else cite1) for n in range(1, 7))
    return W.Recording(MemorySettings(budget=30, lag=0, policy="fifo"), items, {n: 10 for n in range(1, 7)})


def test_a_miss_is_a_citation_of_a_turn_the_setting_had_evicted():
    fifo = W.run(six_turns())
    assert [(r.turn, r.step) for r in fifo.evictions] == [(1, 4), (2, 5), (3, 6)]
    assert fifo.misses == [W.Miss(step=6, turn=1, evicted_at=4, source="citation", answer_turn=6)]
    assert fifo.final.active == (4, 5, 6) and fifo.tokens == [10, 20, 30, 30, 30, 30]
    lru = W.run(six_turns(), W.settings_for(six_turns().settings, policy="lru"))
    assert [(r.turn, r.step) for r in lru.evictions] == [(2, 4), (3, 5), (4, 6)]
    assert lru.misses == [] and lru.final.active == (1, 5, 6)


def test_the_table_marks_the_policy_with_the_fewest_misses():
    rows = W.comparison_rows(W.compare(six_turns(), policies=["fifo", "lru"]))
    assert [(r["policy"], r["misses"], r["wanted_kept"], r["wanted_turns"], r["best"]) for r in rows] == [
        ("fifo", 1, 0, 1, False),
        ("lru", 0, 1, 1, True),
    ]


def test_bigger_budget_no_eviction_no_miss():
    r = W.run(six_turns(), W.settings_for(six_turns().settings, budget=60))
    assert r.evictions == [] and r.misses == [] and r.final.used_tokens == 60


def test_bad_settings_are_refused_with_their_reason():
    base = six_turns().settings
    with pytest.raises(ValueError, match="unknown policy"):
        W.settings_for(base, policy="nope")
    with pytest.raises(ValueError, match="budget"):
        W.settings_for(base, budget=0)
    with pytest.raises(ValueError, match="low_watermark"):
        W.settings_for(base, low_watermark=1.5)


@pytest.mark.parametrize("name", ["pins", "restore", "negative_feedback", "huge_turn", "long_520"])
def test_a_stored_conversation_replayed_under_its_own_settings_is_what_is_stored(name, store, counter):
    """Read back through the store, the what-if with the conversation's settings reproduces the
    stored memory and eviction records (turns, pins, restores, feedback and cites in stored order)."""
    t = T.parse((CONVERSATIONS / f"{name}.jsonl").read_text(encoding="utf-8"))
    log = replay(store, t, counter, settings_from(t.header), atomic=True)
    rec = W.load(store, log.conversation_id)
    result = W.run(rec)
    assert list(result.final.active) == log.final["active"]
    assert [(r.turn, r.step) for r in result.evictions] == [(e["turn"], e["step"]) for e in log.evictions]
    assert result.misses == []  # stored cites only name turns that were in memory then
    assert result.tokens[-1] == log.final["used_tokens"]


def test_feedback_stored_without_its_event_still_counts(store, counter):
    """Older databases logged feedback only in its own table: the what-if applies it when its
    answer arrived (here the same step the file gave it), so it still changes what is forgotten."""
    from sqlalchemy import delete

    from storage.models import FeedbackRow, MemoryEvent

    t = T.parse((CONVERSATIONS / "negative_feedback.jsonl").read_text(encoding="utf-8"))
    log = replay(store, t, counter, settings_from(t.header), atomic=True)
    with store.engine.begin() as conn:
        conn.execute(delete(MemoryEvent).where(MemoryEvent.kind == "feedback"))
    result = W.run(W.load(store, log.conversation_id))
    assert [(r.turn, r.step) for r in result.evictions] == [(e["turn"], e["step"]) for e in log.evictions]
    # the feedback takes away turn 3's only later citation (from the wrong answer): without any
    # feedback stored at all, turn 3 scores higher at the first eviction
    with store.engine.begin() as conn:
        conn.execute(delete(FeedbackRow))
    store._cache.clear()
    no_feedback = W.run(W.load(store, log.conversation_id))

    def t3(run):  # turn 3's importance when the first eviction was decided (evicted or runner-up)
        first = run.evictions[0]
        return dict([(first.turn, first.importance), *first.runners_up])[3]

    assert t3(result) < t3(no_feedback)


def test_a_live_conversation_with_misses_and_second_chance_reproduces_and_counts_logged_misses(db_url):
    svc = runtime.get_service(db_url, llm=FakeLLM(), embedder=HashEmbedder())
    conv = svc.store.create("live", MemorySettings(budget=40, lag=1), auto_restore=True)
    for i in range(5):
        svc.ask(conv, f"fact number {i}: the box holds {i * 7} marbles")
    svc.ask(conv, "fact number 0: the box holds 0 marbles")  # close to turn 1, long evicted: a logged miss
    with svc.store.transaction(conv) as tx:
        tx.pin(tx.layer.snapshot().active[-1])
    before = svc.store.conversation(conv).version
    rec = W.load(svc.store, conv)
    own = W.run(rec)
    assert own.final.active == svc.store.layer(conv).snapshot().active
    assert svc.store.conversation(conv).version == before  # nothing was written
    logged = [(s, n) for s, ns in rec.logged_misses.items() for n in ns]
    assert logged, "the repeated fact should have been logged as a miss"
    assert {(m.step, m.turn) for m in own.misses if m.source == "miss log"} == set(logged)
    roomy = W.run(rec, W.settings_for(rec.settings, budget=10_000))
    assert roomy.misses == [] and roomy.evictions == []


def test_whatif_cli_prints_both_memories_and_the_table(db_url):
    assert (
        run_cli("import", str(CONVERSATIONS / "long_520.jsonl"), "--db", db_url, env_extra=CL100K_MODEL).returncode == 0
    )
    out = run_cli("whatif", "1", "--db", db_url, "--policy", "fifo", "--budget", "700", "--compare")
    assert out.returncode == 0, out.stderr
    final = json.loads((CONVERSATIONS / "long_520.expected.json").read_text())["final"]
    assert f"in memory now:  {len(final['active'])} turns, {final['used_tokens']} tokens" in out.stdout
    assert "what if: policy fifo, budget 700 tokens, lag 6" in out.stdout
    assert "judged with hindsight" in out.stdout and out.stdout.count(" *") >= 1
    data = json.loads(run_cli("whatif", "1", "--db", db_url, "--lag", "2", "--json").stdout)
    assert data["whatif"]["lag"] == 2 and data["whatif"]["budget"] == 900
    assert data["whatif"]["tokens_kept"] <= 900 and len(data["whatif"]["tokens_over_time"]) == 520


def test_whatif_cli_errors_are_clear(db_url):
    out = run_cli("whatif", "7", "--db", db_url)
    assert out.returncode != 0 and "conversation 7 does not exist" in out.stderr
    assert run_cli("import", str(CONVERSATIONS / "pins.jsonl"), "--db", db_url).returncode == 0
    out = run_cli("whatif", "1", "--db", db_url, "--policy", "nope")
    assert out.returncode != 0 and "unknown policy 'nope'" in out.stderr


def test_replay_compare_table_for_a_file():
    out = run_cli(
        "replay",
        str(CONVERSATIONS / "long_520.jsonl"),
        "--compare",
        "fifo,lru,measured",
        "--json",
        env_extra=CL100K_MODEL,
    )
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["compare"]
    assert [r["policy"] for r in rows] == ["fifo", "lru", "measured"]
    # under the file's own setting the misses are the cites of evicted turns it drops, which the
    # hand-reviewed storage replay records
    stored = json.loads((CONVERSATIONS / "long_520.expected.json").read_text(encoding="utf-8"))
    assert next(r for r in rows if r["policy"] == "measured")["misses"] == stored["dropped_cites"]
    assert sum(r["best"] for r in rows) >= 1
    bad = run_cli("replay", str(CONVERSATIONS / "pins.jsonl"), "--compare", "fifo,xx")
    assert bad.returncode != 0 and "unknown policy xx" in bad.stderr
