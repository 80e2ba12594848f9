"""A time budget for replays whose cost is the history times the memory.

An import or a what-if replay runs the memory layer once per line of the file, and each decision
over budget measures every turn in memory (the policy's estimate is relative to the candidates'
means), so its cost is turns x memory size: a 200,000-turn file with a large budget is hours of CPU.
Inside a page's callback that would hold the server, so the web shell gives these replays a
``Deadline``: checked at each progress point, it stops the work with ``TooMuchWork``, whose message
says how far it got, the least the whole would take and what to do instead. The terminal's
commands run without one (a person there chose to wait, and sees the progress).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from assistant.errors import TooMuchWork


class Deadline:
    """``seconds`` of work for ``what`` (e.g. "the import of “chat.jsonl”"), from now; ``hint``
    is what the person can do instead (said in the error)."""

    def __init__(self, seconds: float, what: str, hint: str = "", clock: Callable[[], float] = time.perf_counter):
        self.seconds, self.what, self.hint, self.clock = seconds, what, hint, clock
        self.started = clock()

    def check(self, done: float, total: float) -> None:
        """Raise ``TooMuchWork`` if the budget is spent with ``done`` of ``total`` units of work done."""
        elapsed = self.clock() - self.started
        if elapsed <= self.seconds or done >= total:
            return
        share = done / total if total else 1.0
        # per-step cost grows with the memory as it fills, so a linear extrapolation is a floor
        whole = elapsed / share if share > 0 else float("inf")
        raise TooMuchWork(
            f"{self.what[:1].upper()}{self.what[1:]} stopped after {elapsed:.0f} s, {share:.0%} of the way "
            f"(the limit is {self.seconds:.0f} s); the whole would take at least {_duration(whole)}. "
            f"Nothing was stored.{' ' + self.hint if self.hint else ''}"
        )


def _duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "very long"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"
