"""The inspector's chart series as plain data (``charts`` draws them): tokens in memory at every step
with a marker per step with evictions, each turn's importance now, and the citations over time."""

from __future__ import annotations

from collections import Counter, defaultdict

import pandas as pd

from assistant.store import MemoryView
from memory.types import EvictionRecord


def memory_timeline(view: MemoryView) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tokens in memory at the end of every step, and one marker per step with evictions.

    Rebuilt from the turns' arrival steps, the eviction records and the restore events, each
    grouped by step once (one pass over the steps: linear in the conversation). Within one
    step a turn's evictions and restores alternate (a restore needs an evicted turn and vice
    versa), so their counts alone say how the step ended for it.
    """
    tokens = {t.seq: t.tokens for t in view.turns}
    evicts: dict[int, Counter] = defaultdict(Counter)
    restores: dict[int, Counter] = defaultdict(Counter)
    at_step: dict[int, list[EvictionRecord]] = defaultdict(list)
    for r in view.evictions:
        evicts[r.step][r.turn] += 1
        at_step[r.step].append(r)
    for e in view.events:
        if e.kind in ("restore", "auto_restore", "pin"):
            restores[e.step][e.turn] += 1
    active: set[int] = set()
    used = 0
    points, markers = [], []
    last_step = max(view.conv.step, max(tokens, default=0))
    for step in range(0, last_step + 1):
        if step in tokens:
            active.add(step)
            used += tokens[step]
        for n in set(evicts.get(step, ())) | set(restores.get(step, ())):
            e, r = evicts[step][n], restores[step][n]  # r may count pins that restored nothing
            ends_active = e <= r if n in active else r > e
            if ends_active and n not in active:
                active.add(n)
                used += tokens.get(n, 0)
            elif not ends_active and n in active:
                active.discard(n)
                used -= tokens.get(n, 0)
        if step:
            points.append({"step": step, "tokens": used})
        recs = at_step.get(step)
        if recs:
            markers.append(
                {
                    "step": step,
                    "peak": max(r.tokens_before for r in recs),
                    "evicted": ", ".join(f"#{r.turn}" for r in recs),
                    "count": len(recs),
                }
            )
    return (
        pd.DataFrame(points, columns=["step", "tokens"]),
        pd.DataFrame(markers, columns=["step", "peak", "evicted", "count"]),
    )


def importance_series(view: MemoryView) -> pd.DataFrame:
    layer = view.layer
    active = [t for t in layer.turns() if t.active]
    imp = layer.importance([t.number for t in active]) if active else {}
    rows = []
    for t in active:
        status = "pinned" if t.pinned else ("protected" if layer.is_protected(t) else "can be evicted")
        rows.append(
            {"turn": t.number, "importance": float(imp.get(t.number, 0.0)), "status": status, "tokens": t.tokens}
        )
    return pd.DataFrame(rows, columns=["turn", "importance", "status", "tokens"])


def citation_series(view: MemoryView, cites=None) -> pd.DataFrame:
    """The citations (default: all the view's layer holds) as the chart's points."""
    rows = [
        {"step": c.step, "turn": c.turn, "weight": c.weight, "answer": c.answer_turn, "source": c.source}
        for c in (view.layer.citations() if cites is None else cites)
    ]
    return pd.DataFrame(rows, columns=["step", "turn", "weight", "answer", "source"]).sort_values(["step", "turn"])
