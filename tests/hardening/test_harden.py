"""Hardening: access fails closed, imports are bounded and never hold the write lock for long, an
answer is stored once, caches are bounded by bytes and never serve a deleted conversation's state."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select, text

from assistant.cache import ByteCache
from assistant.errors import AlreadyAnswered
from assistant.replay import export_transcript, replay, settings_from
from assistant.service import ChatService
from assistant.store import MemoryStore, NotFound, OwnerScope
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from cli.main import main
from memory import transcript as T
from memory.types import MemorySettings
from storage.db import make_engine
from storage.models import Conversation, Turn


def _count(store, model, **where) -> int:
    with store.engine.connect() as c:
        q = select(func.count()).select_from(model)
        for k, v in where.items():
            q = q.where(getattr(model, k) == v)
        return c.execute(q).scalar_one()


# ----- access ------------------------------------------------------------------------------------


@pytest.mark.parametrize("nobody", [None, ""])
def test_a_store_without_an_owner_sees_only_owner_less_conversations(store, nobody):
    mine = store.create("ana's", owner="ana")
    loose = store.create("from before sign-in")
    assert [c.id for c in store.conversations(owner=nobody)] == [loose]
    for read in (store.conversation, store.layer, store.view, store.transcript, store.pending_user_turn):
        with pytest.raises(NotFound):
            read(mine, owner=nobody)
    with pytest.raises(NotFound):
        with store.transaction(mine, owner=nobody):
            pass
    with pytest.raises(NotFound):
        store.delete(mine, owner=nobody)
    assert store.conversation(mine, owner="ana").title == "ana's"
    # "" is no owner: what it creates is owner-less, like None
    assert store.conversation(store.create("x", owner=""), owner=None).owner is None


def test_any_owned_tells_whether_an_unscoped_page_would_hide_someones_conversations(store):
    assert store.any_owned() is False
    store.create("loose")
    assert store.any_owned() is False
    store.create("ana's", owner="ana")
    assert store.any_owned() is True


def test_claim_gives_an_owner_less_conversation_to_one_user_and_never_takes_an_owned_one(store):
    loose = store.create("before sign-in")
    ana = store.create("ana's", owner="ana")
    OwnerScope(store, "bo").claim(loose)
    assert store.conversation(loose, owner="bo").owner == "bo"
    with pytest.raises(NotFound):
        store.conversation(loose)
    for conv in (loose, ana):  # owned now: nobody can claim it
        with pytest.raises(NotFound):
            store.claim(conv, owner="eve")
    assert store.conversation(ana, owner="ana").owner == "ana"


def test_the_cli_without_user_never_touches_another_users_conversation(db_url, capsys):
    runtime_store = MemoryStore(make_engine(db_url))
    svc = ChatService(runtime_store, FakeLLM(), HashEmbedder(), _counter())
    ana = runtime_store.create("ana's", owner="ana")
    svc.ask(ana, "ana's private note", owner="ana")
    from assistant import runtime

    runtime.get_service(db_url, llm=FakeLLM(), embedder=HashEmbedder())
    assert main(["ask", "hello from the terminal", "--db", db_url]) == 0
    assert _count(runtime_store, Turn, conversation_id=ana) == 2  # ana's conversation is untouched
    loose = [c for c in runtime_store.conversations() if c.id != ana]
    assert len(loose) == 1 and loose[0].owner is None
    assert main(["claim", str(loose[0].id), "--user", "bo", "--db", db_url]) == 0
    assert runtime_store.conversation(loose[0].id, owner="bo").owner == "bo"
    with pytest.raises(SystemExit, match="already has an owner"):
        main(["claim", str(ana), "--user", "bo", "--db", db_url])
    capsys.readouterr()


def test_import_without_user_says_the_conversation_is_owner_less(db_url, tmp_path, capsys):
    f = tmp_path / "c.jsonl"
    f.write_text('{"role": "user", "content": "hello"}\n', encoding="utf-8")
    assert main(["import", str(f), "--db", db_url]) == 0
    err = capsys.readouterr().err
    assert "owner-less" in err and "lagmem claim" in err


def _counter():
    from assistant.models.tokens import make_token_counter

    return make_token_counter(None)


# ----- bounded imports ----------------------------------------------------------------------------


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
    assert answer.answer_turn == 2 and _count(other, Turn, conversation_id=bo) == 2
    conv = result["log"].conversation_id
    assert _count(other, Turn, conversation_id=conv) == 20_000
    assert other.conversation(conv, owner="ana").step == 20_000
    assert result["log"].write.chunks > 2 and result["log"].timeline == []


def test_an_import_that_fails_while_writing_leaves_nothing(store, counter, monkeypatch):
    before = (_count(store, Conversation), _count(store, Turn))
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
    assert (_count(store, Conversation), _count(store, Turn)) == before


def test_an_import_gives_the_same_conversation_as_a_replay_line_by_line(store, counter):
    t = T.parse(
        (__import__("pathlib").Path(__file__).parents[1] / "conversations" / "pins.jsonl").read_text(encoding="utf-8")
    )
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
    assert _count(store, Conversation) == 0 and _count(store, Turn) == 0


def test_file_limits_are_clear_errors(monkeypatch):
    monkeypatch.setattr(T, "MAX_TURNS", 3)
    with pytest.raises(T.TranscriptError, match="more than 3 turns") as err:
        T.parse("\n".join('{"role": "user", "content": "x"}' for _ in range(4)))
    assert err.value.line == 4
    monkeypatch.setattr(T, "MAX_FILE_CHARS", 10)
    with pytest.raises(T.TranscriptError, match="limit is 10"):
        T.parse('{"role": "user", "content": "hello there"}')


# ----- consistency --------------------------------------------------------------------------------


def test_two_tabs_retrying_the_same_turn_store_one_answer(store, counter):
    svc = ChatService(store, FakeLLM(), HashEmbedder(), counter)
    conv = store.create("c")
    svc.send(conv, "the first message")  # its answer failed: pending
    tab_a, tab_b = svc.answer_pending(conv), svc.answer_pending(conv)
    tab_a.run()
    with pytest.raises(AlreadyAnswered):
        tab_b.run()
    assert [t.role for t in store.view(conv).turns] == ["user", "assistant"]


def test_interleaved_tabs_each_get_their_answer_once(store, counter):
    """Tab B sends while tab A streams: both messages are answered, each once; a late retry of A
    (from a third tab that still shows it unanswered) stores nothing."""
    svc = ChatService(store, FakeLLM(), HashEmbedder(), counter)
    conv = store.create("c")
    tab_a = svc.send(conv, "from tab a")
    tab_b = svc.send(conv, "from tab b, while a streams")
    assert tab_a.run().answer_turn == 3 and tab_b.run().answer_turn == 4
    late = svc.answer_pending(conv)
    assert late is None  # the last turn is an answer: nothing pending
    from assistant.service import Exchange

    stale = Exchange(svc, type(tab_a.result)(conv, 1), "from tab a", tab_a.vec, 0.0, None)
    with pytest.raises(AlreadyAnswered):
        stale.run()
    with store.engine.connect() as c:
        rows = c.execute(
            select(Turn.seq, Turn.role, Turn.reply_to).where(Turn.conversation_id == conv).order_by(Turn.seq)
        ).all()
    assert [tuple(r) for r in rows] == [(1, "user", None), (2, "user", None), (3, "assistant", 1), (4, "assistant", 2)]


# ----- caches -------------------------------------------------------------------------------------


def test_byte_cache_is_bounded_by_bytes_and_drops_the_least_recently_used():
    c = ByteCache(100)
    c.put("a", 1, 40)
    c.put("b", 2, 40)
    assert c.get("a") == 1  # a is now the most recently used
    c.put("c", 3, 40)
    assert c.get("b") is None and c.get("a") == 1 and c.get("c") == 3 and c.bytes == 80
    c.put("huge", 4, 101)
    assert c.get("huge") is None and c.bytes == 80


def test_a_reused_id_never_gets_the_deleted_conversations_layer(db_url):
    """Ids are never given twice now, but a database from before (SQLite reused the id of the last
    deleted row) may hold a conversation under a deleted one's id: another process deletes, the id
    names a new conversation (written here as such a database would), and this process's cached
    layer (same id, same version) must not be applied to it."""
    mine, theirs = MemoryStore(make_engine(db_url)), MemoryStore(make_engine(db_url))
    conv = mine.create("old", MemorySettings(budget=1000))
    with mine.transaction(conv) as tx:
        tx.add_turn("user", "old text", 5)
    theirs.delete(conv)
    with theirs.engine.begin() as c:
        c.execute(
            text(
                "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark,"
                " pin_share, policy_params, step, version, dropped_cites, auto_restore, pending) VALUES (:id, 'new',"
                " '2030-01-01 00:00:00', '2030-01-01 00:00:00', 1000, 4, 'measured', 1.0, 0.5, '{}', 0, 1, 0, :no, :no)"
            ),
            {"id": conv, "no": False},
        )
    with theirs.transaction(conv) as tx:
        tx.add_turn("user", "new text", 7)
    with mine.transaction(conv) as tx:
        assert [t.tokens for t in tx.layer.turns()] == [7]


class CountingEmbedder(HashEmbedder):
    """HashEmbedder that counts the texts it embeds (under another model name and size if asked)."""

    def __init__(self, dim: int = 64, name: str = "hash-bow"):
        super().__init__(dim)
        self.model_name, self.texts = name, []

    def encode(self, texts):
        self.texts += [texts] if isinstance(texts, str) else list(texts)
        return super().encode(texts)


def _vectors(store, conv):
    with store.engine.connect() as c:
        return c.execute(
            select(Turn.seq, Turn.embedding_model, Turn.embedding_dim)
            .where(Turn.conversation_id == conv)
            .order_by(Turn.seq)
        ).all()


def test_imported_turns_are_embedded_once_and_again_only_for_another_model(store, counter):
    lines = [
        f'{{"role": "{"user" if i % 2 == 0 else "assistant"}", "content": "imported turn {i} on topic {i}"}}'
        for i in range(12)
    ]
    conv = replay(store, T.parse("\n".join(lines)), counter, MemorySettings(budget=10**6), atomic=True).conversation_id
    assert {m for _, m, _ in _vectors(store, conv)} == {None}  # an import stores no vectors

    first = CountingEmbedder()
    ChatService(store, FakeLLM(), first, counter).ask(conv, "what was turn 3 about?")
    assert sum(t.startswith("imported turn") for t in first.texts) == 12
    assert {(m, d) for _, m, d in _vectors(store, conv)} == {("hash-bow", 64)}

    again = CountingEmbedder()  # another process: reads the stored vectors, embeds only the new texts
    ChatService(store, FakeLLM(), again, counter).ask(conv, "and turn 5?")
    assert not any(t.startswith("imported turn") for t in again.texts)

    other = CountingEmbedder(dim=32, name="another-model")  # a model change: re-embedded, no mixed lengths
    result = ChatService(store, FakeLLM(), other, counter).ask(conv, "and turn 7?")
    assert result.answer_turn is not None
    assert sum(t.startswith("imported turn") for t in other.texts) == 12
    assert {(m, d) for seq, m, d in _vectors(store, conv) if seq <= 16} == {("another-model", 32)}


# ----- model output ------------------------------------------------------------------------------


def test_model_output_past_the_cap_is_a_bad_response(fake_openai, monkeypatch):
    from assistant.errors import BadResponse
    from assistant.models import llm
    from bench.fakes.openai_http import Text

    monkeypatch.setattr(llm, "MAX_OUTPUT_CHARS", 100)
    client = llm.LLMClient(
        llm.LLMConfig(
            backend="compatible",
            base_url=fake_openai.base_url,
            api_key="sk-fake",
            model="fake-model",
            timeout=2.0,
            max_retries=0,
        )
    )
    messages = [{"role": "user", "content": "hi"}]
    fake_openai.reply("x" * 100, "y" * 101)
    assert client.complete(messages) == "x" * 100
    with pytest.raises(BadResponse, match="100 characters"):
        client.complete(messages)
    fake_openai.enqueue(Text("z" * 150, chunk_size=10))
    got = []
    with pytest.raises(BadResponse, match="100 characters"):
        for delta in client.stream(messages):
            got.append(delta)
    assert len("".join(got)) <= 100


def test_deeply_nested_retrieval_output_is_an_llm_error_not_a_recursion_error(store, counter):
    from assistant.errors import BadResponse

    llm = FakeLLM()
    svc = ChatService(store, llm, HashEmbedder(), counter)
    conv = store.create("c")
    svc.ask(conv, "apples grow in the orchard")
    llm.enqueue('{"turns": ' + "[" * 100_000)
    with pytest.raises(BadResponse, match="nested too deeply|characters long"):
        svc.ask(conv, "where do apples grow?")
    llm.enqueue("[" * 5000)
    with pytest.raises(BadResponse, match="nested too deeply"):
        svc.ask(conv, "where do apples grow, again?")


def test_bench_pages_prints_import_lock_and_draw_times(tmp_path, capsys):
    out = tmp_path / "pages.json"
    assert main(["bench", "pages", "--turns", "40", "--draws", "1", "--json", str(out)]) == 0
    import json

    (r,) = json.loads(out.read_text())["results"]
    assert r["turns"] == 40 and r["write_transactions"] >= 2  # turns, citations (no evictions under 2,000 tokens)
    assert r["chat_draw_s"] > 0 and r["inspector_draw_s"] > 0 and r["longest_write_s"] > 0
    assert r["chat_changed_s"] > 0 and r["inspector_changed_s"] > 0  # drawn again after a new exchange
    assert r["chat_first_s"] > 0 and r["inspector_first_s"] > 0
    assert "inspector s" in capsys.readouterr().out


def test_a_retry_after_a_model_change_embeds_the_message_with_the_new_model(store, counter):
    conv = store.create("c")
    ChatService(store, FakeLLM(), HashEmbedder(), counter).ask(conv, "apples grow in the orchard")
    ChatService(store, FakeLLM(), HashEmbedder(), counter).send(conv, "where do apples grow?")  # its answer failed
    other = CountingEmbedder(dim=32, name="another-model")
    result = ChatService(store, FakeLLM(), other, counter).answer_pending(conv).run()
    assert result.answer_turn == 4 and "where do apples grow?" in other.texts
