"""Saved conversations as memory tests, through the library users get (``assistant.testing`` and
the pytest plugin ``assistant.testing.plugin``, loaded here by ``tests/conftest.py``).

The checked-in ``NAME.timeline.json`` snapshots were written with ``pytest --lagmem-update`` and
are cross-checked below against ``NAME.expected.json``, the storage replay's timeline reviewed by
hand when it was written: the pure replay must make the same evictions at the same steps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from assistant.testing import SnapshotMismatch, check_snapshot, replay, write_snapshot
from memory.transcript import TranscriptError
from tests.conftest import CONVERSATIONS

ROOT = CONVERSATIONS.parent.parent
FILES = sorted(p.stem for p in CONVERSATIONS.glob("*.jsonl"))


@pytest.mark.parametrize("name", FILES)
def test_saved_conversation_matches_its_timeline(name, lagmem_replay):
    memory = lagmem_replay(CONVERSATIONS / f"{name}.jsonl")  # also checks NAME.timeline.json
    stored = json.loads((CONVERSATIONS / f"{name}.expected.json").read_text(encoding="utf-8"))
    assert [(r.turn, r.step) for r in memory.evictions] == [(e["turn"], e["step"]) for e in stored["evictions"]]
    assert list(memory.active) == stored["final"]["active"]
    assert memory.active_tokens == stored["final"]["used_tokens"]
    assert len(memory.misses) == stored["dropped_cites"]  # a cite of an evicted turn is a miss
    event_steps = {e["step"] for e in stored["events"]}
    for mine, theirs in zip(memory.timeline, stored["timeline"]):
        if mine["step"] not in event_steps:  # the snapshot is taken at the end of a step, after its events
            assert {k: mine[k] for k in theirs} == theirs


def test_pins_keep_a_turn_until_unpinned(lagmem_replay, tmp_path):
    path = CONVERSATIONS / "pins.jsonl"
    unpinned = tmp_path / "no_pins.jsonl"
    unpinned.write_text("\n".join(line for line in path.read_text().splitlines() if '"event"' not in line))
    memory = lagmem_replay(path, snapshot=False)
    assert all(memory.kept(1, at_step=s) for s in range(1, 9))  # pinned from step 2 to step 8
    assert memory.active_tokens <= memory.budget == 60
    # a tighter budget: without the pin turn 1 leaves early; with it, only after the unpin (step 8)
    pinned, bare = lagmem_replay(path, snapshot=False, budget=35), lagmem_replay(unpinned, snapshot=False, budget=35)
    assert bare.evicted_at(1) and bare.evicted_at(1)[0] < 8
    assert all(pinned.kept(1, at_step=s) for s in range(1, 9))
    assert all(step > 8 for step in pinned.evicted_at(1))
    assert pinned.active_tokens <= pinned.budget == 35


def test_negative_feedback_lowers_the_wrongly_cited_turn(lagmem_replay, tmp_path):
    path = CONVERSATIONS / "negative_feedback.jsonl"
    without = tmp_path / "no_feedback.jsonl"
    without.write_text("\n".join(line for line in path.read_text().splitlines() if '"event": "feedback"' not in line))
    with_fb, without_fb = lagmem_replay(path, snapshot=False), lagmem_replay(without, snapshot=False)

    def t3(memory):  # turn 3's importance when the first eviction was decided (evicted or runner-up)
        first = memory.evictions[0]
        return {first.turn: first.importance, **dict(first.runners_up)}[3]

    # turn 3's only later citation came from the answer marked wrong: the feedback takes it away
    assert t3(with_fb) < t3(without_fb)


def test_other_settings_get_their_own_snapshot(lagmem_replay):
    memory = lagmem_replay(CONVERSATIONS / "long_520.jsonl", policy="fifo", budget=700)
    assert (CONVERSATIONS / "long_520.budget=700,policy=fifo.timeline.json").exists()
    assert memory.settings.policy == "fifo" and memory.active_tokens <= 700
    assert len(memory.misses) > len(replay(CONVERSATIONS / "long_520.jsonl").misses)


def test_the_api_names_what_is_wrong(tmp_path):
    memory = replay(CONVERSATIONS / "pins.jsonl")
    with pytest.raises(ValueError, match="turn 99 does not exist"):
        memory.kept(99)
    with pytest.raises(ValueError, match="step 40 does not exist"):
        memory.evicted(1, at_step=40)
    with pytest.raises(ValueError, match="unknown policy"):
        replay(CONVERSATIONS / "pins.jsonl", policy="nope")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "x", "cites": [5]}\n')
    with pytest.raises(TranscriptError, match="line 2"):
        replay(bad)


def test_a_changed_memory_fails_with_a_readable_diff(tmp_path):
    path = tmp_path / "pins.jsonl"
    path.write_text((CONVERSATIONS / "pins.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="--lagmem-update"):
        check_snapshot(replay(path))
    write_snapshot(replay(path))
    check_snapshot(replay(path))  # the same memory: no diff
    with pytest.raises(SnapshotMismatch) as exc:
        check_snapshot(replay(path, budget=45))
    text = str(exc.value)
    assert "setting budget: 45 (expected 60)" in text
    assert "turn 2: evicted at step 4 (expected at step 6)" in text  # read off the two timelines
    assert "first step whose memory differs" in text


def _pytest(args: list[str], cwd: Path, extra_path: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (extra_path, str(ROOT)) if p)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
    )


USER_TEST = """
def test_trip(lagmem_replay):
    memory = lagmem_replay("conversations/pins.jsonl")
    assert memory.kept(1, at_step=8)  # pinned until the unpin at step 8
    assert memory.active_tokens <= memory.budget
