"""Saved conversations replayed through the real layer and a real SQLite file.

Each ``tests/conversations/NAME.jsonl`` has ``NAME.expected.json``: the replay JSON that was read
and checked by hand when it was written (see the comments below for what each one shows).
Regenerate after an intended behaviour change with ``LAGMEM_UPDATE_EXPECTED=1 pytest tests/assistant/test_replay.py``
and review the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from assistant.replay import export_transcript, replay, settings_from
from memory import transcript as T
from tests.conftest import CONVERSATIONS

FILES = sorted(p.stem for p in CONVERSATIONS.glob("*.jsonl"))
ROOT = CONVERSATIONS.parent.parent


def run_cli(*args, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, cwd=ROOT, env=env)


def replay_json(store, counter, name, **overrides):
    t = T.parse((CONVERSATIONS / f"{name}.jsonl").read_text(encoding="utf-8"))
    log = replay(store, t, counter, settings_from(t.header, **overrides))
    return json.loads(json.dumps(log.as_dict(), ensure_ascii=False, sort_keys=True))


def test_there_are_enough_saved_conversations():
    assert len(FILES) >= 6
    assert any(len(T.parse((CONVERSATIONS / f"{n}.jsonl").read_text()).turns) >= 500 for n in FILES)


@pytest.mark.parametrize("name", FILES)
def test_replay_matches_the_checked_in_timeline(name, store, counter):
    got = replay_json(store, counter, name)
    expected_path = CONVERSATIONS / f"{name}.expected.json"
    if os.environ.get("LAGMEM_UPDATE_EXPECTED"):
        expected_path.write_text(json.dumps(got, ensure_ascii=False, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    assert got == json.loads(expected_path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", FILES)
def test_replay_satisfies_the_contract(name, store, counter):
    got = replay_json(store, counter, name)
    lag = got["settings"]["effective_lag"]
    for entry in got["timeline"]:
        unevictable = set(entry["protected"]) | set(entry["pinned"])
        if entry["used_tokens"] > entry["budget"]:
            tokens = {t["turn"]: t["tokens"] for t in got["turns"]}
            # over budget only when what remains is pinned or protected
            assert set(entry["active"]) <= unevictable, entry
            assert sum(tokens[n] for n in entry["active"]) == entry["used_tokens"]
    arrival = {t["turn"]: t["turn"] for t in got["turns"]}
    for e in got["evictions"]:
        if e["reason"].endswith("arrived"):
            assert e["step"] - arrival[e["turn"]] >= lag or e["turn"] in _restored(got)


def _restored(got):
    return {e["turn"] for e in got["events"] if e["event"] in ("restore", "pin")}


def test_pins_keep_a_turn_until_it_is_unpinned(store, counter):
    got = replay_json(store, counter, "pins")
    unpinned_at = next(e["step"] for e in got["events"] if e["event"] == "unpin")
    assert all(e["turn"] != 1 or e["step"] >= unpinned_at for e in got["evictions"])
    assert all(1 in entry["active"] for entry in got["timeline"] if entry["step"] <= unpinned_at)


def test_negative_feedback_changes_what_is_forgotten(store, counter, engine):
    with_feedback = replay_json(store, counter, "negative_feedback")
    text = (CONVERSATIONS / "negative_feedback.jsonl").read_text()
    without = "\n".join(line for line in text.splitlines() if '"event": "feedback"' not in line)
    t = T.parse(without)
    log = replay(store, t, counter, settings_from(t.header))

    def t3(evictions):  # turn 3's importance when the first eviction was decided (evicted or runner-up)
        first = evictions[0] if isinstance(evictions[0], dict) else evictions[0].as_dict()
        ranked = [{"turn": first["turn"], "importance": first["importance"]}, *first["runners_up"]]
        return next(r["importance"] for r in ranked if r["turn"] == 3)

    # turn 3's only later citation came from the answer marked wrong: the feedback takes it away
    assert t3(with_feedback["evictions"]) < t3(log.evictions)


def test_a_turn_larger_than_the_budget_is_kept_while_protected_then_evicted(store, counter):
    got = replay_json(store, counter, "huge_turn")
    big = max(got["turns"], key=lambda t: t["tokens"])
    assert big["tokens"] > got["settings"]["budget"]
    over = [e for e in got["timeline"] if e["used_tokens"] > e["budget"]]
    assert over and all(big["turn"] in e["protected"] for e in over)
    assert big["turn"] in got["final"]["evicted"]


def test_other_settings_drop_cites_instead_of_failing(store, counter):
    got = replay_json(store, counter, "long_520", budget=200, lag=0, policy="fifo")
    assert got["dropped_cites"] > 0
    assert got["settings"]["policy"] == "fifo" and got["settings"]["budget"] == 200


def test_replay_cli_json_is_byte_identical_twice():
    path = str(CONVERSATIONS / "non_ascii.jsonl")
    a, b = run_cli("replay", path, "--json"), run_cli("replay", path, "--json")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    data = json.loads(a.stdout)
    assert {"settings", "turns", "timeline", "evictions", "dropped_cites", "final"} <= set(data)


def test_replay_cli_flags_override_the_header():
    out = run_cli(
        "replay", str(CONVERSATIONS / "pins.jsonl"), "--json", "--budget", "45", "--lag", "1", "--policy", "lru"
    )
    s = json.loads(out.stdout)["settings"]
    assert (s["budget"], s["lag"], s["policy"]) == (45, 1, "lru")


def test_replay_cli_prints_a_readable_timeline():
    out = run_cli("replay", str(CONVERSATIONS / "restore.jsonl"))
    assert out.returncode == 0
    assert (
        "step    1  +T1 user" in out.stdout
        and "evicted T1 (importance 1;" in out.stdout
        and "restore T1" in out.stdout
        and "final:" in out.stdout
    )


def test_a_malformed_file_names_the_line_and_stores_nothing(tmp_path, db_url):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "x", "cites": [5]}\n')
    db = db_url
    out = run_cli("import", str(bad), "--db", db)
    assert out.returncode != 0
    assert "line 2" in out.stderr and "not an earlier turn" in out.stderr
    listing = run_cli("list", "--db", db)
    assert listing.stdout.strip() == ""


@pytest.mark.parametrize("name", FILES)
def test_export_import_export_gives_the_same_file(name, store, counter):
    t = T.parse((CONVERSATIONS / f"{name}.jsonl").read_text(encoding="utf-8"))
    first = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    exported = export_transcript(store, first)
    again = T.parse(exported)
    second = replay(store, again, counter, settings_from(again.header), atomic=True).conversation_id
    assert export_transcript(store, second) == exported


def test_export_and_import_through_the_cli(db_url):
    db = db_url
    out = run_cli("import", str(CONVERSATIONS / "pins.jsonl"), "--db", db)
    assert out.returncode == 0, out.stderr
    conv_id = out.stdout.split()[-1]
    exported = run_cli("export", conv_id, "--db", db).stdout
    parsed = T.parse(exported)
    assert len(parsed.turns) == 12 and parsed.header["title"] == "pins keep a fact"
    assert run_cli("export", "999", "--db", db).returncode != 0


def test_the_terminals_import_progress_is_one_line_rewritten_once_per_percent():
    import io

    from cli.main import import_progress

    out = io.StringIO()
    step = import_progress(250, out)
    for i in range(250):
        step(i)
    text = out.getvalue()
    assert text.count("\r") == 101  # 0% .. 100%: 250 lines, one report per whole percent
    assert text.endswith("\rimport: 250 of 250 lines (100%)\n") and "(50%)" in text
