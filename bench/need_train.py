"""Training and validating the need estimator on LoCoMo evidence labels (``lagmem bench need-train``).

The model is a logistic regression (scikit-learn) of "some question will need this turn" on the
causal features of ``memory/need.py``. What is chosen (the feature set and the regularisation
``C``) is chosen by leave-one-conversation-out log loss *within the conversations it is given*, so
the holdout protocol can call ``train`` on its training conversations alone. Feature sets compared:

* ``text``: the turn's text and its place (words, question, numbers, dates, names, position in
  session, after a question); needs no embedding, so every path that stores a turn can compute it;
* ``text+sim``: plus similarity to the previous turn and to recent questions (embeddings);
* ``text+emb``: plus the 384-d embedding itself (one coefficient per dimension).

A richer set must beat a simpler one by ``SIMPLER_BY`` in log loss to be chosen. A gradient-boosted
model was tried too (LOO AUC 0.811 against 0.807 on the dev file); not worth shipping a tree file.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.need import FEATURES, NeedModel
from . import need_data
from .locomo import Conversation
from .need_data import TurnTable

SIMILARITY = ("sim_prev", "sim_recent_question")
FEATURE_SETS = {
    "text": tuple(n for n in FEATURES if n not in SIMILARITY),
    "text+sim": FEATURES,
    "text+emb": FEATURES,
}
CS = (0.03, 0.3)
SIMPLER_BY = 0.002  # log loss a richer feature set must gain to be chosen
VERSION = "need-1"


def fit(tables: Sequence[TurnTable], feature_set: str = "text", C: float = 0.1, meta: dict | None = None) -> NeedModel:
    from sklearn.linear_model import LogisticRegression

    names = FEATURE_SETS[feature_set]
    cols = [FEATURES.index(n) for n in names]
    X = np.vstack([t.X[:, cols] for t in tables])
    y = np.concatenate([t.y for t in tables])
    mean = X.mean(0)
    scale = X.std(0)
    scale[scale == 0] = 1.0
    Z = (X - mean) / scale
    emb = feature_set == "text+emb"
    if emb:
        Z = np.hstack([Z, np.vstack([t.E for t in tables])])
    m = LogisticRegression(C=C, max_iter=5000).fit(Z, y)
    coef = m.coef_[0]
    return NeedModel(
        names, tuple(mean.tolist()), tuple(scale.tolist()), tuple(coef[: len(names)].tolist()),
        float(m.intercept_[0]), tuple(coef[len(names):].tolist()) if emb else (), VERSION,
        {"feature_set": feature_set, "C": C, "trained_on": [t.sample_id for t in tables],
         "turns": int(len(y)), "evidence_rate": float(y.mean()), **(meta or {})},
    )


def predict(model: NeedModel, table: TurnTable) -> np.ndarray:
    """The model's prior for every turn of a conversation (vectorised ``NeedModel.predict``)."""
    cols = [FEATURES.index(n) for n in model.names]
    z = model.intercept + ((table.X[:, cols] - np.array(model.mean)) / np.array(model.scale)) @ np.array(model.coef)
    if model.embedding_coef:
        z = z + table.E @ np.array(model.embedding_coef)
    return 1.0 / (1.0 + np.exp(-z))


def scores(y: np.ndarray, p: np.ndarray) -> dict:
    from sklearn.metrics import log_loss, roc_auc_score

    return {"auc": float(roc_auc_score(y, p)) if 0 < y.sum() < len(y) else None,
            "log_loss": float(log_loss(y, np.clip(p, 1e-9, 1 - 1e-9), labels=[0, 1])),
            "mean_p_evidence": float(p[y == 1].mean()) if y.sum() else None,
            "mean_p_other": float(p[y == 0].mean()) if (y == 0).sum() else None}


def cross_fit(tables: Sequence[TurnTable], feature_set: str, C: float) -> list[np.ndarray]:
    """Each conversation's priors from a model fitted on the others (leave one out)."""
    out = []
    for i, t in enumerate(tables):
        rest = [u for j, u in enumerate(tables) if j != i]
        out.append(predict(fit(rest, feature_set, C), t))
    return out


def validate(tables: Sequence[TurnTable]) -> list[dict]:
    """LOO figures (pooled over the held-out conversations) for every feature set and ``C``."""
    rows = []
    y = np.concatenate([t.y for t in tables])
    for fs in FEATURE_SETS:
        for C in CS:
            held = cross_fit(tables, fs, C)
            p = np.concatenate(held)
            per = [scores(t.y, q)["auc"] for t, q in zip(tables, held)]
            rows.append({"feature_set": fs, "C": C, **scores(y, p), "auc_per_conversation": per})
    return rows


def choose(rows: Sequence[dict]) -> dict:
    """The simplest feature set within ``SIMPLER_BY`` of the best log loss; its best ``C``."""
    best = min(r["log_loss"] for r in rows)
    for fs in FEATURE_SETS:  # in order of richness
        mine = [r for r in rows if r["feature_set"] == fs]
        top = min(mine, key=lambda r: r["log_loss"])
        if top["log_loss"] <= best + SIMPLER_BY:
            return top
    raise AssertionError("unreachable")


def train(tables: Sequence[TurnTable]) -> tuple[NeedModel, list[dict]]:
    """Choose by LOO within ``tables``, then fit the chosen model on all of them."""
    if len(tables) < 2:
        raise ValueError("the need estimator needs at least two conversations to choose by leave-one-out")
    rows = validate(tables)
    pick = choose(rows)
    model = fit(tables, pick["feature_set"], pick["C"], {"validation": {k: pick[k] for k in ("auc", "log_loss")}})
    return model, rows


def format_rows(rows: Sequence[dict], pick: dict | None = None) -> str:
    lines = [f"{'features':<9} {'C':>5}  {'auc':>6}  {'log_loss':>8}  {'p|evid':>6}  {'p|other':>7}  auc per held-out conversation"]
    for r in rows:
        mark = "  <- chosen" if pick is not None and r["feature_set"] == pick["feature_set"] and r["C"] == pick["C"] else ""
        per = " ".join(f"{a:.3f}" for a in r["auc_per_conversation"])
        lines.append(f"{r['feature_set']:<9} {r['C']:>5}  {r['auc']:.3f}  {r['log_loss']:>8.4f}  "
                     f"{r['mean_p_evidence']:.3f}  {r['mean_p_other']:>7.3f}  {per}{mark}")
    return "\n".join(lines)


def priors(conv: Conversation, model) -> list[float]:
    """Each turn's prior from ``model`` (a ``NeedModel``), as the app computes it at arrival;
    embeddings are computed (or read from the cache) only when the model reads them."""
    emb = need_data.embeddings(conv) if model.uses_vectors else np.zeros((len(conv.turns), 1), dtype=np.float32)
    return predict(model, need_data.table(conv, emb)).tolist()


def shipped_priors(conversations) -> list[list[float]]:
    """Priors from the model the app ships (``assistant/need_model.json``)."""
    from assistant.need import load_model

    model = load_model()
    return [priors(c, model) for c in conversations]
