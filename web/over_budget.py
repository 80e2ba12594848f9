"""Over budget, in words: what holds the memory over its budget and what the person can do.

The memory contract lets the memory exceed its budget only when pinned and protected turns alone
exceed it (nothing else may be evicted). Which of the two holds it decides the advice: a pin is
undone by unpinning, the lag's protection by time (or a shorter lag); a larger budget fixes both.
"""

from __future__ import annotations


def over_budget_text(b: dict, lag: int) -> str | None:
    """``b`` is ``inspector_tables.budget_summary``; None when the memory is within its budget."""
    if not b["over"]:
        return None
    head = f"Memory over budget: {b['used']:,} of {b['budget']:,} tokens."
    if not b["held_over"]:
        return head + " The next exchange evicts turns to get back under it."
    holders, todo = [], []
    if b["pinned"]:
        holders.append(f"pinned turns hold {b['pinned']:,} tokens")
        todo.append("unpin a turn (in the Memory inspector)")
    if b["protected"]:
        holders.append(
            f"the newest turns, protected for the lag of {lag} step{'s' if lag != 1 else ''}, "
            f"hold {b['protected']:,} tokens"
        )
        todo.append("keep chatting (protected turns become evictable once older than the lag), lower the lag")
    todo.append("raise the budget (Memory settings in the sidebar)")
    return f"{head} Nothing can be evicted: {' and '.join(holders)}. To get back under it: {', or '.join(todo)}."
