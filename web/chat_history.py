"""The chat page's messages as plain data: each stored turn with what its answer cited, the feedback
on it and the turns its exchange pushed out of memory (read from each eviction record's cause), and
the line under an answer that says so."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from assistant.store import MemoryView


@dataclass
class Message:
    number: int
    role: str
    content: str
    cited: list[tuple[int, float]] = field(default_factory=list)
    evicted: list[int] = field(default_factory=list)  # turns this exchange pushed out of memory
    feedback: float | None = None
    model: str | None = None


def exchange_evictions(view: MemoryView) -> dict[int, list[int]]:
    """Answer turn -> the turns its exchange pushed out of memory, read from each record's cause.

    An exchange is a message and its answer: its evictions are those caused by the arrival of the
    answer, by the arrival of the message it answers (the turn just before it, unless that is an
    answer too), and by the second chance restoring a missed turn while it answered (at the
    message's step). Pins, unpins, restores and settings changes are a person's own actions: they
    belong to no message."""
    by = view.by_number
    out: dict[int, list[int]] = defaultdict(list)
    for r in view.evictions:
        if r.cause == "arrival":
            answer = r.cause_turn if _is_answer(by, r.cause_turn) else r.cause_turn + 1
        elif r.cause == "auto_restore":
            answer = r.step + 1  # the answer's unit of work runs at its message's step
        else:
            continue
        if _is_answer(by, answer):
            out[answer].append(r.turn)
    return out


def _is_answer(by: dict, number: int) -> bool:
    t = by.get(number)
    return t is not None and t.role == "assistant"


def chat_history(view: MemoryView, numbers: set[int] | None = None) -> list[Message]:
    """The stored turns (all, or only ``numbers``: the page draws the latest few), with each
    answer's citations, feedback and the evictions its exchange caused (``exchange_evictions``)."""
    cites: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for c in view.layer.citations():
        if c.answer_turn is not None:
            cites[c.answer_turn].append((c.turn, c.weight))
    evicted = exchange_evictions(view)
    out = []
    for t in view.turns:
        if numbers is not None and t.seq not in numbers:
            continue
        m = Message(
            t.seq, t.role, t.content, sorted(cites.get(t.seq, [])), feedback=view.feedback.get(t.seq), model=t.model
        )
        if t.role == "assistant":
            m.evicted = evicted.get(t.seq, [])
        out.append(m)
    return out


def eviction_line(evicted: list[int]) -> str:
    if not evicted:
        return ""
    n = len(evicted)
    which = ", ".join(f"#{t}" for t in evicted[:6]) + (" …" if n > 6 else "")
    return f"{n} turn{'s' if n != 1 else ''} left memory ({which}) — see the Memory inspector."
