"""Work per exchange is bounded by the memory, not the history: an exchange reads the same rows
at 300 turns as at 3,000 (counted with event listeners, not timed), the miss search looks at no
more than its cap of evicted turns, an import's vectors are filled in the background (the first
answer after it embeds only the turns in memory), the chat draws a count and the newest few
unanswered questions, and a replay past its time budget stops with a clear error, storing nothing."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from assistant import service as service_module
from assistant import whatif as W
from assistant.errors import TooMuchWork
from assistant.replay import replay, settings_from
from assistant.retrieval.step import CiteCheck, RetrievalConfig
from assistant.service import ChatService
from assistant.work_budget import Deadline
from bench.fakes.embedder import HashEmbedder
from bench.fakes.llm import FakeLLM
from memory import transcript as T
from web.page_view import WAITING_SHOWN, chat_view

CAP = 40  # the miss search's cap in these tests


def saved(turns: int, budget: int = 300, roles=("user", "assistant")) -> T.Transcript:
    lines = [json.dumps({"lagmem": 1, "title": "long", "budget": budget, "lag": 2})]
    for i in range(1, turns + 1):
        role = roles[(i - 1) % len(roles)]
        line = {"role": role, "content": f"turn {i} about the {['red', 'green', 'blue'][i % 3]} crates {i % 17}"}
        if role == "assistant" and roles[(i - 2) % len(roles)] == "user":
            line["cites"] = [i - 1]
        lines.append(json.dumps(line))
    return T.parse("\n".join(lines) + "\n")


class CountingEmbedder(HashEmbedder):
    def __init__(self):
        super().__init__()
        self.texts = 0

    def encode(self, texts):
        self.texts += 1 if isinstance(texts, str) else len(texts)
        return super().encode(texts)


def service(store, counter, embedder=None) -> ChatService:
    svc = ChatService(store, FakeLLM(), embedder or HashEmbedder(), counter)
    svc.retrieval = RetrievalConfig(check=CiteCheck(min_similarity=None))
    svc.candidates.miss_candidates = CAP
    return svc


PER_ITEM = ("INSERT INTO misses", "INSERT INTO evictions", "UPDATE turns SET state")


class Reads:
    """Statements on both engines and rows returned to the read sessions, while active."""

    def __init__(self, store):
        self.statements, self.rows, self.on = 0, 0, False
        self.engines = {store.engine, store.reader}
        for e in self.engines:
            event.listen(e, "before_cursor_execute", self._statement)
        event.listen(Session, "do_orm_execute", self._orm)

    def _statement(self, conn, cursor, statement, *args):
        # one statement per logged miss (at most the cap) and per eviction (what the budget
        # evicts, not the history); every other statement once per exchange
        if self.on and not statement.startswith(PER_ITEM):
            self.statements += 1

    def _orm(self, state):
        if not self.on or not state.is_select:
            return None
        frozen = state.invoke_statement().freeze()
        self.rows += len(frozen().all())
        return frozen()

    def close(self):
        for e in self.engines:
            event.remove(e, "before_cursor_execute", self._statement)
        event.remove(Session, "do_orm_execute", self._orm)


def measured_exchange(store, counter, turns: int) -> tuple[int, int, int]:
    """(statements, rows read, turns in memory) of one warm exchange on an imported conversation."""
    t = saved(turns)
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    svc = service(store, counter)
    try:
        svc.ask(conv, "what about the red crates?")  # warm: the candidates cached, vectors filled
        assert svc.candidates.vectors.idle(timeout=60)
        svc.ask(conv, "and the blue crates?")
        reads = Reads(store)
        reads.on = True
        try:
            svc.ask(conv, "and the green crates?")
        finally:
            reads.on = False
            reads.close()
        return reads.statements, reads.rows, len(store.layer(conv).active_numbers())
    finally:
        svc.close()


def test_an_exchange_reads_the_same_at_300_turns_as_at_3000(store, counter):
    small = measured_exchange(store, counter, 300)
    large = measured_exchange(store, counter, 3000)
    assert small[0] == large[0]  # the same statements (logged misses aside)
    # the rows: the turns in memory and the miss search's capped evicted turns, whatever the history
    for statements, rows, in_memory in (small, large):
        assert rows <= 2 * (in_memory + CAP) + 20, (statements, rows, in_memory)
    assert large[1] <= small[1] + 2 * abs(large[2] - small[2]) + 10


def test_the_miss_search_looks_at_no_more_than_its_cap_of_the_newest_evicted_turns(store, counter, monkeypatch):
    t = saved(400)
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    svc = service(store, counter)
    looked: list[list[int]] = []
    real = service_module.find_misses

    def spy(vec, evicted, best, threshold):
        looked.append([c.number for c in evicted])
        return real(vec, evicted, best, threshold)

    monkeypatch.setattr(service_module, "find_misses", spy)
    try:
        svc.candidates.vectors.fill(conv)
        svc.ask(conv, "what about the red crates?")
    finally:
        svc.close()
    layer = store.layer(conv)
    evicted = sorted(t.number for t in layer.turns() if not t.active)
    assert len(evicted) > 3 * CAP
    # the newest CAP evicted before this exchange's evictions (it reads them when it begins)
    assert len(looked[0]) == CAP and looked[0] == sorted(looked[0])
    assert looked[0][-1] <= evicted[-1] and all(n in evicted or layer.turn(n).active for n in looked[0])
    assert looked[0][0] > evicted[0]  # not the oldest


def test_an_imports_vectors_are_filled_in_the_background_and_the_first_answer_embeds_only_the_memory(store, counter):
    t = saved(600)
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    embedder = CountingEmbedder()
    svc = service(store, counter, embedder)
    requested = []
    svc.candidates.vectors.request = requested.append  # the worker held back: what is ready is what is used
    try:
        in_memory = len(store.layer(conv).active_numbers())
        assert svc.vectors_pending(conv) == 600
        svc.ask(conv, "what about the red crates?")
        # the message, the turns in memory (stored without a vector) and the answer; no evicted turn
        assert embedder.texts <= in_memory + 3
        assert requested == [conv]
        assert svc.vectors_pending(conv) >= 600 - in_memory - 2
        seen = []
        done = svc.candidates.vectors.fill(conv, progress=lambda p: seen.append((p.done, p.total)))
        assert svc.vectors_pending(conv) == 0 and done >= 600 - in_memory - 2
        assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == seen[-1][1] == done
        assert len(seen) > 1  # in batches, each reported
        active, evicted, _ = svc._memory_turns(conv, exclude=0)
        assert len(evicted) == CAP and all(c.vector is not None for c in active + evicted)
    finally:
        svc.close()


def test_the_background_worker_fills_every_vector(store, counter):
    t = saved(500)
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    svc = service(store, counter)
    try:
        svc.ask(conv, "what about the red crates?")
        assert svc.candidates.vectors.idle(timeout=60)
        assert svc.vectors_pending(conv) == 0
    finally:
        svc.close()


def test_the_chat_reads_a_count_and_the_newest_unanswered_questions(store, counter):
    t = saved(300, budget=2000, roles=("user",))
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    view = chat_view(store, conv, 20)
    assert view.waiting == list(range(301 - WAITING_SHOWN, 301))
    assert view.waiting_count == 300
    assert set(view.by_number) <= set(range(281, 301)) | set(view.waiting) | {280}


def test_the_chat_page_shows_the_count_and_a_few_retry_buttons(svc_app):
    from tests.web.test_app import app

    svc = svc_app
    t = saved(200, budget=2000, roles=("user",))
    conv = replay(svc.store, t, svc.counter, settings_from(t.header), atomic=True).conversation_id
    at = app()
    at.session_state["conv_id"] = conv
    at.run()
    assert not at.exception
    assert len([b for b in at.button if b.label == "Retry"]) == WAITING_SHOWN
    assert any("200 questions have no answer" in c.value for c in at.caption)


@pytest.fixture
def svc_app(monkeypatch, db_url):
    from assistant import runtime

    monkeypatch.setenv("LAGMEM_DATABASE_URL", db_url)
    return runtime.get_service(llm=FakeLLM(), embedder=HashEmbedder())


class Clock:
    """One second passes at each reading."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


