"""Imports are bounded and never hold the write lock for long: a large import is written in short
transactions (another user's exchange completes meanwhile), a failed one leaves nothing, a stale
pending one is swept, file limits are clear errors; and ``lagmem bench pages`` reports the import's
lock and the pages' draw times."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from assistant.replay import export_transcript, replay, settings_from
from assistant.service import ChatService
from assistant.store import MemoryStore
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from cli.main import main
from memory import transcript as T
from memory.types import MemorySettings
from storage.db import make_engine
from storage.models import Conversation, Turn
from tests.conftest import count_rows


def _big(n: int, budget: int = 10**6) -> T.Transcript:
    lines = [f'{{"lagmem": 1, "title": "big", "budget": {budget}, "lag": 4}}']
    lines += [f'{{"role": "{"user" if i % 2 == 0 else "assistant"}", "content": "short turn {i}"}}' for i in range(n)]
    return T.parse("\n".join(lines))


def test_another_users_exchange_completes_while_a_large_import_is_being_written(db_url, counter):
    """The import writes in short transactions: paused after its first chunk (half-written), it
    holds no lock, another process's user stores a whole exchange, and the import then lands whole.
    (Written in one transaction, the other user would wait for the whole import.)"""
    importer = MemoryStore(make_engine(db_url))
    other = MemoryStore(make_engine(db_url))  # another process on the same database file
    svc = ChatService(other, FakeLLM(), HashEmbedder(), counter)
    bo = other.create("bo's", owner="bo")
    first_chunk, exchanged = threading.Event(), threading.Event()
    write = importer.write_rows

    def paused_write(table, rows):
        write(table, rows)
        if not first_chunk.is_set():
            first_chunk.set()
            assert exchanged.wait(60), "the other user's exchange did not complete during the import"

    importer.write_rows = paused_write
    result: dict = {}

    def run_import():
        try:
            result["log"] = replay(
                importer, _big(20_000), counter, MemorySettings(budget=10**6), owner="ana", atomic=True
            )
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            result["error"] = exc
            first_chunk.set()

    t = threading.Thread(target=run_import)
    t.start()
    assert first_chunk.wait(120)
    assert "error" not in result
    # half-written and invisible: ana sees nothing yet, and nobody else does either
    assert other.conversations(owner="ana") == [] and other.conversations() == []
    answer = svc.ask(bo, "my own message, while ana imports", owner="bo")
    exchanged.set()
    t.join(120)
    assert "error" not in result, result.get("error")
    assert answer.answer_turn == 2 and count_rows(other, Turn, conversation_id=bo) == 2
    conv = result["log"].conversation_id
    assert count_rows(other, Turn, conversation_id=conv) == 20_000
    assert other.conversation(conv, owner="ana").step == 20_000
    assert result["log"].write.chunks > 2 and result["log"].timeline == []


def test_an_import_that_fails_while_writing_leaves_nothing(store, counter, monkeypatch):
    before = (count_rows(store, Conversation), count_rows(store, Turn))
    calls = []
    write = store.write_rows

    def failing(table, rows):
        calls.append(table)
        if len(calls) == 3:
            raise OSError("disk went away")
        write(table, rows)

    monkeypatch.setattr(store, "write_rows", failing)
    with pytest.raises(OSError):
        replay(store, _big(6000), counter, MemorySettings(budget=10**6), atomic=True)
    assert (count_rows(store, Conversation), count_rows(store, Turn)) == before


def test_an_import_gives_the_same_conversation_as_a_replay_line_by_line(store, counter):
    t = T.parse((Path(__file__).parents[1] / "conversations" / "pins.jsonl").read_text(encoding="utf-8"))
    settings = settings_from(t.header)
    slow = replay(store, t, counter, settings).conversation_id
    fast = replay(store, t, counter, settings, atomic=True).conversation_id
    assert export_transcript(store, fast) == export_transcript(store, slow)
    a, b = store.view(slow), store.view(fast)
    assert a.layer.snapshot() == b.layer.snapshot()
    assert [r.as_dict() for r in a.evictions] == [r.as_dict() for r in b.evictions]
    assert [(e.kind, e.turn, e.step, e.detail) for e in a.events] == [
        (e.kind, e.turn, e.step, e.detail) for e in b.events
    ]


def test_a_stale_pending_import_is_swept(store, counter):
    conv = store.begin_import("cut off by a crash", MemorySettings())
    store.write_rows(
        "turns",
        [
            dict(
                conversation_id=conv.id,
                seq=1,
                role="user",
                content="x",
                tokens=1,
                state="active",
                pinned=False,
                protected_since=1,
                incomplete=False,
                created_at=conv.created_at,
            )
        ],
    )
    assert store.sweep_imports(older_than_seconds=3600) == 0
    assert store.sweep_imports(older_than_seconds=0) == 1
    assert count_rows(store, Conversation) == 0 and count_rows(store, Turn) == 0


def test_file_limits_are_clear_errors(monkeypatch):
    monkeypatch.setattr(T, "MAX_TURNS", 3)
    with pytest.raises(T.TranscriptError, match="more than 3 turns") as err:
        T.parse("\n".join('{"role": "user", "content": "x"}' for _ in range(4)))
    assert err.value.line == 4
    monkeypatch.setattr(T, "MAX_FILE_CHARS", 10)
    with pytest.raises(T.TranscriptError, match="limit is 10"):
        T.parse('{"role": "user", "content": "hello there"}')


def test_bench_pages_prints_import_lock_and_draw_times(tmp_path, capsys):
    out = tmp_path / "pages.json"
    assert main(["bench", "pages", "--turns", "40", "--draws", "1", "--json", str(out)]) == 0
    (r,) = json.loads(out.read_text())["results"]
    assert r["turns"] == 40 and r["write_transactions"] >= 2  # turns, citations (no evictions under 2,000 tokens)
    assert r["chat_draw_s"] > 0 and r["inspector_draw_s"] > 0 and r["longest_write_s"] > 0
    assert r["chat_changed_s"] > 0 and r["inspector_changed_s"] > 0  # drawn again after a new exchange
    assert r["chat_first_s"] > 0 and r["inspector_first_s"] > 0
    assert "inspector s" in capsys.readouterr().out
