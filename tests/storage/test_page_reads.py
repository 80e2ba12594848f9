"""The pages' reads: a page reads only what it shows (``store.pages``, ``web.page_view``,
``web.timeline``), and what it shows is what the whole conversation says. Each read is
checked against the whole view (``store.view``) of the same conversation: the turn table's pages,
the budget figures, the turn shown in full, the eviction history's pages (newest first), the
misses, the chat's messages, and the token timeline extended change by change."""

from __future__ import annotations

import pandas as pd
import pytest

from memory.types import MemorySettings
from tests.web.test_app import INSPECTOR, app, svc  # noqa: F401  (svc: fixture)
from tests.web.test_pages_long import long_conversation
from web import chat_view as C
from web.chart_series import importance_series, memory_timeline
from web.chat_history import chat_history
from web.inspector_tables import budget_summary, eviction_history, misses_table, turn_table
from web.page_view import chat_view, inspector_view
from web.timeline import Timeline
from web.views import shorten
from web.why_forgotten import why_forgotten

UNANSWERED = {5, 18}  # questions followed by another question (the roles' parity flips after each)


def add(store, conv: int, i: int) -> None:
    """Turn ``i``: odd turns (and those after an unanswered one) are questions; an answer cites
    its question and an older turn, and every arrival enforces the budget."""
    with store.transaction(conv) as tx:
        if (i + sum(1 for u in UNANSWERED if u < i)) % 2:
            t = tx.add_turn("user", f"question {i} " + "about the crates " * (i % 7), 4 + i % 9)
        else:
            t = tx.add_turn("assistant", f"answer {i} " + "with words " * (i % 5), 3 + i % 13, reply_to=i - 1)
            tx.cite([(i - 1, 0.9), (max(1, i - 9), 0.5)], answer_turn=t.number)
            if i % 30 == 0:
                tx.answer_note(t.number, cut_at=64)
        tx.enforce("arrival", t.number)


