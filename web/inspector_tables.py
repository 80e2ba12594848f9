"""The inspector's tables as plain data: the budget summary, the turn table (importance now, split
into its prior and evidence parts where the policy has a prior), the pin edits to apply, one page of
the eviction history, the second chance's misses, and the paging of long tables."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from assistant.store import MemoryView
from memory.types import EvictionRecord
from web.views import shorten


def budget_summary(view: MemoryView) -> dict:
    snap = view.layer.snapshot()
    other = snap.used_tokens - snap.pinned_tokens - snap.protected_tokens
    held = snap.pinned_tokens + snap.protected_tokens
    return {
        "used": snap.used_tokens,
        "budget": snap.budget,
        "pinned": snap.pinned_tokens,
        "protected": snap.protected_tokens,
        "other": max(other, 0),
        "free": max(snap.budget - snap.used_tokens, 0),
        "over": snap.used_tokens > snap.budget,
        "held_over": held > snap.budget,  # pinned + protected alone exceed the budget
        "active": len(snap.active),
        "evicted": view.turn_count - len(snap.active),  # a page's layer holds the memory, not every turn
        "step": snap.step,
    }


def page_bounds(total: int, size: int, page: int) -> tuple[int, int]:
    """[start, stop) of page ``page`` (1 = the first) of ``total`` rows, ``size`` a page; a page
    past either end is the nearest one."""
    pages = max(1, -(-total // size))
    page = min(max(page, 1), pages)
    return (page - 1) * size, min(page * size, total)


def page_count(total: int, size: int) -> int:
    return max(1, -(-total // size))


def turn_table(view: MemoryView, numbers: list[int] | None = None) -> pd.DataFrame:
    """One row per turn (all, or the page ``numbers``), indexed by turn number (the data editor's
    pins map back through it). Importance is computed for those turns only."""
    layer = view.layer
    wanted = None if numbers is None else set(numbers)
    counts = Counter(c.turn for c in layer.citations())
    last: dict[int, int] = {}
    for c in layer.citations():
        last[c.turn] = max(last.get(c.turn, 0), c.step)
    turns = view.turns if wanted is None else [t for t in view.turns if t.seq in wanted]
    numbers = [t.seq for t in turns]
    importance = layer.importance(numbers) if numbers else {}
    split = importance_parts(layer, numbers)
    rank = {t.number: i + 1 for i, (t, _) in enumerate(layer.ranking())}
    at_eviction = {r.turn: r.importance for r in view.evictions}  # the last eviction of each turn
    rows = []
    for t in turns:
        st = layer.turn(t.seq)
        rows.append(
            {
                "turn": t.seq,
                "role": t.role,
                "text": shorten(t.content),
                "tokens": t.tokens,
                "state": "in memory" if st.active else "evicted",
                "protected": layer.lag_left(st) if layer.is_protected(st) else 0,
                "pinned": bool(st.pinned),
                "citations": counts.get(t.seq, 0),
                "last cited": f"step {last[t.seq]}" if t.seq in last else "",
                "importance": round(float(importance.get(t.seq, 0.0)), 4),
                "at eviction": round(float(at_eviction[t.seq]), 4) if t.seq in at_eviction else None,
                "need prior": None if st.prior is None else round(st.prior, 3),
                "from prior": round(split[t.seq][0], 4) if t.seq in split else None,
                "from evidence": round(split[t.seq][1], 4) if t.seq in split else None,
                "rank": str(rank[t.seq]) if t.seq in rank else "",
            }
        )
    df = pd.DataFrame(
        rows,
        columns=[
            "turn",
            "role",
            "text",
            "tokens",
            "state",
            "protected",
            "pinned",
            "citations",
            "last cited",
            "importance",
            "at eviction",
            "need prior",
            "from prior",
            "from evidence",
            "rank",
        ],
    )
    return df.set_index("turn")


def importance_parts(layer, numbers: list[int]) -> dict[int, tuple[float, float]]:
    """Importance now split into (prior part, evidence part) per turn, where the policy has a prior."""
    if not numbers:
        return {}
    parts = layer.policy.parts([layer.turn(n) for n in numbers], layer.evidence, layer.step)
    return dict(zip(numbers, parts)) if parts is not None else {}


def pin_changes(edited_rows: dict, numbers: list[int], pinned_now: dict[int, bool]) -> list[tuple[int, bool]]:
    """The data editor's ``edited_rows`` (positions) as (turn number, pinned) changes to apply."""
    out = []
    for pos, change in sorted(edited_rows.items(), key=lambda kv: int(kv[0])):
        if "pinned" not in change:
            continue
        number = numbers[int(pos)]
        want = bool(change["pinned"])
        if pinned_now.get(number) != want:
            out.append((number, want))
    return out


def runners_text(record: EvictionRecord) -> str:
    return ", ".join(f"#{t} ({score:.3g})" for t, score in record.runners_up) or "none"


def eviction_history(records: list[tuple[EvictionRecord, str]]) -> pd.DataFrame:
    """One page of the eviction history: (record, its turn's role) pairs, as read (newest first)."""
    rows = [
        {
            "step": r.step,
            "turn": r.turn,
            "role": role,
            "importance at eviction": round(r.importance, 4),
            "runners-up": runners_text(r),
            "tokens": f"{r.tokens_before} → {r.tokens_after} / {r.budget}",
            "policy": r.policy,
            "reason": r.reason,
        }
        for r, role in records
    ]
    return pd.DataFrame(
        rows, columns=["step", "turn", "role", "importance at eviction", "runners-up", "tokens", "policy", "reason"]
    )


def misses_table(view: MemoryView) -> pd.DataFrame:
    by = view.by_number
    rows = [
        {
            "step": m.step,
            "turn": m.turn,
            "text": shorten(by[m.turn].content, 70) if m.turn in by else "",
            "similarity": round(m.similarity, 3),
            "restored then": bool(m.restored),
            "in memory now": view.layer.turn(m.turn).active if m.turn in by else False,
        }
        for m in reversed(view.misses)
    ]
    return pd.DataFrame(rows, columns=["step", "turn", "text", "similarity", "restored then", "in memory now"])
