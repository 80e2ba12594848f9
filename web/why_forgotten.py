"""The inspector's "why was this forgotten?" in plain words for a person: when a turn left memory,
over which budget, what the policy measured (its citations, or its prior alone), which part of the
importance decided, what was next in line, and what the person can do.

It reads the turn's last eviction record, snapshotted when the decision was made, and measures the
importance again now from the citation log, as the next eviction would."""

from __future__ import annotations

from assistant.store import MemoryView
from web.inspector_tables import importance_parts, runners_text
from web.views import policy_description

ROLE_WORDS = {"user": "your message", "assistant": "an answer", "system": "a system note"}


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