def actions(store, conv: int, i: int) -> None:
    """What a person (or the second chance) does now and then: feedback, pins, restores, misses."""
    if not (i % 13 == 0 or i % 37 == 0 or i % 41 == 0 or i % 29 == 0):
        return
    layer = store.layer(conv)
    evicted = [t.number for t in layer.turns() if not t.active]
    with store.transaction(conv) as tx:
        if i % 13 == 0 and layer.turn(i).role == "assistant":
            tx.feedback(i, -1.0)
        if i % 37 == 0 and evicted:
            tx.pin(evicted[len(evicted) // 2])
        if i % 41 == 0:
            for t in [t for t in layer.turns() if t.pinned][:1]:
                tx.unpin(t.number)
        if i % 29 == 0 and evicted:
            tx.restore(evicted[0])
            tx.miss(evicted[-1], 0.8, False)


def build(store, turns: int, policy: str = "measured") -> int:
    conv = store.create("long", MemorySettings(budget=120, lag=3, policy=policy))
    for i in range(1, turns + 1):
        add(store, conv, i)
        actions(store, conv, i)
    return conv


def page(store, conv: int, start: int, stop: int, *, history: tuple[int, int] = (0, 100), detail=None, timeline=None):
    return inspector_view(
        store,
        conv,
        detail=detail,
        timeline=timeline,
        turn_page=lambda total: (min(start, total), min(stop, total)),
        history_page=lambda total: (min(history[0], total), min(history[1], total)),
    )


@pytest.mark.parametrize("policy", ["measured", "lru", "window", "accumulate", "fifo"])
def test_each_page_of_the_turn_table_is_what_the_whole_conversation_gives(store, policy):
    conv = build(store, 230, policy)
    whole = store.view(conv)
    assert any(not t.active for t in whole.layer.turns()) and any(t.pinned for t in whole.layer.turns())
    for start in (0, 100, 200):
        view = page(store, conv, start, start + 100)
        numbers = list(range(start + 1, min(start + 100, 230) + 1))
        assert view.page == numbers and view.turn_count == 230 and view.last_turn == 230
        pd.testing.assert_frame_equal(turn_table(view, view.page), turn_table(whole, numbers))
        # the memory and the page, not the history: fewer turns than the conversation has
        assert len(view.layer.turns()) < 150
    assert budget_summary(view) == budget_summary(whole)
    pd.testing.assert_frame_equal(importance_series(view), importance_series(whole))


def test_the_turn_shown_in_full_and_why_it_was_forgotten(store):
    conv = build(store, 150)
    whole = store.view(conv)
    evicted = [r.turn for r in whole.evictions]
    for number in (evicted[0], evicted[len(evicted) // 2], whole.turns[-1].seq):
        view = page(store, conv, 0, 100, detail=number)
        assert view.detail == number
        assert view.by_number[number].content == whole.by_number[number].content  # whole, not shortened
        assert why_forgotten(view, number) == why_forgotten(whole, number)
    assert page(store, conv, 0, 100, detail=None).detail == 150  # the last turn by default
    assert page(store, conv, 0, 100, detail=10_000).detail == 150


def test_a_table_row_reads_the_start_of_a_long_turns_text(store):
    conv = store.create("long turn", MemorySettings(budget=100_000, lag=2))
    text = "first words " + "x" * 50_000 + " last words"
    with store.transaction(conv) as tx:
        tx.add_turn("user", text, 9000)
    view = page(store, conv, 0, 100, detail=None)
    with store.pages(conv) as r:
        (short,) = r.rows([1])
        (whole,) = r.rows([1], whole=True)
    assert short.content == text[:400] and whole.content == text
    assert view.by_number[1].content == text  # the turn shown in full
    assert turn_table(view, [1])["text"].iloc[0] == shorten(text)


def test_the_eviction_history_is_read_newest_first_a_page_at_a_time(store):
    conv = build(store, 230)
    whole = store.view(conv)
    newest = [(r, whole.by_number[r.turn].role) for r in whole.evictions[::-1]]
    assert len(newest) > 200
    for start in (0, 100, 200):
        view = page(store, conv, 0, 100, history=(start, start + 100))
        assert view.history == newest[start : start + 100]
        assert view.history_count == len(newest)
    pd.testing.assert_frame_equal(eviction_history(view.history), eviction_history(newest[200:300]))


def test_the_misses_and_the_newest_citations(store):
    conv = build(store, 230)
    whole = store.view(conv)
    view = page(store, conv, 0, 100)
    assert view.misses_count == len(whole.misses) > 0
    pd.testing.assert_frame_equal(misses_table(view), misses_table(whole))
    everything = whole.layer.citations()
    assert view.cites_count == len(everything)
    assert (
        sorted(view.cites, key=lambda c: (c.step, c.turn))
        == sorted(everything, key=lambda c: (c.step, c.turn))[-len(view.cites) :]
    )


def test_the_chats_messages_are_what_the_whole_conversation_gives(store):
    conv = build(store, 230)
    whole = store.view(conv)
    for shown in (50, 100, 400):
        view = chat_view(store, conv, shown)
        assert view.latest == list(range(max(1, 231 - shown), 231))
        assert view.waiting == C.unanswered(whole) == sorted(UNANSWERED)
        drawn = set(view.latest) | set(view.waiting)
        assert chat_history(view, drawn) == chat_history(whole, drawn)
        assert {a: q for a, q in C.questions(view).items() if a in drawn} == {
            a: q for a, q in C.questions(whole).items() if a in drawn
        }
        assert C.answer_notes(view) == {a: n for a, n in C.answer_notes(whole).items() if a in drawn}
        assert budget_summary(view) == budget_summary(whole)
        if shown == 50:  # the messages, the turns they cite and the one before them: not the history
            cited = {t for m in chat_history(whole, drawn) for t, _ in m.cited}
            assert set(view.by_number) <= drawn | cited | {view.latest[0] - 1}
    assert any(m.evicted for m in chat_history(view, drawn))  # the eviction notes were compared too


def test_the_timeline_extended_change_by_change_is_the_whole_conversations(store):
    conv = build(store, 60)
    timeline = Timeline(("test",))

    def check():
        page(store, conv, 0, 100, timeline=lambda c: timeline)
        points, markers, width = timeline.frames(max_points=10**6)
        want_points, want_markers = memory_timeline(store.view(conv))
        assert width == 1
        pd.testing.assert_frame_equal(points, want_points, check_dtype=False)
        pd.testing.assert_frame_equal(markers, want_markers, check_dtype=False)

    check()
    for i in range(61, 75):  # new turns, and pins, unpins and restores at the clock's own step
        add(store, conv, i)
        check()
        layer = store.layer(conv)
        evicted = [t.number for t in layer.turns() if not t.active]
        with store.transaction(conv) as tx:
            tx.pin(evicted[-1])
        check()
        with store.transaction(conv) as tx:
            tx.unpin(evicted[-1])
            tx.restore(evicted[0])
        check()


def test_a_refresh_reads_only_the_steps_since_the_last_one(store):
    conv = build(store, 200)
    timeline = Timeline(("test",))
    reads: dict[str, int] = {}

    class Counting:
        def __init__(self, reader):
            self.reader, self.conv = reader, reader.conv

        def __getattr__(self, name):
            method = getattr(self.reader, name)

            def counted(*args):
                out = method(*args)
                reads[name] = reads.get(name, 0) + len(out)
                return out

            return counted

    with store.pages(conv) as r:
        timeline.update(Counting(r))
    assert reads["arrivals_after"] == 200  # the first read of a session reads the history once
    reads.clear()
    add(store, conv, 201)
    add(store, conv, 202)
    with store.pages(conv) as r:
        timeline.update(Counting(r))
    # the clock's own step (200, kept open) and the two new turns; the records made since then
    assert reads["arrivals_after"] == 3
    made_since = [r for r in store.view(conv).evictions if r.step >= 200]
    assert reads["evictions_after"] == len(made_since)


def test_a_long_timeline_is_drawn_in_buckets_at_their_highest(store):
    conv = build(store, 95)
    timeline = Timeline(("test",))
    page(store, conv, 0, 100, timeline=lambda c: timeline)
    full, full_markers, _ = timeline.frames(max_points=10**6)
    points, markers, width = timeline.frames(max_points=10)
    assert width == 10 and len(points) == 10
    assert list(points["step"]) == list(range(1, 96, 10))
    assert list(points["tokens"]) == [full["tokens"][i : i + 10].max() for i in range(0, 95, 10)]
    whole = store.view(conv)
    assert markers["count"].sum() == len(whole.evictions)
    for m in markers.itertuples():  # each bucket's marker: its highest peak and all its evictions
        inside = full_markers[(full_markers["step"] >= m.step) & (full_markers["step"] < m.step + width)]
        assert m.step in set(points["step"]) and m.peak == inside["peak"].max() and m.count == inside["count"].sum()


def test_the_inspector_redraws_a_new_answer_with_its_evictions_first(svc):
    conv = long_conversation(svc, 250)
    at = app()
    at.session_state["conv_id"] = conv
    at.switch_page(INSPECTOR).run()
    before = len(svc.store.view(conv).evictions)
    svc.ask(conv, "one more question about the crates")
    at.run()
    assert not at.exception
    whole = svc.store.view(conv)
    assert len(whole.evictions) > before  # the exchange evicted something
    newest = whole.evictions[::-1]
    assert list(at.dataframe[-1].value["turn"]) == [r.turn for r in newest[:100]]
    assert list(at.data_editor[0].value.index)[-2:] == [251, 252]  # the newest turns, on the last page
