"""Plain data for the pages: the chat history, the turn table, the eviction history, the memory
timeline, chart series and the plain-words "why was this forgotten?".

Everything is read in one read-only session (``load_view``), so one page render shows one
consistent moment of the memory, and importance is computed *now* from the citation log by the
conversation's policy (never stored), exactly as the next eviction would compute it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pandas as pd
from sqlalchemy.orm import Session

from memory.layer import MemoryLayer
from memory.policies import POLICIES
from memory.types import EvictionRecord
from storage import repo
from storage.models import Conversation, MemoryEvent, MissRow, Turn

from ..store import MemoryStore, load_layer, owner_of

ROLE_WORDS = {"user": "your message", "assistant": "an answer", "system": "a system note"}


def policy_description(name: str) -> str:
    factory = POLICIES.get(name)
    return getattr(factory, "description", "") if factory else ""


def shorten(text: str, limit: int = 90) -> str:
    """One line of at most ``limit`` characters (the table's text column; full text on select)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass
class MemoryView:
    """One conversation's stored state, read at one moment."""

    conv: Conversation
    layer: MemoryLayer
    turns: list[Turn]
    evictions: list[EvictionRecord]
    events: list[MemoryEvent] = field(default_factory=list)
    misses: list[MissRow] = field(default_factory=list)
    feedback: dict[int, float] = field(default_factory=dict)

    @property
    def by_number(self) -> dict[int, Turn]:
        return {t.seq: t for t in self.turns}


def load_view(store: MemoryStore, conv_id: int, owner: str | None = None) -> MemoryView:
    owner = owner or owner_of(store)
    with Session(store.reader, expire_on_commit=False) as s:
        conv = repo.get_conversation(s, conv_id, owner=owner)
        view = MemoryView(
            conv=conv,
            layer=load_layer(s, conv),
            turns=repo.turn_rows(s, conv_id),
            evictions=repo.load_evictions(s, conv_id),
            events=repo.load_events(s, conv_id),
            misses=repo.load_misses(s, conv_id),
            feedback=repo.load_feedback(s, conv_id),
        )
        s.expunge_all()
    return view


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


def chat_history(view: MemoryView) -> list[Message]:
    """Every stored turn, with each answer's citations, feedback and the evictions its exchange
    caused (at the user's step, or when the answer itself arrived)."""
    cites: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for c in view.layer.citations():
        if c.answer_turn is not None:
            cites[c.answer_turn].append((c.turn, c.weight))
    out = []
    for t in view.turns:
        m = Message(t.seq, t.role, t.content, sorted(cites.get(t.seq, [])), feedback=view.feedback.get(t.seq), model=t.model)
        if t.role == "assistant":
            m.evicted = [r.turn for r in view.evictions
                         if r.step == t.seq - 1 or (r.step == t.seq and r.reason.endswith(f"turn {t.seq} arrived"))]
        out.append(m)
    return out


def eviction_line(evicted: list[int]) -> str:
    if not evicted:
        return ""
    n = len(evicted)
    which = ", ".join(f"#{t}" for t in evicted[:6]) + (" …" if n > 6 else "")
    return f"{n} turn{'s' if n != 1 else ''} left memory ({which}) — see the Memory inspector."


def pending_user_turn(view: MemoryView) -> Turn | None:
    """The last turn, when it is a user message without an answer (a failed exchange)."""
    return view.turns[-1] if view.turns and view.turns[-1].role == "user" else None


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
        "evicted": len(snap.evicted),
        "step": snap.step,
    }


def turn_table(view: MemoryView) -> pd.DataFrame:
    """One row per turn, indexed by turn number (the data editor's pins map back through it)."""
    layer = view.layer
    counts = Counter(c.turn for c in layer.citations())
    last: dict[int, int] = {}
    for c in layer.citations():
        last[c.turn] = max(last.get(c.turn, 0), c.step)
    numbers = [t.seq for t in view.turns]
    importance = layer.importance(numbers) if numbers else {}
    rank = {t.number: i + 1 for i, (t, _) in enumerate(layer.ranking())}
    rows = []
    for t in view.turns:
        st = layer.turn(t.seq)
        rows.append({
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
            "rank": str(rank[t.seq]) if t.seq in rank else "",
        })
    df = pd.DataFrame(rows, columns=["turn", "role", "text", "tokens", "state", "protected", "pinned",
                                     "citations", "last cited", "importance", "rank"])
    return df.set_index("turn")


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


