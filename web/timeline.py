"""The inspector's "tokens in memory" chart, kept per session and extended by what changed.

Tokens in memory at the end of every step are rebuilt from the turns' arrivals, the eviction
records and the events that may bring a turn back (restores, pins), as
``chart_series.memory_timeline`` does from a whole view, but read from a step on: a ``Timeline``
remembers the memory at the end of the last *closed* step (one before the conversation's clock: no
row is ever written at an earlier step again), so a refresh reads only the rows of the steps after
it. The first draw of a session reads the history once; each later one reads what arrived since.

Drawn, the line has at most ``MAX_POINTS`` points: a longer history is shown in buckets of steps,
each at its highest (the budget line is about peaks), and eviction markers are merged per bucket.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict

import numpy as np
import pandas as pd

from assistant.store import PageReader

MAX_POINTS = 2000


class Timeline:
    def __init__(self, key: tuple):
        self.key = key
        self.closed = 0  # steps 1 .. closed are final
        self.active: dict[int, int] = {}  # turn -> tokens, in memory at the end of step ``closed``
        self.used = 0
        self.tokens = array("q")  # tokens in memory at the end of steps 1 .. closed
        # the closed steps with evictions, as columns: step, peak (tokens before), count, evicted turns
        self.marks = (array("q"), array("q"), array("q"))
        self.evicted: list[list[tuple[int, int]]] = []  # each marker's (turn, tokens before) records
        self._open: tuple[list[int], list[tuple]] = ([], [])  # the steps after ``closed``

    def update(self, r: PageReader) -> None:
        """Read the rows of the steps after the last closed one and bring the line up to date."""
        arrivals = dict(r.arrivals_after(self.closed))
        evictions = r.evictions_after(self.closed)
        returns = r.returns_after(self.closed)
        # rows come in step order: the last of each is its latest step
        now = max(
            r.conv.step,
            next(reversed(arrivals), 0),
            evictions[-1][0] if evictions else 0,
            max((s for s, _ in returns), default=0),
        )
        # tokens of the turns that may come back (few), whether in memory now or not
        tokens = r.tokens_of({n for _, n in returns})
        at_step: dict[int, list[tuple[int, int]]] = defaultdict(list)  # step -> (turn, tokens before)
        for step, turn, before in evictions:
            at_step[step].append((turn, before))
        back: dict[int, list[int]] = defaultdict(list)  # step -> turns restored or pinned (few)
        for step, turn in returns:
            back[step].append(turn)
        points: list[int] = []
        markers: list[tuple[int, int, str, int]] = []

        def run(active: dict[int, int], used: int, first: int, last: int) -> int:
            for step in range(first, last + 1):
                if step in arrivals:
                    active[step] = arrivals[step]
                    used += arrivals[step]
                recs = at_step.get(step, ())
                if step in back:
                    # within one step a turn's evictions and restores alternate, so their counts
                    # say how the step ended for it (a pin may count a restore that did nothing)
                    evicts, restores = Counter(t for t, _ in recs), Counter(back[step])
                    for n in evicts.keys() | restores.keys():
                        e, k = evicts[n], restores[n]
                        ends_active = e <= k if n in active else k > e
                        if ends_active and n not in active:
                            active[n] = tokens.get(n, 0)
                            used += active[n]
                        elif not ends_active and n in active:
                            used -= active.pop(n)
                else:  # evictions alone (the common step): each evicted turn leaves
                    for n, _ in recs:
                        if n in active:
                            used -= active.pop(n)
                points.append(used)
                if recs:  # the turns' labels are written only for the markers drawn (``frames``)
                    markers.append((step, recs[0][1] if len(recs) == 1 else max(b for _, b in recs), recs, len(recs)))
            return used

        final = now - 1  # the clock's own step may still get rows (a pin, a restore): kept open
        if final > self.closed:
            self.used = run(self.active, self.used, self.closed + 1, final)
            self.tokens.extend(points)
            self.marks[0].extend([m[0] for m in markers])
            self.marks[1].extend([m[1] for m in markers])
            self.marks[2].extend([m[3] for m in markers])
            self.evicted += [m[2] for m in markers]
            self.closed = final
            points, markers = [], []
        run(dict(self.active), self.used, self.closed + 1, now)
        self._open = (points, markers)

    def frames(self, max_points: int = MAX_POINTS) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        """(points, markers, steps per point) for the chart: one point per step, or per bucket of
        steps (each at its highest) when there are more than ``max_points`` steps."""
        points_open, markers_open = self._open
        values = np.concatenate((np.frombuffer(self.tokens, dtype=np.int64), np.asarray(points_open, dtype=np.int64)))
        opened = [[m[i] for m in markers_open] for i in range(4)]
        steps, peaks, counts = (
            np.concatenate((np.frombuffer(c, dtype=np.int64), np.asarray(o, dtype=np.int64)))
            for c, o in zip(self.marks, (opened[0], opened[1], opened[3]))
        )
        evicted = self.evicted + list(opened[2])
        n = len(values)
        width = max(1, math.ceil(n / max_points))
        if width == 1:
            return (
                pd.DataFrame({"step": np.arange(1, n + 1), "tokens": values}),
                pd.DataFrame({"step": steps, "peak": peaks, "evicted": [_label(e) for e in evicted], "count": counts}),
                1,
            )
        padded = np.concatenate((values, np.full(-n % width, values.min(initial=0))))
        points = pd.DataFrame(
            {"step": np.arange(len(padded) // width) * width + 1, "tokens": padded.reshape(-1, width).max(axis=1)}
        )
        # markers merged per bucket (steps are in order): the highest peak, the total count, and
        # the first marker's evicted turns, with "…" when the bucket evicted more
        at = (steps - 1) // width * width + 1
        first = np.flatnonzero(np.r_[True, at[1:] != at[:-1]]) if len(at) else np.zeros(0, dtype=np.int64)
        total = np.add.reduceat(counts, first) if len(at) else counts
        labels = [_label(evicted[i]) + (" …" if t > counts[i] else "") for i, t in zip(first.tolist(), total.tolist())]
        markers = pd.DataFrame(
            {
                "step": at[first],
                "peak": np.maximum.reduceat(peaks, first) if len(at) else peaks,
                "evicted": labels,
                "count": total,
            }
        )
        return points, markers, width


def _label(records: list[tuple[int, int]]) -> str:
    return ", ".join(f"#{t}" for t, _ in records)
