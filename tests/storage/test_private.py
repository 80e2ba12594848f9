"""Private conversations: with an owner, a user sees and changes only their own conversations, in
the store (list, read, export, pin, restore, feedback, exchanges) and in the CLI (``--user``)."""

from __future__ import annotations

import pytest

from assistant import runtime
from assistant.replay import export_transcript
from assistant.service import ChatService
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from cli.main import main
from memory.types import MemorySettings
from storage.repo import NotFound


def test_two_users_cannot_read_or_change_each_others_conversations(store, counter, db_url, capsys, monkeypatch):
    svc = ChatService(store, FakeLLM(), HashEmbedder(), counter)
    alice = store.create("alice's plans", MemorySettings(budget=40, lag=1), owner="alice")
    bob = store.create("bob's notes", owner="bob")
    for i in range(4):
        svc.ask(alice, f"alice secret number {i} about the garden and the river", owner="alice")
    svc.ask(bob, "bob's own message", owner="bob")
    evicted = store.layer(alice, owner="alice").snapshot().evicted[0]
    before = export_transcript(store, alice, owner="alice")

    assert [c.id for c in store.conversations(owner="bob")] == [bob]
    assert [c.id for c in store.conversations(owner="alice")] == [alice]
    attempts = {
        "read": lambda: store.conversation(alice, owner="bob"),
        "layer": lambda: store.layer(alice, owner="bob"),
        "export": lambda: export_transcript(store, alice, owner="bob"),
        "ask": lambda: svc.send(alice, "let me in", owner="bob"),
        "retry": lambda: svc.answer_pending(alice, owner="bob"),
        "rename": lambda: store.rename(alice, "mine now", owner="bob"),
        "delete": lambda: store.delete(alice, owner="bob"),
        "settings": lambda: store.update_settings(alice, MemorySettings(budget=5), owner="bob"),
    }
    for verb in ("pin", "restore", "feedback"):

        def change(verb=verb):
            with store.transaction(alice, owner="bob") as tx:
                tx.feedback(2, -1.0) if verb == "feedback" else getattr(tx, verb)(evicted)

        attempts[verb] = change
    for attempt in attempts.values():
        with pytest.raises(NotFound):
            attempt()
    assert export_transcript(store, alice, owner="alice") == before  # nothing changed

    runtime.get_service(db_url, llm=FakeLLM(), embedder=HashEmbedder())
    main(["list", "--db", db_url, "--user", "bob"])
    out = capsys.readouterr().out
    assert "bob's notes" in out and "alice" not in out
    for argv in (["export", str(alice)], ["ask", "hi", "--conversation", str(alice)]):
        with pytest.raises(SystemExit, match="does not exist"):
            main(argv + ["--db", db_url, "--user", "bob"])
    assert export_transcript(store, alice, owner="alice") == before
    main(["export", str(alice), "--db", db_url, "--user", "alice"])
    assert capsys.readouterr().out == before


def test_a_signed_in_users_store_scopes_every_read(store, counter):
    from assistant.store import OwnerScope

    svc = ChatService(store, FakeLLM(), HashEmbedder(), counter)
    alice = store.create("alice's plans", owner="alice")
    svc.ask(alice, "alice's message", owner="alice")
    bob = OwnerScope(store, "bob")
    for read in ("view", "transcript", "pending_user_turn", "layer", "conversation"):
        with pytest.raises(NotFound):
            getattr(bob, read)(alice)
        with pytest.raises(NotFound):  # naming another owner does not widen the scope
            getattr(bob, read)(alice, owner="alice")
    mine = OwnerScope(store, "alice")
    assert mine.view(alice).conv.id == alice and len(mine.transcript(alice).items) == 2
    assert [c.id for c in bob.conversations(owner="alice")] == []
