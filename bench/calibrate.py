"""Fit the hybrid ranker's constants on some LoCoMo conversations (``lagmem bench cites --fit``).

Three steps, each on the fit conversations only (report the result on others: held out):

1. the ranker's feature weights (``assistant.retrieval.rank_features``), by maximum likelihood of the gold
   evidence under a softmax over each question's candidates (listwise: only the order within one
   question matters, which is what the shortlist is), features standardised for the fit and the
   weights folded back to raw features, a small L2 penalty;
2. the logistic calibration (bias, score, gap to the best score, log(1 + BM25), log(candidates),
   cosine) by Newton's method on every (question, candidate) pair, label = "is gold evidence";
3. the threshold on that probability with the best citation F1 (at most ``max_cites`` per question).

``write`` saves the result as a ranker document (``assistant.retrieval.hybrid.document``): with
``--out assistant/retrieval/ranker.json`` it becomes the constants the app ranks with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from assistant.retrieval import hybrid, rank_features
from assistant.retrieval.hybrid import HybridParams, _terms, calibrate, hybrid_score, query_terms
from assistant.retrieval.lexical import bm25_scores
from bench.cites import Ask, Corpus

THRESHOLDS = tuple(round(x, 3) for x in np.arange(0.05, 0.8, 0.025))
L2 = 1e-3  # on standardised weights, per question: keeps 14 weights tame on ~1,500 questions

Raw = tuple[np.ndarray, np.ndarray, np.ndarray, set[int]]  # features, cosine, bm25, evidence


def _raw(corpus: Corpus, items: Sequence[Ask], base: HybridParams) -> list[Raw]:
    """(features, cosine, bm25, evidence indexes) per ask; independent of the constants fitted."""
    out = []
    for a in items:
        cands = corpus.turns[a.conv][: a.at]
        q = corpus.questions[a.conv][a.question.index]
        texts = [c.content for c in cands]
        cos = np.vstack([c.vector for c in cands]).astype(np.float64) @ np.asarray(q, np.float64)
        bm = bm25_scores(query_terms(a.question.question, texts), [_terms(t) for t in texts], base.bm25_k1, base.bm25_b)
        x = rank_features.features(a.question.question, cos, bm, texts)
        out.append((x, cos, bm, {e - 1 for e in a.question.evidence if e <= a.at}))
    return out


def _top(s: np.ndarray) -> np.ndarray:
    return np.lexsort((np.arange(len(s)), -s))


def recall_at(raw: Sequence[Raw], params: HybridParams, k: int) -> float:
    hit = tot = 0
    for x, _, _, ev in raw:
        hit += len(ev & set(_top(hybrid_score(x, params))[:k].tolist()))
        tot += len(ev)
    return hit / tot if tot else 0.0


def fit_weights(raw: Sequence[Raw]) -> tuple[float, ...]:
    """Listwise maximum likelihood: mean over questions of -mean_{e in evidence} log softmax(Xw)_e."""
    data = [(x, np.array(sorted(ev))) for x, _, _, ev in raw if ev]
    if not data:
        raise ValueError("no question with evidence among the candidates: nothing to fit")
    rows = np.vstack([x for x, _ in data])
    mu, sd = rows.mean(0), rows.std(0)
    sd[sd < 1e-9] = 1.0
    data = [((x - mu) / sd, ev) for x, ev in data]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros_like(w)
        for x, ev in data:
            z = x @ w
            m = float(z.max())
            e = np.exp(z - m)
            p = e / e.sum()
            total -= float(z[ev].mean()) - m - float(np.log(e.sum()))
            grad -= x[ev].mean(0) - p @ x
        return total / len(data) + L2 * float(w @ w), grad / len(data) + 2 * L2 * w

    w = minimize(loss, np.zeros(rows.shape[1]), jac=True, method="L-BFGS-B").x
    return tuple(round(float(v), 4) for v in w / sd)  # the mean shift is the same for every candidate


def _cal_features(score: np.ndarray, bm: np.ndarray, cos: np.ndarray) -> np.ndarray:
    return np.column_stack(
        [np.ones(len(score)), score, score.max() - score, np.log1p(bm), np.full(len(score), np.log(len(score))), cos]
    )


def _logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, iters: int = 30) -> np.ndarray:
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


def _f1(raw: Sequence[Raw], params: HybridParams) -> float:
    hits = cited = ev_total = 0
    for x, cos, bm, ev in raw:
        s = hybrid_score(x, params)
        p = calibrate(s, bm, cos, params)
        chosen = [i for i in _top(s).tolist() if p[i] >= params.threshold][: params.max_cites]
        hits += len(ev & set(chosen))
        cited += len(chosen)
        ev_total += len(ev)
    prec, rec = (hits / cited if cited else 0.0), (hits / ev_total if ev_total else 0.0)
    return 2 * prec * rec / (prec + rec) if prec + rec else 0.0


def fit(corpus: Corpus, items: Sequence[Ask], base: HybridParams = HybridParams()) -> tuple[HybridParams, dict]:
    raw = _raw(corpus, items, base)
    best = replace(base, weights=fit_weights(raw))
    x = np.vstack([_cal_features(hybrid_score(f, best), bm, cos) for f, cos, bm, _ in raw])
    y = np.concatenate([[float(i in ev) for i in range(len(cos))] for _, cos, _, ev in raw])
    best = replace(best, calibration=tuple(round(float(v), 4) for v in _logistic(x, y)))
    scored = [(_f1(raw, replace(best, threshold=t)), t) for t in THRESHOLDS]
    f1, threshold = max(scored, key=lambda st: (st[0], -st[1]))
    best = replace(best, threshold=float(threshold))
    return best, {
        "recall_at_5": round(recall_at(raw, best, 5), 4),
        "recall_at_20": round(recall_at(raw, best, 20), 4),
        "f1": round(f1, 4),
        "questions": len(items),
    }


def provenance(fitted_on: dict, command: str, fit_stats: dict, base_file: Path = hybrid.RANKER_FILE) -> dict:
    """What a fit's constants come from: the data and settings (``fitted_on``), the command, the
    in-sample figures. BM25's k1 and b are not fitted here (the fit keeps the base's), so their
    provenance is carried from ``base_file``; held-out figures are for a run on other conversations
    to fill in (``lagmem bench cites --conversations OTHERS``)."""
    try:
        bm25 = hybrid.read(base_file).get("provenance", {}).get("bm25")
    except (OSError, ValueError):
        bm25 = None
    return {"fitted_on": fitted_on, "command": command, "in_sample": fit_stats, "bm25": bm25, "held_out": None}


def write(path: Path, params: HybridParams, prov: dict) -> None:
    """Save ``params``' fitted constants and their provenance as a ranker document."""
    Path(path).write_text(json.dumps(hybrid.document(params, prov), indent=1) + "\n", encoding="utf-8")
