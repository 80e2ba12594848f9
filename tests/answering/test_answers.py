"""Which question an answer answers: every stored answer names it (``turns.reply_to``), a saved
file keeps it (``reply_to`` on an answer given later), and a database from before migration 0005
gets it filled in, so no question shows "No answer yet" once answered and none gets two answers."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from assistant.replay import export_transcript, replay, settings_from
from assistant.service import ChatService
from assistant.store import MemoryStore
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory import transcript as T
from storage.db import make_engine
from storage.models import Turn


def test_a_late_answer_keeps_its_question_through_export_and_import(store, counter):
    """Turn 1 fails, turn 2 is answered (3), a retry answers turn 1 (4): the saved file says so,
    and the imported conversation has no question left without its answer."""
    from assistant.errors import ServerUnreachable

    llm = FakeLLM()
    svc = ChatService(store, llm, HashEmbedder(), counter)
    conv = store.create("late")
    llm.enqueue(ServerUnreachable())
    with pytest.raises(ServerUnreachable):
        svc.ask(conv, "first question")
    svc.ask(conv, "second question")
    svc.answer_pending(conv, turn=1).run()
    text = export_transcript(store, conv)
    assert [line for line in text.splitlines() if "reply_to" in line] == [
        text.splitlines()[4]
    ] and '"reply_to": 1' in text.splitlines()[4]  # header, 1, 2, 3, then 4
    t = T.parse(text)
    log = replay(store, t, counter, settings_from(t.header), atomic=True)
    with store.engine.connect() as c:
        rows = c.execute(
            select(Turn.seq, Turn.reply_to)
            .where(Turn.conversation_id == log.conversation_id, Turn.role == "assistant")
            .order_by(Turn.seq)
        ).all()
    assert [tuple(r) for r in rows] == [(3, 2), (4, 1)]
    assert store.pending_user_turn(log.conversation_id, turn=1) is None
    assert export_transcript(store, log.conversation_id) == text


@pytest.mark.parametrize(
    "lines, reason",
    [
        (
            [
                '{"role": "user", "content": "q"}',
                '{"role": "assistant", "content": "a"}',
                '{"role": "assistant", "content": "b", "reply_to": 1}',
            ],
            "turn 1 already has an answer",
        ),
        (
            [
                '{"role": "user", "content": "q"}',
                '{"role": "assistant", "content": "a"}',
                '{"role": "assistant", "content": "b", "reply_to": 2}',
            ],
            "not a user turn",
        ),
        (
            ['{"role": "user", "content": "q"}', '{"role": "user", "content": "r", "reply_to": 1}'],
            "belongs on an answer",
        ),
        (
            ['{"role": "user", "content": "q"}', '{"role": "assistant", "content": "a", "reply_to": 2}'],
            "names an earlier turn",
        ),
    ],
)
def test_a_file_cannot_give_a_question_two_answers_or_answer_a_non_question(lines, reason):
    with pytest.raises(T.TranscriptError, match=reason) as err:
        T.parse("\n".join(lines))
    assert err.value.line == len(lines)


def test_upgrade_to_0005_names_each_old_answer_s_question(db_url):
    """Answers stored before 0005: the question an ``answer`` note names (a retry), else the user
    turn just before; an answer after an answer answers nothing."""
    from datetime import datetime

    from sqlalchemy import text as sql

    from storage.db import upgrade

    engine = make_engine(db_url, migrate=False)
    upgrade(engine, "0003")
    when, no = datetime(2026, 1, 1), False
    roles = ["user", "assistant", "user", "user", "assistant", "assistant", "assistant"]
    with engine.begin() as con:
        con.execute(
            sql(
                "INSERT INTO conversations (id, title, created_at, updated_at, budget, lag, policy, low_watermark, pin_share,"
                " policy_params, step, version, dropped_cites, auto_restore) VALUES (1, 'old', :when, :when, 500, 1,"
                " 'measured', 1.0, 0.5, '{}', 7, 7, 0, :no)"
            ),
            {"when": when, "no": no},
        )
        for seq, role in enumerate(roles, start=1):
            con.execute(
                sql(
                    "INSERT INTO turns (conversation_id, seq, role, content, tokens, state, pinned, protected_since, incomplete,"
                    " created_at) VALUES (1, :seq, :role, 'x', 3, 'active', :no, :seq, :no, :when)"
                ),
                {"seq": seq, "role": role, "no": no, "when": when},
            )
        # turn 5 answered turn 4; turn 6 was a retry of turn 3 (noted); turn 7 answers nothing
        con.execute(
            sql(
                "INSERT INTO memory_events (conversation_id, turn, step, kind, detail, created_at)"
                " VALUES (1, 6, 6, 'answer', '{\"reply_to\": 3}', :when)"
            ),
            {"when": when},
        )
    upgrade(engine, "head")
    with engine.connect() as c:
        got = c.execute(select(Turn.seq, Turn.reply_to).where(Turn.role == "assistant").order_by(Turn.seq)).all()
    assert [tuple(r) for r in got] == [(2, 1), (5, 4), (6, 3), (7, None)]
    store = MemoryStore(engine)
    assert all(store.pending_user_turn(1, turn=q) is None for q in (1, 3, 4))
