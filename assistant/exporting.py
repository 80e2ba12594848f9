"""What a stored conversation's logs become in the saved format (``memory.transcript``).

The store reads the rows (events, misses) and hands them here: the events a file replays, by the
step they happened at, and the token limit that cut each answer. Kept apart from the store, which
only reads and writes; nothing here touches the database (the rows are read as plain attributes).
"""

from __future__ import annotations

import json

from memory import transcript as T


def saved_events(events, misses) -> tuple[dict[int, list[T.EventLine]], dict[int, int]]:
    """The saved format's events by step, and the token limit that cut each answer. At a step,
    what a person did comes first, then the misses of the exchange that followed (it logs them
    just before its answer, under the same lock); a miss the second chance restored stands for its
    ``auto_restore`` event. An ``auto_restore`` without its miss (none is written so) is a restore."""
    by_step: dict[int, list[T.EventLine]] = {}
    restored = {(m.step, m.turn) for m in misses if m.restored}
    cuts: dict[int, int] = {}
    for e in events:
        if e.kind == "answer":
            note = json.loads(e.detail or "{}")
            cut = note.get("cut_at") if isinstance(note, dict) else None
            if isinstance(cut, int):
                cuts[e.turn] = cut
            continue
        if e.kind == "auto_restore" and (e.step, e.turn) in restored:
            continue
        kind = "restore" if e.kind == "auto_restore" else e.kind
        if kind in T.EVENTS:
            value = float(e.detail) if kind == "feedback" else None
            by_step.setdefault(e.step, []).append(T.EventLine(kind, e.turn, value))
    for m in misses:
        by_step.setdefault(m.step, []).append(T.EventLine("miss", m.turn, float(m.similarity), restored=m.restored))
    return by_step, cuts
