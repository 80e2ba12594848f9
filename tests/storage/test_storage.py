"""Storage: migrations (from an old schema with data in it), pragmas, rebuild from the database
alone, and one transaction per unit of work."""

from __future__ import annotations

from datetime import datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from assistant.store import MemoryStore, load_layer
from memory.types import MemorySettings
from storage import repo
from storage.db import current_revision, make_engine, upgrade
from storage.models import Base, CitationRow, EvictionRow, Turn


def _advance_id_sequence(con) -> None:
    """Rows inserted here with explicit ids, as an old database holds them: on PostgreSQL the
    id sequence then stands where the app's own inserts would have left it (SQLite needs nothing)."""
    if con.dialect.name == "postgresql":
        con.execute(
            text("SELECT setval(pg_get_serial_sequence('conversations', 'id'), (SELECT max(id) FROM conversations))")
        )


def test_models_and_migrations_agree(engine):
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []
    assert current_revision(engine) == "0008"


def test_sqlite_pragmas_are_set_on_every_connection(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000


def test_default_database_lives_under_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LAGMEM_DATA_DIR", str(tmp_path / "here"))
    from assistant.config import default_url

    assert default_url() == f"sqlite:///{tmp_path / 'here' / 'lagmem.db'}"
    monkeypatch.setenv("LAGMEM_DATABASE_URL", "sqlite:///elsewhere.db")
    assert default_url() == "sqlite:///elsewhere.db"


def test_upgrade_from_the_first_schema_keeps_the_data(db_url):
    engine = make_engine(db_url, migrate=False)
    upgrade(engine, "0001")
    assert current_revision(engine) == "0001"
    # a conversation written by the old schema, with raw SQL as an old lagmem would have
    when = datetime(2026, 1, 1)
    with engine.begin() as con:
        con.execute(
            text(
                "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark, pin_share,"
                " policy_params, step, version, dropped_cites) VALUES (1, 'old', :when, :when, 50, 1, 'measured',"
                " 1.0, 0.5, '{}', 2, 2, 0)"
            ),
            {"when": when},
        )
        for seq, state in ((1, "evicted"), (2, "active")):
            con.execute(
                text(
                    "INSERT INTO turns (conversation_id, seq, role, content, tokens, state, pinned, protected_since, incomplete,"
                    " created_at) VALUES (1, :seq, 'user', 'hello', 30, :state, :no, :seq, :no, :when)"
                ),
                {"seq": seq, "state": state, "no": False, "when": when},
            )
        con.execute(
            text(
                "INSERT INTO citations (conversation_id, turn, step, weight, source, answer_turn)"
                " VALUES (1, 1, 2, 1.0, 'retrieval', 2)"
            )
        )
    with engine.begin() as con:
        _advance_id_sequence(con)
    engine.dispose()

    engine = make_engine(db_url)  # migrates on open
    assert current_revision(engine) == "0008"
    store = MemoryStore(engine)
    conv = store.conversation(1)
    assert conv.title == "old" and conv.auto_restore is False and conv.owner is None
    layer = store.layer(1)
    assert layer.snapshot().active == (2,) and layer.snapshot().evicted == (1,)
    assert [c.turn for c in layer.citations()] == [1]
    with store.transaction(1) as tx:  # and it keeps working
        tx.add_turn("assistant", "hi", 30)
        tx.enforce()
    assert store.layer(1).step == 3
    store.delete(1)  # and a deleted conversation's id is never given again
    assert store.create("new") == 2


def test_conversation_ids_are_never_reused_after_the_upgrade(db_url):
    engine = make_engine(db_url, migrate=False)
    upgrade(engine, "0006")
    with engine.begin() as con:
        for conv in (1, 2):
            con.execute(
                text(
                    "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark,"
                    " pin_share, policy_params, step, version, dropped_cites, auto_restore, pending) VALUES (:id, :t,"
                    " :when, :when, 50, 1, 'measured', 1.0, 0.5, '{}', 1, 1, 0, :no, :no)"
                ),
                {"id": conv, "t": f"c{conv}", "when": "2026-01-01 00:00:00", "no": False},
            )
            con.execute(
                text(
                    "INSERT INTO turns (conversation_id, seq, role, content, tokens, state, pinned, protected_since,"
                    " incomplete, created_at) VALUES (:id, 1, 'user', :t, 30, 'active', :no, 1, :no, :when)"
                ),
                {"id": conv, "t": f"turn of c{conv}", "no": False, "when": "2026-01-01 00:00:00"},
            )
    with engine.begin() as con:
        _advance_id_sequence(con)
    engine.dispose()
    engine = make_engine(db_url)
    assert current_revision(engine) == "0008"
    store = MemoryStore(engine)
    assert [(c.id, c.title) for c in store.conversations()] == [(2, "c2"), (1, "c1")]
    assert [t.content for t in store.view(1).turns] == ["turn of c1"]  # the children kept
    store.delete(2)  # the newest: SQLite alone would give its id to the next one
    assert store.create("new") == 3
    store.delete(3)
    assert store.create("newer") == 4
    assert [t.content for t in store.view(1).turns] == ["turn of c1"]
    engine.dispose()


def _exchange(store, conv_id, n_tokens=12, cites=(1,)):
    with store.transaction(conv_id) as tx:
        t = tx.add_turn("user", "x", n_tokens)
        tx.cite(cites, answer_turn=t.number)
        return tx.enforce("arrival", t.number)


def _lived(store, turns: int) -> int:
    """A conversation of ``turns`` turns of 7 to 11 tokens, the i-th (from 0) citing turns 1 and i; after
    the sixth, turn 2 is pinned and turn 5 judged down."""
    conv = store.create("t", MemorySettings(budget=50, lag=1, pin_share=0.5))
    for i in range(turns):
        _exchange(store, conv, 7 + i % 5, cites=(1, i))
        if i == 5:
            with store.transaction(conv) as tx:
                tx.pin(2)
                tx.feedback(5, -1)
    return conv


def test_rebuilt_state_equals_the_live_state(store):
    conv = _lived(store, 20)
    live = store._cache.get(conv)[1]
    rebuilt = store.layer(conv)
    assert rebuilt.snapshot() == live.snapshot()
    assert rebuilt.citations() == live.citations()
    assert rebuilt.ranking() == live.ranking()


def test_every_eviction_has_one_record_and_no_turn_is_deleted(store, engine):
    conv = store.create("t", MemorySettings(budget=30, lag=0))
    n_records = sum(len(_exchange(store, conv)) for _ in range(15))
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(Turn).where(Turn.conversation_id == conv)) == 15
        assert s.scalar(select(func.count()).select_from(EvictionRow)) == n_records
        evicted = s.scalar(select(func.count()).select_from(Turn).where(Turn.state == "evicted"))
    assert evicted == n_records > 0