def eviction_history(view: MemoryView) -> pd.DataFrame:
    by = view.by_number
    rows = [{
        "step": r.step,
        "turn": r.turn,
        "role": by[r.turn].role if r.turn in by else "",
        "importance": round(r.importance, 4),
        "runners-up": runners_text(r),
        "tokens": f"{r.tokens_before} → {r.tokens_after} / {r.budget}",
        "policy": r.policy,
        "reason": r.reason,
    } for r in reversed(view.evictions)]
    return pd.DataFrame(rows, columns=["step", "turn", "role", "importance", "runners-up", "tokens", "policy", "reason"])


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
        evidence = (f"It had been cited {len(cited_before)} time{'s' if len(cited_before) != 1 else ''}, last at step {last.step} "
                    f"(by the {last.source} retriever, confidence {last.weight:.2f}).")
    else:
        evidence = "No answer had ever cited it."
    lines.append(f"{how} {evidence} Among the turns that could be evicted it scored lowest, {r.importance:.3g}.")
    if r.runners_up:
        lines.append("Next in line were " + runners_text(r) + "; they stayed.")
    lines.append("Turns still inside their lag window (new turns, protected while evidence about them accrues) "
                 "and pinned turns could not be chosen.")
    if len(records) > 1:
        lines.append(f"It has left memory {len(records)} times in all.")
    state = view.layer.turn(number)
    if state.active:
        lines.append("It is back in memory now.")
    else:
        lines.append("Nothing is lost: the turn is still stored, and Restore brings it back into memory.")
    return " ".join(lines)


def misses_table(view: MemoryView) -> pd.DataFrame:
    by = view.by_number
    rows = [{
        "step": m.step,
        "turn": m.turn,
        "text": shorten(by[m.turn].content, 70) if m.turn in by else "",
        "similarity": round(m.similarity, 3),
        "restored then": bool(m.restored),
        "in memory now": view.layer.turn(m.turn).active if m.turn in by else False,
    } for m in reversed(view.misses)]
    return pd.DataFrame(rows, columns=["step", "turn", "text", "similarity", "restored then", "in memory now"])


# ----- charts -------------------------------------------------------------------------------


def memory_timeline(view: MemoryView) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tokens in memory at the end of every step, and one marker per step with evictions.

    Rebuilt from the turns' arrival steps, the eviction records and the restore events. Within one
    step a turn's evictions and restores alternate (a restore needs an evicted turn and vice
    versa), so their counts alone say how the step ended for it.
    """
    tokens = {t.seq: t.tokens for t in view.turns}
    evicts: dict[int, Counter] = defaultdict(Counter)
    restores: dict[int, Counter] = defaultdict(Counter)
    for r in view.evictions:
        evicts[r.step][r.turn] += 1
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
        for n in set(evicts[step]) | set(restores[step]):
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
        recs = [r for r in view.evictions if r.step == step]
        if recs:
            markers.append({"step": step, "peak": max(r.tokens_before for r in recs),
                            "evicted": ", ".join(f"#{r.turn}" for r in recs), "count": len(recs)})
    return (pd.DataFrame(points, columns=["step", "tokens"]),
            pd.DataFrame(markers, columns=["step", "peak", "evicted", "count"]))


def importance_series(view: MemoryView) -> pd.DataFrame:
    layer = view.layer
    active = [t for t in layer.turns() if t.active]
    imp = layer.importance([t.number for t in active]) if active else {}
    rows = []
    for t in active:
        status = "pinned" if t.pinned else ("protected" if layer.is_protected(t) else "can be evicted")
        rows.append({"turn": t.number, "importance": float(imp.get(t.number, 0.0)), "status": status, "tokens": t.tokens})
    return pd.DataFrame(rows, columns=["turn", "importance", "status", "tokens"])


def citation_series(view: MemoryView) -> pd.DataFrame:
    rows = [{"step": c.step, "turn": c.turn, "weight": c.weight, "answer": c.answer_turn, "source": c.source}
            for c in view.layer.citations()]
    return pd.DataFrame(rows, columns=["step", "turn", "weight", "answer", "source"]).sort_values(["step", "turn"])
