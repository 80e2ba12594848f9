"""A replay killed with SIGKILL midway loses nothing it committed and leaves nothing half-written:
the memory state rebuilt from the database equals a clean replay of the same prefix. On SQLite, and
on PostgreSQL in the suite's second run (the server rolls back the killed client's transaction)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from assistant.replay import replay, settings_from
from assistant.store import MemoryStore
from memory import transcript as T
from storage.db import make_engine
from storage.repo import load_evictions
from tests.conftest import CL100K_MODEL_ENV, CONVERSATIONS, fresh_db_url

ROOT = CONVERSATIONS.parent.parent
FILE = CONVERSATIONS / "long_520.jsonl"
KILLS = int(os.environ.get("LAGMEM_CRASH_KILLS", "5"))


def _stored_turns(probe) -> int:
    """Committed turns so far (0 while the replay has not created its tables yet)."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with probe.connect() as c:
            return c.execute(text("SELECT count(*) FROM turns")).scalar_one()
    except SQLAlchemyError:
        return 0


def _state(store, conv_id):
    from sqlalchemy.orm import Session

    layer = store.layer(conv_id)
    with Session(store.engine) as s:
        records = load_evictions(s, conv_id)
    return layer.snapshot(), layer.citations(), layer.feedback_values(), records


@pytest.mark.parametrize("attempt", range(KILLS))
def test_sigkill_midway_keeps_every_committed_turn(attempt, tmp_path, db_url, counter):
    from sqlalchemy import create_engine

    probe = create_engine(db_url)  # plain: reading must not migrate or lock anything
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "replay", str(FILE), "--db", db_url, "--json"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **CL100K_MODEL_ENV},
    )
    # kill at a random point: once a random number of turns (2..400 of 520) is stored
    target = random.Random(attempt).randint(2, 400)
    deadline = time.monotonic() + 60
    while _stored_turns(probe) < target and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    probe.dispose()
    assert proc.returncode == -signal.SIGKILL, "the replay ended before it could be killed"

    store = MemoryStore(make_engine(db_url))
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
        clean = MemoryStore(make_engine(fresh_db_url(tmp_path, f"clean{m}")))
        prefix = T.Transcript(transcript.header, transcript.items[:m])
        conv_id = replay(clean, prefix, counter, settings_from(transcript.header), atomic=True).conversation_id
        matches.append(_state(clean, conv_id) == got)
    assert any(matches), "the database does not equal any clean replay of a committed prefix"
