"""What one draw of a page reads: the rows it shows and the memory, never the whole history.

A ``PageView`` has the shape of the store's whole ``MemoryView`` (``conv``, ``layer``, ``turns``,
``by_number``, ``evictions``, ``events``, ``misses``, ``feedback``), so the plain-data helpers
(``views``, ``chat_history``, ``inspector_tables``, ``why_forgotten``, ``chart_series``) draw from
either, but it holds only what the page names:

* ``layer``: every turn in memory (what the budget bounds), plus the turns the page names, each
  with all its citations and the feedback on the answers that made them. A turn's importance
  depends only on its own citations, that feedback, its prior and the set of turns it is measured
  with, so the importance, ranking and budget figures the page shows are what the whole layer gives.
* ``turns``: the rows drawn, and the few the page looks up (cited turns, the turn before the first
  message), in turn order; table rows carry their text's first characters only.
* ``evictions``: the records of the turns shown (the chat: those made while its messages arrived).

Everything is read in one read-only session (``store.pages``): one consistent moment.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from assistant.store import MemoryStore, PageReader
from memory.layer import MemoryLayer
from memory.types import Citation, EvictionRecord, TurnState
from web.timeline import Timeline

HISTORY_CITES = 2000  # the citation chart shows the newest this many
WAITING_SHOWN = 5  # the chat draws the newest this many questions without an answer (and counts all)
MISSES_SHOWN = 100


@dataclass
class PageView:
    conv: object
    layer: MemoryLayer
    turns: list
    turn_count: int
    last_turn: int
    evictions: list[EvictionRecord] = field(default_factory=list)
    events: list = field(default_factory=list)
    misses: list = field(default_factory=list)
    feedback: dict[int, float] = field(default_factory=dict)
    # the chat: the turn numbers drawn (the latest, and the newest questions without an answer),
    # and how many questions have none
    latest: list[int] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)
    waiting_count: int = 0
    # the inspector: the turn table's rows, the history's page, the newest citations
    page: list[int] = field(default_factory=list)
    history: list[tuple[EvictionRecord, str]] = field(default_factory=list)
    history_count: int = 0
    misses_count: int = 0
    cites: list[Citation] = field(default_factory=list)
    cites_count: int = 0
    detail: int | None = None

    @functools.cached_property
    def by_number(self) -> dict:
        return {t.seq: t for t in self.turns}


def reading_layer(r: PageReader, named: set[int]) -> tuple[MemoryLayer, dict[int, float]]:
    """The memory (every active turn) plus the turns ``named``, with their citations and the
    feedback on the answers that made them; returns the layer and that feedback."""
    states: dict[int, TurnState] = {t.number: t for t in r.memory_states()}
    states.update((t.number, t) for t in r.states(named - set(states)))
    cites = r.citations(states)
    # an answer's evidence is shared among all the turns it cited (``Measured.focus``): the other
    # turns those answers cited are read too, or a turn here would count a bigger share
    answers = {c.answer_turn for c in cites if c.answer_turn is not None}
    beside = {c.turn for c in r.cites_by(answers)} - set(states)
    if beside:
        states.update((t.number, t) for t in r.states(beside))
        cites = r.citations(states)
    feedback = r.feedback({c.answer_turn for c in cites if c.answer_turn is not None})
    layer = MemoryLayer.from_state(r.settings(), states.values(), cites, feedback, step=r.conv.step)
    return layer, feedback


def chat_view(store: MemoryStore, conv_id: int, shown: int) -> PageView:
    """The latest ``shown`` messages and the newest ``WAITING_SHOWN`` questions without an answer
    (with how many there are), with what their headers, citations and eviction notes need."""
    with store.pages(conv_id) as r:
        latest = r.latest_numbers(shown)
        waiting = r.unanswered(WAITING_SHOWN)
        drawn = set(latest) | set(waiting)
        cited = {c.turn for c in r.cites_by(drawn)}
        first, last = (latest[0], latest[-1]) if latest else (1, 0)
        # the turn before the first message: its role says whose exchange its evictions were
        looked_up = drawn | cited | ({first - 1} if first > 1 else set())
        layer, feedback = reading_layer(r, looked_up)
        feedback.update(r.feedback(drawn))
        return PageView(
            r.conv,
            layer,
            r.rows(looked_up, whole=True),
            r.turn_count(),
            last,
            evictions=r.evictions_between(first - 1, last) if latest else [],
            events=r.events_of(drawn, ("answer",)),
            feedback=feedback,
            latest=latest,
            waiting=waiting,
            waiting_count=r.unanswered_count() if len(waiting) == WAITING_SHOWN else len(waiting),
        )


def inspector_view(
    store: MemoryStore,
    conv_id: int,
    *,
    turn_page: Callable[[int], tuple[int, int]],
    history_page: Callable[[int], tuple[int, int]],
    detail: int | None,
    timeline: Callable[[object], Timeline] | None = None,
) -> PageView:
    """One page of the turn table (``turn_page(total)`` gives its [start, stop)), one page of the
    eviction history (newest first), the turn ``detail`` (default: the last) in full, the newest
    misses and citations; and ``timeline(conv)`` brought up to date from the same moment."""
    with store.pages(conv_id) as r:
        if timeline is not None:
            timeline(r.conv).update(r)
        count, last = r.turn_count(), r.last_turn()
        start, stop = turn_page(count)
        page = r.page_numbers(start, stop - start) if stop > start else []
        if detail is None or not 1 <= detail <= last:
            detail = last or None
        misses, misses_count = r.latest_misses(MISSES_SHOWN)
        shown = set(page) | {m.turn for m in misses}
        layer, feedback = reading_layer(r, shown | ({detail} if detail else set()))
        rows = {t.seq: t for t in r.rows(shown)}
        if detail is not None:
            rows.update((t.seq, t) for t in r.rows([detail], whole=True))
        if detail not in rows:
            detail = None
        history_count = r.eviction_count()
        h_start, h_stop = history_page(history_count)
        cites, cites_count = r.latest_citations(HISTORY_CITES)
        return PageView(
            r.conv,
            layer,
            [rows[n] for n in sorted(rows)],
            count,
            last,
            evictions=r.evictions_of(set(page) | ({detail} if detail else set())),
            misses=misses[::-1],
            feedback=feedback,
            page=page,
            history=r.eviction_page(h_start, h_stop - h_start) if h_stop > h_start else [],
            history_count=history_count,
            misses_count=misses_count,
            cites=cites,
            cites_count=cites_count,
            detail=detail,
        )


def pinned_flags(store: MemoryStore, conv_id: int, numbers) -> dict[int, bool]:
    """Whether each of these turns is pinned now (the turn table's edits are checked against it)."""
    with store.pages(conv_id) as r:
        return {t.number: t.pinned for t in r.states(numbers)}
