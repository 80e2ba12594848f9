"""Training and validating the need estimator on evidence labels (``lagmem bench need-train``), of
LoCoMo (two people) and LongMemEval (a person and an assistant) conversations.

The label of a turn is "some question of its conversation names it as evidence"; the inputs are the
causal features of ``memory/need.py``. ``CANDIDATES`` are the models compared, in order of
richness, all with the role features (``ROLE``: who speaks and the turn's place in the exchange):

* logistic regression (scikit-learn, standardised features) on ``text+role`` (the turn's text and
  its place: words, question, numbers, dates, names, position in session, after a question, role)
  or on ``text+novelty+role`` (plus how many of its content words the last 80 turns did not use);
* gradient-boosted trees (scikit-learn's ``GradientBoostingClassifier``, shallow, few) on
  ``text+novelty+role``, exported node by node to the JSON the product evaluates with numpy
  (``memory.need_models.TreeNeedModel``).

The feature sets without the role features stay for the report's ablation (``bench/need_report.py``).

The fit weighs each kind of conversation the same (``weights``: LoCoMo's conversations have more
turns), and the choice is made by leave-one-conversation-out log loss *within the conversations
given* (the mean over kinds of each kind's pooled log loss; the simplest candidate within
``SIMPLER_BY`` of the best), so the holdout protocol can call ``train`` on its training
conversations alone. Log loss, not AUC alone, because ``measured`` uses the prior's size
(``p / mean p``), not only its order. None of the candidates reads embeddings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bench import need_data
from bench.locomo import Conversation
from bench.need_data import TurnTable
from memory.need import FEATURES, ROLE_FEATURES
from memory.need_models import NeedModel, Tree, TreeNeedModel

NOVELTY = ("log_new_words", "frac_new")
SIMILARITY = ("sim_prev", "sim_recent_question")
ROLE = ROLE_FEATURES
FEATURE_SETS = {
    "text": tuple(n for n in FEATURES if n not in SIMILARITY + NOVELTY + ROLE),
    "text+novelty": tuple(n for n in FEATURES if n not in SIMILARITY + ROLE),
    "text+role": tuple(n for n in FEATURES if n not in SIMILARITY + NOVELTY),
    "text+novelty+role": tuple(n for n in FEATURES if n not in SIMILARITY),
}
CANDIDATES = (
    {"kind": "logistic", "features": "text+role", "C": 0.03},
    {"kind": "logistic", "features": "text+role", "C": 0.3},
    {"kind": "logistic", "features": "text+novelty+role", "C": 0.03},
    {"kind": "logistic", "features": "text+novelty+role", "C": 0.3},
    {"kind": "trees", "features": "text+novelty+role", "depth": 2, "trees": 500, "rate": 0.02},
    {"kind": "trees", "features": "text+novelty+role", "depth": 3, "trees": 300, "rate": 0.02},
)
SUBSAMPLE = 0.8  # each tree sees this share of the turns (seeded: the fit is deterministic)
SIMPLER_BY = 0.002  # log loss a richer candidate must gain to be chosen
VERSION = "need-3"


def label(spec: dict) -> str:
    if spec["kind"] == "logistic":
        return f"logistic {spec['features']} C={spec['C']}"
    return f"trees {spec['features']} depth {spec['depth']} x{spec['trees']} rate {spec['rate']}"


def _stack(tables: Sequence[TurnTable], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    cols = [FEATURES.index(n) for n in names]
    return np.vstack([t.X[:, cols] for t in tables]), np.concatenate([t.y for t in tables])


def weights(tables: Sequence[TurnTable]) -> np.ndarray | None:
    """Per-turn weights under which each kind of conversation weighs the same in the fit (None when
    the tables hold one kind): the person-assistant conversations have fewer turns than LoCoMo's,
    and the product's conversations are of that kind."""
    kinds = [t.kind for t in tables]
    if len(set(kinds)) < 2:
        return None
    turns = {k: sum(len(t.y) for t in tables if t.kind == k) for k in set(kinds)}
    mean = sum(turns.values()) / len(turns)
    return np.concatenate([np.full(len(t.y), mean / turns[t.kind]) for t in tables])


