"""The offline optimum: which turns to keep, and until when, knowing every future question.

Model: any turn may be dropped on arrival, an evicted turn never returns, and after each
turn arrives the kept turns must fit the budget. Turn ``i`` is then kept on an interval
``[i, keep_until_i]``; keeping it past its last useful question gains nothing, so ``keep_until_i``
is one of the positions at which it is needed. The value is the number of (question, evidence turn)
pairs whose turn is in memory when the question is asked (micro recall's numerator).

Integer program: for each turn ``i`` needed at positions ``p_1 < ... < p_m`` (a question asked right
after turn ``p`` sees turns arrived at steps <= p), binary ``x_ik`` = "kept through ``p_k``", with
``x_i1 >= x_i2 >= ...``; maximise ``sum w_ik x_ik``. Turn ``i`` occupies memory at step ``t`` iff it
is kept through its first need at or after ``t``, so the budget row at ``t`` is
``sum_i size_i * x_{i,k_i(t)} <= B``. Between arrivals of needed turns the rows only weaken, so
rows at those arrivals suffice. Turns never needed are dropped on arrival. scipy's ``milp`` (HiGHS)
solves it exactly; ``brute_force`` checks it on small cases in the tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory.policies import Policy

Needs = Mapping[int, Mapping[int, float]]  # turn -> {position: weight}


def _normalise(sizes: Mapping[int, float], needs: Needs) -> dict[int, list[tuple[int, float]]]:
    out = {}
    for turn, at in needs.items():
        pts = sorted((p, float(w)) for p, w in at.items() if p >= turn and w > 0)
        if pts and turn in sizes:
            out[turn] = pts
    return out


def solve(sizes: Mapping[int, float], needs: Needs, budget: float) -> tuple[float, dict[int, int]]:
    """Optimal value and plan ``{turn: keep_until position}`` (turns absent from the plan are
    dropped on arrival)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    items = _normalise(sizes, needs)
    var: list[tuple[int, int]] = []  # (turn, k)
    index: dict[tuple[int, int], int] = {}
    for turn in sorted(items):
        for k in range(len(items[turn])):
            index[(turn, k)] = len(var)
            var.append((turn, k))
    n = len(var)
    if n == 0:
        return 0.0, {}
    c = np.array([-items[t][k][1] for t, k in var])
    rows, lo, hi = [], [], []
    # monotone: x_{i,k} - x_{i,k-1} <= 0
    for t, k in var:
        if k > 0:
            r = np.zeros(n)
            r[index[(t, k)]] = 1.0
            r[index[(t, k - 1)]] = -1.0
            rows.append(r), lo.append(-np.inf), hi.append(0.0)
    # budget rows at each arrival of a needed turn
    turns = sorted(items)
    for step in turns:
        r = np.zeros(n)
        for i in turns:
            if i > step:
                break
            k = next((k for k, (p, _) in enumerate(items[i]) if p >= step), None)
            if k is not None:
                r[index[(i, k)]] = float(sizes[i])
        rows.append(r), lo.append(-np.inf), hi.append(float(budget))
    res = milp(
        c,
        constraints=LinearConstraint(np.array(rows), lo, hi),
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
    )
    if not res.success:  # pragma: no cover - the program is always feasible (x = 0)
        raise RuntimeError(f"oracle MILP failed: {res.message}")
    x = np.round(res.x).astype(int)
    plan: dict[int, int] = {}
    for (t, k), v in zip(var, x):
        if v:
            plan[t] = max(plan.get(t, -1), items[t][k][0])
    value = float(sum(items[t][k][1] for (t, k), v in zip(var, x) if v))
    return value, plan


def brute_force(sizes: Mapping[int, float], needs: Needs, budget: float) -> float:
    """Exhaustive search over every turn's keep-until choice (tests only: tiny cases)."""
    items = _normalise(sizes, needs)
    turns = sorted(items)
    choices = [[None] + [p for p, _ in items[t]] for t in turns]
    horizon = max((p for pts in items.values() for p, _ in pts), default=0)
    best = 0.0
    for combo in itertools.product(*choices):
        ok = True
        for step in range(1, horizon + 1):
            used = sum(sizes[t] for t, u in zip(turns, combo) if u is not None and t <= step <= u)
            if used > budget:
                ok = False
                break
        if ok:
            value = sum(w for t, u in zip(turns, combo) if u is not None for p, w in items[t] if p <= u)
            best = max(best, value)
    return best


@dataclass
class OraclePolicy(Policy):
    """Replays a plan through the layer: importance 1 while the plan keeps the turn, else 0.

    The plan's kept turns fit the budget at every step, so the layer (lag 0) evicts only turns the
    plan dropped and the run scores exactly the plan's value. Benchmarks only: it sees the future.
    """

    plan: Mapping[int, int]
    lag: int | None = 0
    name = "oracle"
    description = "knows every future question (benchmarks only): the exact optimum"

    def scores(self, candidates, evidence, now):
        plan = self.plan
        return [1.0 if plan.get(t.number, -1) >= now else 0.0 for t in candidates]


def needs_from_schedule(schedule: Mapping[int, Sequence]) -> dict[int, dict[int, float]]:
    """``{turn: {position: pairs}}`` from ``{position: [questions with .evidence]}``."""
    needs: dict[int, dict[int, float]] = {}
    for pos, questions in schedule.items():
        for q in questions:
            for turn in q.evidence:
                at = needs.setdefault(turn, {})
                at[pos] = at.get(pos, 0.0) + 1.0
    return needs