def test_a_failing_unit_of_work_leaves_nothing_behind(store, engine):
    conv = store.create("t", MemorySettings(budget=30, lag=0))
    for _ in range(4):
        _exchange(store, conv)
    before = store.layer(conv).snapshot()
    with pytest.raises(RuntimeError):
        with store.transaction(conv) as tx:
            t = tx.add_turn("user", "y", 25)
            tx.cite([1])
            assert tx.enforce("arrival", t.number)
            raise RuntimeError("the model call failed after the rows were written")
    assert store.layer(conv).snapshot() == before
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(Turn)) == 4
    _exchange(store, conv)  # the cached layer was dropped: the next unit of work starts clean
    assert store.layer(conv).step == 5


def test_a_stale_cache_is_rebuilt_when_another_store_wrote(engine):
    a, b = MemoryStore(engine), MemoryStore(engine)
    conv = a.create("t", MemorySettings(budget=40, lag=0))
    _exchange(a, conv)
    _exchange(b, conv)  # b writes behind a's back
    _exchange(a, conv)  # a must see turn 2 and number its turn 3
    assert a.layer(conv).step == 3
    assert a._cache.get(conv)[1].snapshot() == b.layer(conv).snapshot()


def test_pin_refused_is_logged_and_changes_nothing(store, engine):
    conv = store.create("t", MemorySettings(budget=40, lag=0, pin_share=0.25))
    _exchange(store, conv, 20)
    with store.transaction(conv) as tx:
        records, refused = tx.pin(1)
    assert records == [] and "pin cap of 10 tokens" in refused
    assert store.layer(conv).snapshot().pinned == ()
    with Session(engine) as s:
        assert s.execute(text("SELECT kind FROM memory_events")).scalars().all() == ["pin_refused"]


def test_delete_removes_a_conversation_and_its_logs(store, engine):
    conv = store.create("t", MemorySettings(budget=20, lag=0))
    for _ in range(5):
        _exchange(store, conv)
    store.delete(conv)
    with Session(engine) as s:
        for model in (Turn, CitationRow, EvictionRow):
            assert s.scalar(select(func.count()).select_from(model)) == 0
    with pytest.raises(repo.NotFound):
        store.conversation(conv)


def test_conversations_are_scoped_to_their_owner(store):
    mine = store.create("mine", owner="ana@example.org")
    store.create("theirs", owner="bo@example.org")
    assert [c.title for c in store.conversations(owner="ana@example.org")] == ["mine"]
    with pytest.raises(repo.NotFound):
        store.conversation(mine, owner="bo@example.org")
    with pytest.raises(repo.NotFound):
        with store.transaction(mine, owner="bo@example.org"):
            pass


