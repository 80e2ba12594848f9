"""Access fails closed: a store without an owner sees only owner-less conversations, a claim gives an
owner-less conversation to one user and never takes an owned one, and the terminal without --user
never touches another user's conversation."""

from __future__ import annotations

import pytest

from assistant.service import ChatService
from assistant.store import MemoryStore, NotFound, OwnerScope
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from cli.main import main
from storage.db import make_engine
from storage.models import Turn
from tests.conftest import count_rows


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
    assert count_rows(runtime_store, Turn, conversation_id=ana) == 2  # ana's conversation is untouched
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