"""


def _user_project(tmp_path: Path) -> Path:
    (tmp_path / "conversations").mkdir(parents=True)
    (tmp_path / "conversations" / "pins.jsonl").write_text((CONVERSATIONS / "pins.jsonl").read_text(encoding="utf-8"))
    (tmp_path / "test_memory.py").write_text(USER_TEST)
    return tmp_path


def test_plugin_update_then_check_then_diff(tmp_path):
    project = _user_project(tmp_path)
    first = _pytest(["-p", "assistant.testing.plugin"], project)
    assert first.returncode == 1 and "no expected timeline" in first.stdout and "--lagmem-update" in first.stdout
    update = _pytest(["-p", "assistant.testing.plugin", "--lagmem-update"], project)
    assert update.returncode == 0, update.stdout + update.stderr
    snapshot = project / "conversations" / "pins.timeline.json"
    assert json.loads(snapshot.read_text())["settings"]["budget"] == 60
    assert _pytest(["-p", "assistant.testing.plugin"], project).returncode == 0
    saved = project / "conversations" / "pins.jsonl"
    saved.write_text(saved.read_text().replace('"budget": 60', '"budget": 45'))
    changed = _pytest(["-p", "assistant.testing.plugin"], project)
    assert changed.returncode == 1
    assert (
        "differs from pins.timeline.json" in changed.stdout
        and "turn 2: evicted at step 4 (expected at step 6)" in changed.stdout
    )


def test_the_pytest11_entry_point_loads_the_plugin(tmp_path):
    """As after ``pip install lagmem``: a distribution on the path declaring pyproject's entry point."""
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    site = tmp_path / "site"
    dist = site / "lagmem_fake-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lagmem-fake\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()))
    project = _user_project(tmp_path / "project")
    update = _pytest(["--lagmem-update"], project, str(site))
    assert update.returncode == 0, update.stdout + update.stderr
    # loading it again by module name (-p, or a conftest) does not register it twice
    again = _pytest(["-p", "assistant.testing.plugin"], project, str(site))
    assert again.returncode == 0, again.stdout + again.stderr