def fit(tables: Sequence[TurnTable], spec: dict, meta: dict | None = None) -> NeedModel | TreeNeedModel:
    names = FEATURE_SETS[spec["features"]]
    X, y = _stack(tables, names)
    meta = {
        "model": label(spec),
        **spec,
        "feature_set": spec["features"],
        "trained_on": [t.sample_id for t in tables],
        "turns": int(len(y)),
        "evidence_rate": float(y.mean()),
        **(meta or {}),
    }
    w = weights(tables)
    if spec["kind"] == "logistic":
        return _logistic(X, y, w, names, spec["C"], meta)
    return _trees(X, y, w, names, spec, meta)


def _logistic(X, y, w, names, C: float, meta: dict) -> NeedModel:
    from sklearn.linear_model import LogisticRegression

    mean = X.mean(0)
    scale = X.std(0)
    scale[scale == 0] = 1.0
    m = LogisticRegression(C=C, max_iter=5000).fit((X - mean) / scale, y, sample_weight=w)
    return NeedModel(
        names,
        tuple(mean.tolist()),
        tuple(scale.tolist()),
        tuple(m.coef_[0].tolist()),
        float(m.intercept_[0]),
        (),
        VERSION,
        meta,
    )


def boosted(spec: dict):
    """The scikit-learn estimator a ``trees`` candidate fits (the tests compare against it)."""
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(
        n_estimators=spec["trees"],
        max_depth=spec["depth"],
        learning_rate=spec["rate"],
        subsample=SUBSAMPLE,
        random_state=0,
    )


def export_trees(m, names: Sequence[str], meta: dict | None = None) -> TreeNeedModel:
    """A fitted ``GradientBoostingClassifier`` (binary, prior init) as a ``TreeNeedModel``."""
    prior = float(m.init_.class_prior_[1])
    trees = []
    for est in m.estimators_[:, 0]:
        t = est.tree_
        trees.append(
            Tree(
                tuple(int(f) for f in t.feature),
                tuple(float(v) for v in t.threshold),
                tuple(int(c) for c in t.children_left),
                tuple(int(c) for c in t.children_right),
                tuple(float(v) for v in t.value[:, 0, 0]),
            )
        )
    return TreeNeedModel(
        tuple(names), math.log(prior / (1.0 - prior)), float(m.learning_rate), tuple(trees), VERSION, dict(meta or {})
    )


def _trees(X, y, w, names, spec: dict, meta: dict) -> TreeNeedModel:
    return export_trees(boosted(spec).fit(X, y, sample_weight=w), names, meta)


def predict(model, table: TurnTable) -> np.ndarray:
    """The model's prior for every turn of a conversation (vectorised ``model.predict``)."""
    cols = [FEATURES.index(n) for n in model.names]
    return model.predict_many(table.X[:, cols], table.E)


def scores(y: np.ndarray, p: np.ndarray) -> dict:
    from sklearn.metrics import log_loss, roc_auc_score

    return {
        "auc": float(roc_auc_score(y, p)) if 0 < y.sum() < len(y) else None,
        "log_loss": float(log_loss(y, np.clip(p, 1e-9, 1 - 1e-9), labels=[0, 1])),
        "mean_p_evidence": float(p[y == 1].mean()) if y.sum() else None,
        "mean_p_other": float(p[y == 0].mean()) if (y == 0).sum() else None,
    }


def cross_fit(tables: Sequence[TurnTable], spec: dict) -> list[np.ndarray]:
    """Each conversation's priors from a model fitted on the others (leave one out)."""
    out = []
    for i, t in enumerate(tables):
        rest = [u for j, u in enumerate(tables) if j != i]
        out.append(predict(fit(rest, spec), t))
    return out


def by_kind(tables: Sequence[TurnTable], held: Sequence[np.ndarray]) -> dict[str, dict]:
    """Scores pooled over the conversations of each kind (held: each conversation's priors)."""
    out = {}
    for kind in dict.fromkeys(t.kind for t in tables):
        pick = [i for i, t in enumerate(tables) if t.kind == kind]
        y = np.concatenate([tables[i].y for i in pick])
        out[kind] = scores(y, np.concatenate([held[i] for i in pick]))
    return out