def test_load_layer_uses_only_the_database(store, engine):
    conv = store.create("t", MemorySettings(budget=25, lag=2))
    for _ in range(8):
        _exchange(store, conv)
    store._cache.clear()
    with Session(engine) as s:
        layer = load_layer(s, repo.get_conversation(s, conv))
    assert layer.step == 8 and layer.used_tokens <= 25 + 24


def test_upgrade_to_0003_reads_the_cause_of_old_records_from_their_reason(db_url):
    engine = make_engine(db_url, migrate=False)
    upgrade(engine, "0002")
    when = datetime(2026, 1, 1)
    reasons = [  # (turn evicted, step, reason as an old lagmem wrote it)
        (1, 4, "over budget after turn 4 arrived"),
        (2, 5, "over budget after pin of turn 1"),
        (3, 5, "over budget after unpin of turn 1"),
        (4, 5, "over budget after restore of turn 2"),
        (1, 5, "over budget after restore of turn 3"),
        (5, 6, "over budget after settings changed (budget 20, policy lru)"),
        (6, 6, "over budget at step 6"),
        (2, 6, "something else entirely"),
    ]
    with engine.begin() as con:
        con.execute(
            text(
                "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark, pin_share,"
                " policy_params, step, version, dropped_cites, auto_restore) VALUES (1, 'old', :when, :when, 50, 1,"
                " 'measured', 1.0, 0.5, '{}', 6, 6, 0, :no)"
            ),
            {"when": when, "no": False},
        )
        for seq in range(1, 7):
            con.execute(
                text(
                    "INSERT INTO turns (conversation_id, seq, role, content, tokens, state, pinned, protected_since, incomplete,"
                    " created_at) VALUES (1, :seq, 'user', 'hello', 30, 'active', :no, :seq, :no, :when)"
                ),
                {"seq": seq, "no": False, "when": when},
            )
        # turn 3 came back by the second chance at step 5, turn 2 by a person
        for turn, kind in ((2, "restore"), (3, "auto_restore")):
            con.execute(
                text(
                    "INSERT INTO memory_events (conversation_id, turn, step, kind, detail, created_at)"
                    " VALUES (1, :turn, 5, :kind, '', :when)"
                ),
                {"turn": turn, "kind": kind, "when": when},
            )
        for turn, step, reason in reasons:
            con.execute(
                text(
                    "INSERT INTO evictions (conversation_id, turn, step, importance, runners_up, budget, tokens_before,"
                    " tokens_after, policy, reason, created_at) VALUES (1, :turn, :step, 0.5, '[]', 50, 60, 30, 'measured',"
                    " :reason, :when)"
                ),
                {"turn": turn, "step": step, "reason": reason, "when": when},
            )
    engine.dispose()

    engine = make_engine(db_url)
    assert current_revision(engine) == "0008"
    records = MemoryStore(engine).view(1).evictions
    assert [r.reason for r in records] == [reason for _, _, reason in reasons]  # the words are kept
    assert [(r.cause, r.cause_turn) for r in records] == [
        ("arrival", 4),
        ("pin", 1),
        ("unpin", 1),
        ("restore", 2),
        ("auto_restore", 3),
        ("settings", None),
        ("budget", None),
        ("budget", None),
    ]
    engine.dispose()


def test_cause_and_cause_turn_survive_the_round_trip(store):
    conv = store.create("t", MemorySettings(budget=30, lag=0, policy="fifo"))
    live = []
    for role in ("user", "assistant", "user", "assistant", "user"):
        with store.transaction(conv) as tx:
            t = tx.add_turn(role, "x", 10)
            live += tx.enforce("arrival", t.number)
    with store.transaction(conv) as tx:
        live += tx.restore(1)
        live += tx.restore(2, kind="auto_restore")
        live += tx.pin(3)[0]
        live += tx.unpin(3)
    live += store.update_settings(conv, MemorySettings(budget=20, lag=0, policy="fifo"))
    assert {r.cause for r in live} == {"arrival", "restore", "auto_restore", "pin", "settings"}
    assert store.view(conv).evictions == live  # every field, cause and cause_turn included
    with Session(store.reader) as s:
        assert [(r.cause, r.cause_turn) for r in repo.load_evictions(s, conv)] == [
            (r.cause, r.cause_turn) for r in live
        ]


def test_the_view_rebuilds_the_layer_the_store_rebuilds(store):
    conv = _lived(store, 12)
    view, ref = store.view(conv), store.layer(conv)
    assert view.layer.snapshot() == ref.snapshot()
    assert view.layer.ranking() == ref.ranking()
    assert view.layer.citations() == ref.citations()
    assert view.feedback == ref.feedback_values() == {5: -1.0}
    assert [t.seq for t in view.turns] == list(range(1, 13))
