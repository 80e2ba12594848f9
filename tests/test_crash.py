"""A replay killed with SIGKILL midway loses nothing it committed and leaves nothing half-written:
the memory state rebuilt from the database equals a clean replay of the same prefix."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from assistant.replay import replay, settings_from
from assistant.store import MemoryStore
from memory import transcript as T
from storage.db import make_engine
from storage.repo import load_evictions

from .conftest import CONVERSATIONS

ROOT = CONVERSATIONS.parent.parent
FILE = CONVERSATIONS / "long_520.jsonl"
KILLS = int(os.environ.get("LAGMEM_CRASH_KILLS", "5"))


def _stored_turns(path) -> int:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("SELECT count(*) FROM turns").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _state(store, conv_id):
    from sqlalchemy.orm import Session

    layer = store.layer(conv_id)
    with Session(store.engine) as s:
        records = load_evictions(s, conv_id)
    return layer.snapshot(), layer.citations(), layer.feedback_values(), records


@pytest.mark.parametrize("attempt", range(KILLS))
def test_sigkill_midway_keeps_every_committed_turn(attempt, tmp_path, counter):
    db = tmp_path / "crash.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant.cli", "replay", str(FILE), "--db", f"sqlite:///{db}", "--json"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    # kill at a random point: once a random number of turns (2..400 of 520) is stored
    target = random.Random(attempt).randint(2, 400)
    deadline = time.monotonic() + 60
    while _stored_turns(db) < target and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the replay ended before it could be killed"

    store = MemoryStore(make_engine(f"sqlite:///{db}"))
    (conv,) = store.conversations()
    got = _state(store, conv.id)
    k = got[0].step
    assert k >= 2 and conv.step == k
    assert sorted(got[0].active + got[0].evicted) == list(range(1, k + 1))  # gapless, nothing half-written

    # a clean replay of the committed prefix: the file up to turn k plus 0..j of the events after it
    transcript = T.parse(FILE.read_text(encoding="utf-8"))
    cut = next(i for i, item in enumerate(transcript.items) if isinstance(item, T.TurnLine) and item.number == k) + 1
    candidates = [cut]
    while cut < len(transcript.items) and isinstance(transcript.items[cut], T.EventLine):
        cut += 1
        candidates.append(cut)
    matches = []
    for m in candidates:
        clean = MemoryStore(make_engine(f"sqlite:///{tmp_path / f'clean{m}.db'}"))
        prefix = T.Transcript(transcript.header, transcript.items[:m])
        conv_id = replay(clean, prefix, counter, settings_from(transcript.header), atomic=True).conversation_id
        matches.append(_state(clean, conv_id) == got)
    assert any(matches), "the database does not equal any clean replay of a committed prefix"