def validate(tables: Sequence[TurnTable], candidates: Sequence[dict] = CANDIDATES) -> list[dict]:
    """LOO figures for every candidate. With one kind of conversation they are pooled over the
    held-out conversations; with several, ``log_loss`` and ``auc`` are the means over the kinds of
    each kind's pooled figures (each kind counts the same, whatever its number of turns), and
    ``per_kind`` holds them."""
    rows = []
    y = np.concatenate([t.y for t in tables])
    for spec in candidates:
        held = cross_fit(tables, spec)
        per = [scores(t.y, q)["auc"] for t, q in zip(tables, held)]
        row = {"spec": dict(spec), "model": label(spec), **scores(y, np.concatenate(held)), "auc_per_conversation": per}
        kinds = by_kind(tables, held)
        if len(kinds) > 1:
            row["pooled"] = {k: row[k] for k in ("auc", "log_loss")}
            row["log_loss"] = float(np.mean([k["log_loss"] for k in kinds.values()]))
            row["auc"] = float(np.mean([k["auc"] for k in kinds.values()]))
        row["per_kind"] = kinds
        rows.append(row)
    return rows


def choose(rows: Sequence[dict]) -> dict:
    """The first candidate (in order of richness) within ``SIMPLER_BY`` of the best log loss."""
    best = min(r["log_loss"] for r in rows)
    return next(r for r in rows if r["log_loss"] <= best + SIMPLER_BY)


def train(tables: Sequence[TurnTable]) -> tuple[NeedModel | TreeNeedModel, list[dict]]:
    """Choose by LOO within ``tables``, then fit the chosen model on all of them."""
    if len(tables) < 2:
        raise ValueError("the need estimator needs at least two conversations to choose by leave-one-out")
    rows = validate(tables)
    pick = choose(rows)
    model = fit(tables, pick["spec"], {"validation": {k: pick[k] for k in ("auc", "log_loss")}})
    return model, rows


def format_rows(rows: Sequence[dict], pick: dict | None = None) -> str:
    width = max(len(r["model"]) for r in rows)
    lines = [
        f"{'model':<{width}}  {'auc':>6}  {'log_loss':>8}  {'p|evid':>6}  {'p|other':>7}  auc per held-out conversation"
    ]
    kinds = len(rows[0].get("per_kind", ())) > 1
    if kinds:
        lines[0] += "  |  per kind: log_loss auc"
    for r in rows:
        mark = "  <- chosen" if pick is not None and r["model"] == pick["model"] else ""
        per = " ".join(f"{a:.3f}" for a in r["auc_per_conversation"])
        if kinds:
            per += "  | " + "  ".join(f"{k} {v['log_loss']:.4f} {v['auc']:.3f}" for k, v in r["per_kind"].items())
        lines.append(
            f"{r['model']:<{width}}  {r['auc']:.3f}  {r['log_loss']:>8.4f}  "
            f"{r['mean_p_evidence']:.3f}  {r['mean_p_other']:>7.3f}  {per}{mark}"
        )
    return "\n".join(lines)


def describe(model) -> str:
    """What was fitted, in one line (coefficients for a logistic model, the size of a forest)."""
    if isinstance(model, NeedModel):
        return "coefficients (standardised): " + ", ".join(f"{n} {c:+.2f}" for n, c in zip(model.names, model.coef))
    nodes = sum(len(t.value) for t in model.trees)
    return f"{len(model.trees)} trees, {nodes} nodes, learning rate {model.learning_rate}, on {', '.join(model.names)}"


def priors(conv: Conversation, model) -> list[float]:
    """Each turn's prior from ``model``, as the app computes it at arrival; embeddings are computed
    (or read from the cache) only when the model reads them."""
    emb = need_data.embeddings(conv) if model.uses_vectors else np.zeros((len(conv.turns), 1), dtype=np.float32)
    return predict(model, need_data.table(conv, emb)).tolist()


def heldout_priors(conversations, training) -> list[list[float]]:
    """Each conversation's priors from a need model trained as the shipped one is (``train``: the
    candidate chosen by leave-one-out, then fitted) on the ``training`` conversations other than it
    (a training conversation with the same turns is left out, whatever its name)."""
    assert not any(n in SIMILARITY for c in CANDIDATES for n in FEATURE_SETS[c["features"]])  # no vectors read

    def key(c: Conversation) -> tuple:
        return tuple(t.text for t in c.turns)

    tables = [(key(c), need_data.table(c, np.zeros((len(c.turns), 1), dtype=np.float32))) for c in training]
    out = []
    for conv in conversations:
        model, _ = train([t for k, t in tables if k != key(conv)])
        out.append(priors(conv, model))
    return out


def shipped_priors(conversations) -> list[list[float]]:
    """Priors from the model the app ships (``assistant/need_model.json``)."""
    from assistant.need import load_model

    model = load_model()
    return [priors(c, model) for c in conversations]
