"""Plain data for the pages: the chat history, the turn table, the eviction history, the memory
timeline, chart series and the plain-words "why was this forgotten?".

Each takes a view of one conversation read in one read-only session: what a page shows
(``page_view.PageView``) or the whole of it (``load_view``, the store's ``view``), so one page
render shows one consistent moment of the memory, and importance is computed *now* from the
citation log by the conversation's policy (never stored), exactly as the next eviction would.
Which answer's exchange pushed a turn out is read from each eviction record's cause.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pandas as pd

from assistant.store import MemoryStore, MemoryView
from memory.policies import POLICIES
from memory.types import EvictionRecord

ROLE_WORDS = {"user": "your message", "assistant": "an answer", "system": "a system note"}


def policy_description(name: str) -> str:
    factory = POLICIES.get(name)
    return getattr(factory, "description", "") if factory else ""


def shorten(text: str, limit: int = 90) -> str:
    """One line of at most ``limit`` characters (the table's text column; full text on select)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def load_view(store: MemoryStore, conv_id: int, owner: str | None = None) -> MemoryView:
    """One conversation as the pages show it (a signed-in user's store sees only their own)."""
    return store.view(conv_id, owner=owner)


# ----- the chat page ----------------------------------------------------------------------


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


# ----- the inspector ------------------------------------------------------------------------


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


def why_forgotten(view: MemoryView, number: int) -> str:
    """A plain-words answer for a person: when, why, what else was close, and what they can do."""
    records = [r for r in view.evictions if r.turn == number]
    turn = view.by_number.get(number)
    if turn is None:
        return f"Turn {number} does not exist."
    if not records:
        return f"Turn {number} has never been forgotten: it is in memory."
    r = records[-1]
    role = ROLE_WORDS.get(turn.role, turn.role)
    cited_before = [c for c in view.layer.citations() if c.turn == number and c.step <= r.step]
    lines = [
        f"Turn {number} ({role}, {turn.tokens} tokens) left memory at step {r.step}. "
        f"The memory then held {r.tokens_before:,} tokens, over its budget of {r.budget:,}, so something had to go "
        f"({r.reason})."
    ]
    policy = r.policy
    desc = policy_description(policy)
    how = f"The {policy} policy{' ' + desc if desc else ''}."
    if cited_before:
        last = max(cited_before, key=lambda c: (c.step, c.weight))
        evidence = (
            f"It had been cited {len(cited_before)} time{'s' if len(cited_before) != 1 else ''}, "
            f"last at step {last.step} "
            f"(by the {last.source} retriever, confidence {last.weight:.2f})."
        )
    else:
        evidence = "No answer had ever cited it."
    lines.append(
        f"{how} {evidence} Among the turns that could be evicted it scored lowest, {r.importance:.3g} "
        f"(its importance at that eviction; measured now it is "
        f"{float(view.layer.importance([number]).get(number, 0.0)):.3g})."
    )
    decided = _what_decided(view, number, bool(cited_before))
    if decided:
        lines.append(decided)
    if r.runners_up:
        lines.append("Next in line were " + runners_text(r) + "; they stayed.")
    lines.append(
        "Turns still inside their lag window (new turns, protected while evidence about them accrues) "
        "and pinned turns could not be chosen."
    )
    if len(records) > 1:
        lines.append(f"It has left memory {len(records)} times in all.")
    state = view.layer.turn(number)
    if state.active:
        lines.append("It is back in memory now.")
    else:
        lines.append("Nothing is lost: the turn is still stored, and Restore brings it back into memory.")
    return " ".join(lines)


def _what_decided(view: MemoryView, number: int, cited: bool) -> str:
    """Which part of the importance decided: the need estimator's prior or the citations."""
    state = view.layer.turn(number)
    prior = "" if state.prior is None else f" (the need estimator gave it {state.prior:.2f} at arrival)"
    if not cited:
        return f"With no citation, its importance was its prior alone{prior}: the prior decided."
    split = importance_parts(view.layer, [number]).get(number)
    if split is None:
        return ""
    which = "the evidence (its citations)" if split[1] >= split[0] else "the prior"
    return (
        f"Measured now, its importance is {split[0]:.3g} from the prior{prior} and {split[1]:.3g} from "
        f"its citations: {which} weighed most."
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


# ----- charts -------------------------------------------------------------------------------


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
