"""The need estimator's held-out report per kind of conversation (``lagmem bench need-train``).

Every figure scores conversations the model was not fitted on, in three settings:

* ``within``: leave one conversation out among the conversations of the same kind (LoCoMo's from
  LoCoMo's, LongMemEval's from LongMemEval's);
* ``across``: fitted on every conversation of one kind, scored on every conversation of the other;
* ``both``: leave one conversation out among all of them (the shipped model's protocol: it is the
  final fit on all of them).

Each setting runs the chosen candidate and, as the ablation, the same candidate without the role
features (``bench.need_train.ROLE``). The figures: log loss and AUC pooled over the scored
conversations, the AUC among user turns alone (in a person-assistant chat the role alone separates
most evidence; this says whether the estimator also orders what the person said), the mean prior
against the evidence rate, and the expected calibration error over ten equal-width bins.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bench import need_train
from bench.need_data import TurnTable
from memory.need import FEATURES

BINS = 10
KIND_NAMES = {"two people": "LoCoMo", "person-assistant": "LongMemEval"}


def without_role(spec: dict) -> dict:
    """The same candidate on its feature set without the role features."""
    base = spec["features"].replace("+role", "")
    return {**spec, "features": base}


def ece(y: np.ndarray, p: np.ndarray, bins: int = BINS) -> float:
    """Expected calibration error: the turn-weighted mean |evidence rate - mean prior| over bins of p."""
    edges = np.minimum((p * bins).astype(int), bins - 1)
    return float(
        sum(abs(y[edges == b].mean() - p[edges == b].mean()) * (edges == b).sum() for b in set(edges)) / len(y)
    )


def figures(tables: Sequence[TurnTable], held: Sequence[np.ndarray]) -> dict:
    """Pooled figures of the scored conversations ``tables`` from their priors ``held``."""
    y = np.concatenate([t.y for t in tables])
    p = np.concatenate(held)
    user = np.concatenate([t.X[:, FEATURES.index("assistant")] == 0 for t in tables])
    s = need_train.scores(y, p)
    s["auc_user_turns"] = need_train.scores(y[user], p[user])["auc"] if user.any() else None
    s["mean_p"], s["rate"], s["ece"] = float(p.mean()), float(y.mean()), ece(y, p)
    s["auc_per_conversation"] = [need_train.scores(t.y, q)["auc"] for t, q in zip(tables, held)]
    s["scored"] = [t.sample_id for t in tables]
    return s


def _loo(pool: Sequence[TurnTable], scored: Sequence[TurnTable], spec: dict) -> list[np.ndarray]:
    out = []
    for t in scored:
        rest = [u for u in pool if u is not t]
        out.append(need_train.predict(need_train.fit(rest, spec), t))
    return out


def report(tables: Sequence[TurnTable], spec: dict) -> list[dict]:
    """One row per (setting, fitted on, scored on, features): see the module's docstring."""
    kinds = list(dict.fromkeys(t.kind for t in tables))
    of = {k: [t for t in tables if t.kind == k] for k in kinds}
    rows = []
    for s in (spec, without_role(spec)):
        for k in kinds:
            if len(of[k]) > 1:
                rows.append(_row("within", k, k, s, of[k], _loo(of[k], of[k], s)))
        for a in kinds:
            for b in kinds:
                if a != b:
                    model = need_train.fit(of[a], s)
                    rows.append(_row("across", a, b, s, of[b], [need_train.predict(model, t) for t in of[b]]))
        if len(kinds) > 1:
            for k in kinds:
                rows.append(_row("both", "both", k, s, of[k], _loo(tables, of[k], s)))
    return rows


def _row(setting: str, fitted: str, scored: str, spec: dict, tables, held) -> dict:
    return {
        "setting": setting,
        "fitted_on": fitted,
        "scored_on": scored,
        "model": need_train.label(spec),
        "features": spec["features"],
        **figures(tables, held),
    }


def _name(kind: str) -> str:
    return KIND_NAMES.get(kind, kind)


def format_report(rows: Sequence[dict]) -> str:
    head = (
        f"{'setting':<8} {'fitted on':<12} {'scored on':<12} {'features':<18} "
        f"{'log_loss':>8} {'auc':>6} {'auc user':>8} {'mean p':>7} {'rate':>6} {'ece':>6}  auc per scored conversation"
    )
    lines = [head]
    for r in rows:
        fitted = {"within": "the others", "both": "others, both"}.get(r["setting"], _name(r["fitted_on"]))
        user = f"{r['auc_user_turns']:.3f}" if r["auc_user_turns"] is not None else "-"
        per = " ".join(f"{a:.3f}" if a is not None else "-" for a in r["auc_per_conversation"])
        lines.append(
            f"{r['setting']:<8} {fitted:<12} {_name(r['scored_on']):<12} {r['features']:<18} "
            f"{r['log_loss']:>8.4f} {r['auc']:>6.3f} {user:>8} {r['mean_p']:>7.3f} {r['rate']:>6.3f} {r['ece']:>6.3f}  {per}"
        )
    return "\n".join(lines)