def test_an_import_past_its_time_budget_stops_with_a_clear_error_and_stores_nothing(store, counter):
    t = saved(1000)
    before = len(store.conversations())
    with pytest.raises(TooMuchWork) as err:
        replay(
            store,
            t,
            counter,
            settings_from(t.header),
            atomic=True,
            deadline=Deadline(3, "the import of “long.jsonl”", "Lower the budget.", clock=Clock()),
        )
    message = err.value.message
    assert message.startswith("The import of “long.jsonl” stopped after") and "limit is 3 s" in message
    assert "would take at least" in message and "Nothing was stored. Lower the budget." in message
    assert len(store.conversations()) == before


def test_a_comparison_past_its_time_budget_stops_with_a_clear_error(store, counter):
    t = saved(1000)
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    rec = W.load(store, conv)
    with pytest.raises(TooMuchWork, match="The comparison stopped after .* of the way"):
        W.compare(rec, deadline=Deadline(5, "the comparison", clock=Clock()))
    assert len(W.compare(rec, deadline=Deadline(10**6, "the comparison"))) == len(W.POLICY_NAMES)


def test_the_vector_worker_waits_while_an_exchange_runs(store, counter, monkeypatch):
    from assistant import vectors

    monkeypatch.setattr(vectors, "YIELD_S", 30.0)
    t = saved(300)
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    svc = service(store, counter)
    filler = svc.candidates.vectors
    try:
        with filler.exchange():
            filler.request(conv)
            assert not filler.idle(timeout=0.5)  # queued, no batch started
            assert svc.vectors_pending(conv) == 300
        assert filler.idle(timeout=60)
        assert svc.vectors_pending(conv) == 0
    finally:
        svc.close()


def test_the_vector_worker_waits_a_moment_after_a_request_and_while_a_question_is_stored(store, counter, monkeypatch):
    from assistant import vectors

    monkeypatch.setattr(vectors, "GRACE_S", 30.0)
    monkeypatch.setattr(vectors, "YIELD_S", 60.0)
    t = saved(300)
    conv = replay(store, t, counter, settings_from(t.header), atomic=True).conversation_id
    svc = service(store, counter)
    filler = svc.candidates.vectors
    busy_when_stored = []
    arrival = svc.store.arrival
    monkeypatch.setattr(svc.store, "arrival", lambda *a, **k: busy_when_stored.append(filler._busy) or arrival(*a, **k))
    try:
        filler.request(conv)  # as an import's first read does, just before the first question
        assert not filler.idle(timeout=0.5)  # no batch yet: the question usually follows at once
        assert svc.vectors_pending(conv) == 300
        svc.send(conv, "what about the red crates?")
        assert busy_when_stored == [1]  # storing the question is part of the exchange
        with filler._cond:  # the moment over
            filler._quiet_from = 0.0
            filler._cond.notify_all()
        assert filler.idle(timeout=60)
        assert svc.vectors_pending(conv) == 0
    finally:
        svc.close()
