"""Pooling held-out runs (``lagmem bench holdout``): recall and gap closed per budget and noise with
bootstrap intervals over questions, and wins / ties / losses per cell against each baseline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BASELINES = ("fifo", "lru", "accumulate", "window", "userfirst", "largest", "userfirst_largest", "userlru")
BOOTSTRAP = 1000


def _recall(results) -> float:
    pairs = sum(r.evidence for r in results)
    return sum(r.kept for r in results) / pairs if pairs else 0.0


def pool(
    results: dict[tuple, list],
    budgets: Sequence[int],
    noises: Sequence[int] = (0, 2),
    folds: Sequence = (),
    n_boot: int = BOOTSTRAP,
    seed: int = 0,
) -> dict:
    """``results[(fold, policy, budget, noise)]`` -> pooled table with intervals and cell verdicts."""
    policies = list(dict.fromkeys(k[1] for k in results))
    baselines = [x for x in BASELINES if x in policies]  # the ones that ran
    rng = np.random.default_rng(seed)
    table, cells = [], []
    for b in budgets:
        for k in noises:

            def get(policy: str) -> list:
                kk = noises[0] if policy == "oracle" else k
                return [r for f in folds for r in results[(f, policy, b, kk)]]

            units = {p: get(p) for p in policies}
            n = len(units["fifo"])
            ev = np.array([r.evidence for r in units["fifo"]], dtype=float)
            kept = {p: np.array([r.kept for r in units[p]], dtype=float) for p in policies}
            idx = rng.integers(0, n, size=(n_boot, n))
            pairs = ev[idx].sum(1)
            boot = {p: kept[p][idx].sum(1) / pairs for p in policies}
            point = {p: kept[p].sum() / ev.sum() for p in policies}
            span = boot["oracle"] - boot["fifo"]
            for p in policies:
                gap = (boot[p] - boot["fifo"]) / np.where(span > 1e-12, span, np.nan)
                g0 = (
                    (point[p] - point["fifo"]) / (point["oracle"] - point["fifo"])
                    if point["oracle"] > point["fifo"]
                    else None
                )
                table.append(
                    {
                        "budget": b,
                        "noise": k,
                        "policy": p,
                        "recall": point[p],
                        "recall_ci": [float(np.quantile(boot[p], 0.025)), float(np.quantile(boot[p], 0.975))],
                        "gap_closed": g0,
                        "gap_ci": [float(np.nanquantile(gap, 0.025)), float(np.nanquantile(gap, 0.975))],
                        "questions": n,
                        "pairs": int(ev.sum()),
                    }
                )
            for f in folds:
                r = {p: round(_recall(results[(f, p, b, noises[0] if p == "oracle" else k)]), 4) for p in policies}
                best = max(baselines, key=lambda x: r[x])
                cells.append(
                    {
                        "fold": f,
                        "budget": b,
                        "noise": k,
                        "measured": r["measured"],
                        **{x: r[x] for x in baselines},
                        "best_baseline": best,
                        "verdict": _verdict(r["measured"], r[best]),
                    }
                )
    wtl = {x: _wtl(cells, x) for x in (*baselines, "best_baseline")}
    return {"table": table, "cells": cells, "wins_ties_losses": wtl}


def _verdict(mine: float, other: float) -> str:
    return "win" if mine > other else "tie" if mine == other else "loss"


def _wtl(cells: list[dict], against: str) -> dict:
    out = {"win": 0, "tie": 0, "loss": 0}
    for c in cells:
        other = c[c["best_baseline"]] if against == "best_baseline" else c[against]
        out[_verdict(c["measured"], other)] += 1
    return out


def format_pooled(pooled: dict) -> str:
    lines = [f"{'B':>5} {'noise':>5}  {'policy':<34} {'recall':>6}  {'95% CI':<15} {'gap':>6}  {'95% CI':<15}"]
    prev = None
    for r in pooled["table"]:
        if prev is not None and (r["budget"], r["noise"]) != prev:
            lines.append("")
        prev = (r["budget"], r["noise"])
        gap = "-" if r["gap_closed"] is None else f"{r['gap_closed']:.3f}"
        lines.append(
            f"{r['budget']:>5} {r['noise']:>5}  {r['policy']:<34} {r['recall']:.4f}  "
            f"[{r['recall_ci'][0]:.3f}, {r['recall_ci'][1]:.3f}] {gap:>6}  "
            f"[{r['gap_ci'][0]:.3f}, {r['gap_ci'][1]:.3f}]"
        )
    lines.append("")
    lines.append("held-out cells (fold x budget x noise), measured against:")
    for x, c in pooled["wins_ties_losses"].items():
        lines.append(f"  {x:<14} {c['win']:>2} wins, {c['tie']:>2} ties, {c['loss']:>2} losses")
    return "\n".join(lines)
