"""Faults: SIGKILL during exchanges (repeated), a model server that dies, hangs or talks garbage,
a full disk and a read-only database. After each: nothing committed is lost, nothing half-written
is stored, the memory state equals a clean replay of the exported conversation, the user gets a
clear error and a retry works."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import re
import signal
import sqlite3
import time

import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from assistant.errors import LLMError, LLMTimeout, StorageError
from assistant.replay import export_transcript, replay, settings_from
from assistant.retrieval.step import CiteCheck, RetrievalConfig
from assistant.service import ChatService
from assistant.store import MemoryStore
from bench.fakes.embedder import HashEmbedder
from bench.fakes.openai_http import Drop, Hang, Raw, Status, StreamError
from bench.loadtest import check_contract
from memory import transcript as T
from memory.types import MemorySettings
from storage import repo
from storage.db import make_engine
from storage.models import CitationRow, EvictionRow
from tests.conftest import read_only_url
from tests.models.test_llm import client_for

KILLS = int(os.environ.get("LAGMEM_CRASH_KILLS", "10"))
SETTINGS = MemorySettings(budget=150, lag=2, policy="measured")
NO_CHECK = RetrievalConfig(check=CiteCheck(min_similarity=None))
WORDS = "apple river budget lisbon piano garden orbit cable violet harbor quartz meadow".split()
_IDS = re.compile(r"^\[T(\d+)\]", re.MULTILINE)


class EchoLLM:
    """Deterministic model: cites the first two offered turns (and an id never offered)."""

    model, backend, structured = "echo", "fake", "json_object_schema"

    def complete(self, messages, **_kw):
        return json.dumps({"turns": [int(n) for n in _IDS.findall(messages[-1]["content"])][:2] + [4242]})

    def stream(self, messages, **_kw):
        yield from ("answer ", "about ", messages[-1]["content"][:40])


def _service(url, counter, llm=None):
    return ChatService(
        MemoryStore(make_engine(url, migrate=False)), llm or EchoLLM(), HashEmbedder(), counter, retrieval=NO_CHECK
    )


def rows(store, conv):
    with Session(store.reader) as s:
        return repo.turn_rows(s, conv)


def assert_consistent(store, conv, counter, tmp_path):
    """Gapless, within the contract, and equal to a clean replay of the exported conversation."""
    turns = rows(store, conv)
    assert [t.seq for t in turns] == list(range(1, store.conversation(conv).step + 1))
    assert check_contract(store, conv) == []
    text = export_transcript(store, conv)
    t = T.parse(text)
    clean = MemoryStore(make_engine(f"sqlite:///{tmp_path / f'clean-{time.monotonic_ns()}.db'}"))
    clean_id = replay(clean, t, counter, settings_from(t.header), atomic=True).conversation_id
    assert clean.layer(clean_id).snapshot() == store.layer(conv).snapshot()
    with Session(store.reader) as s, Session(clean.reader) as c:
        assert repo.load_evictions(c, clean_id) == repo.load_evictions(s, conv)
    assert export_transcript(clean, clean_id) == text
    clean.engine.dispose()


# ----- SIGKILL at random points, repeated ------------------------------------------------------


def _worker(url, conv, log_path, seed, counter):  # runs in a forked child until it is killed
    svc = _service(url, counter)
    rng = random.Random(seed)
    with open(log_path, "a", encoding="utf-8") as log:

        def note(**entry):
            log.write(json.dumps(entry) + "\n")
            log.flush()

        pending = svc.answer_pending(conv)  # a message whose answer was killed: answer it first
        if pending is not None:
            r = pending.run()
            note(user=r.user_turn, answer=r.answer_turn, cited=r.cited, evicted=[(e.turn, e.step) for e in r.evictions])
        for j in range(10_000):
            text = f"s{seed}-m{j} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))
            r = svc.ask(conv, text)
            note(
                user=r.user_turn,
                answer=r.answer_turn,
                content=text,
                cited=r.cited,
                evicted=[(e.turn, e.step) for e in r.evictions],
            )
            if j % 3 == 2:
                with svc.store.transaction(conv) as tx:
                    n = rng.randint(1, tx.layer.step)
                    kind = rng.choice(("pin", "unpin", "restore", "feedback"))
                    if kind == "feedback":
                        tx.feedback(n, rng.choice((-1.0, 1.0)))
                    else:
                        recs = getattr(tx, kind)(n)
                        recs = recs[0] if kind == "pin" else recs
                note(event=kind, turn=n)


def test_sigkill_during_exchanges_loses_nothing_committed(db_url, counter, tmp_path):
    store = MemoryStore(make_engine(db_url))
    conv = store.create("crash", SETTINGS)
    store.engine.dispose()
    log_path = tmp_path / "committed.jsonl"
    ctx = mp.get_context("fork")
    rng = random.Random(6)
    survived = 0
    for cycle in range(KILLS):
        proc = ctx.Process(target=_worker, args=(db_url, conv, log_path, cycle, counter), daemon=True)
        proc.start()
        time.sleep(rng.uniform(0.03, 0.3))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        assert proc.exitcode == -signal.SIGKILL, "the worker ended before it was killed"

        # restart: every committed turn, citation and eviction record is there
        store = MemoryStore(make_engine(db_url, migrate=False))
        log = [json.loads(line) for line in log_path.read_text().splitlines() if line.endswith("}")]
        by_seq = {t.seq: t for t in rows(store, conv)}
        with Session(store.reader) as s:
            cites = set(
                s.execute(
                    select(CitationRow.answer_turn, CitationRow.turn).where(CitationRow.conversation_id == conv)
                ).all()
            )
            evictions = set(
                s.execute(select(EvictionRow.turn, EvictionRow.step).where(EvictionRow.conversation_id == conv)).all()
            )
        for e in (e for e in log if "user" in e):
            assert by_seq[e["user"]].role == "user" and by_seq[e["answer"]].role == "assistant"
            if "content" in e:
                assert by_seq[e["user"]].content == e["content"]
            assert {(e["answer"], c) for c in e["cited"]} <= cites
            assert {tuple(x) for x in e["evicted"]} <= evictions
        assert_consistent(store, conv, counter, tmp_path)
        store.engine.dispose()
        survived += 1
    print(f"{survived} SIGKILL/restart cycles survived; {len(by_seq)} turns stored")


# ----- the model server fails --------------------------------------------------------------------

IDS = '{"turns": [1]}'
FAULTS = {
    "dies mid-stream": (IDS, Drop("half an answ")),
    "error event mid-stream": (IDS, StreamError("partial answer")),
    "hangs mid-stream": (IDS, Hang(15, then="a slow answer", after_chunks=1)),
    "retrieval times out": (Hang(15),),
    "garbage instead of JSON": (Raw(b"<html>not json</html>"),),
    "garbage stream": (IDS, Raw(b"data: {broken\n\n", content_type="text/event-stream")),
    "server error": (Status(500, "boom"),),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_model_server_faults_keep_the_users_turn_and_retry_works(fault, fake_openai, db_url, counter, tmp_path):
    # 3 s: a healthy answer from the local fake arrives well within it even on a loaded machine; the
    # hangs above outlast it
    llm = client_for(fake_openai, timeout=3.0, max_retries=0, structured="json_object_schema")
    store = MemoryStore(make_engine(db_url))
    svc = ChatService(store, llm, HashEmbedder(), counter, retrieval=NO_CHECK)
    conv = store.create("faults", MemorySettings(budget=60, lag=1))
    for i in range(3):
        svc.ask(conv, f"fact {i}: the apple river garden is near the piano")
    before = len(rows(store, conv))
    fake_openai.enqueue(*FAULTS[fault])
    with pytest.raises(LLMError) as err:
        svc.ask(conv, "what about the apple?")
    assert err.value.message and "Traceback" not in err.value.message
    if "hang" in fault or "times out" in fault:
        assert isinstance(err.value, LLMTimeout)
    stored = rows(store, conv)
    assert len(stored) == before + 1 and stored[-1].role == "user" and stored[-1].content == "what about the apple?"
    assert not any(p in t.content for t in stored for p in ("half an answ", "partial answer", "a slo"))  # not stored
    assert_consistent(store, conv, counter, tmp_path)
    fake_openai.reply(IDS, "The apple is by the river.")
    r = svc.answer_pending(conv).run()
    assert (r.user_turn, r.answer_turn, r.answer) == (before + 1, before + 2, "The apple is by the river.")
    assert svc.answer_pending(conv) is None
    assert_consistent(store, conv, counter, tmp_path)
    store.engine.dispose()


# ----- disk full, read-only ----------------------------------------------------------------------


def _integrity(path) -> str:
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def test_a_full_disk_is_a_clear_error_and_corrupts_nothing(tmp_path, counter):
    path = tmp_path / "full.db"
    url = f"sqlite:///{path}"
    svc = _service(url, counter)
    make_engine(url).dispose()  # migrated
    svc = _service(url, counter)
    conv = svc.store.create("full", SETTINGS)
    for i in range(3):
        svc.ask(conv, f"before the disk filled up {i}")
    svc.store.engine.dispose()
    pages = sqlite3.connect(path).execute("PRAGMA page_count").fetchone()[0]
    full = _service(url, counter)

    @event.listens_for(full.store.engine, "connect")
    def _cap(dbapi_conn, _record):  # the "disk" holds only a few more pages
        dbapi_conn.execute(f"PRAGMA max_page_count = {pages + 3}")

    big = " ".join(random.Random(1).choice(WORDS) for _ in range(15_000))
    with pytest.raises(StorageError) as err:
        for _ in range(50):
            full.ask(conv, big)
    assert err.value.kind == "full" and "full" in err.value.message
    full.store.engine.dispose()

    assert _integrity(path) == "ok"
    svc = _service(url, counter)
    stored = rows(svc.store, conv)
    assert [t.content for t in stored[:6:2]] == [f"before the disk filled up {i}" for i in range(3)]
    assert_consistent(svc.store, conv, counter, tmp_path)
    r = svc.answer_pending(conv).run() if stored[-1].role == "user" else svc.ask(conv, "space is back")
    assert r.answer_turn == len(rows(svc.store, conv))
    svc.store.engine.dispose()


def test_a_read_only_database_is_a_clear_error_and_stays_intact(db_url, counter, tmp_path, monkeypatch):
    svc = _service(db_url, counter)
    make_engine(db_url).dispose()
    svc = _service(db_url, counter)
    conv = svc.store.create("ro", SETTINGS)
    for i in range(4):
        svc.ask(conv, f"written while writable {i}")
    before = export_transcript(svc.store, conv)
    svc.store.engine.dispose()

    monkeypatch.chdir(tmp_path)
    ro = _service(read_only_url(db_url), counter)
    assert [c.id for c in ro.store.conversations()] == [conv]  # reading works
    for attempt in (lambda: ro.send(conv, "this cannot be stored"), lambda: ro.store.rename(conv, "new title")):
        with pytest.raises(StorageError) as err:
            attempt()
        assert err.value.kind == "read_only" and "read-only" in err.value.message
    ro.store.engine.dispose()
    assert not (tmp_path / "file:").exists()  # the URI is not taken for a directory to create

    svc = _service(db_url, counter)
    assert export_transcript(svc.store, conv) == before
    if db_url.startswith("sqlite"):
        assert _integrity(make_url(db_url).database) == "ok"
    assert_consistent(svc.store, conv, counter, tmp_path)
    svc.store.engine.dispose()
