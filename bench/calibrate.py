"""Fit the hybrid ranker's constants on some LoCoMo conversations (``lagmem bench cites --fit``).

Three steps, each on the fit conversations only (report the result on others: held out):

1. the score's mix and neighbour weights, by grid search for the best recall@5 (recall@20 breaks
   ties): the shortlist is what every retriever builds on;
2. the logistic calibration (bias, score, gap to the best score, log(1 + BM25), log(candidates))
   by Newton's method
   on every (question, candidate) pair, label = "is gold evidence";
3. the threshold on that probability with the best citation F1 (at most ``max_cites`` per question).

Prints a ``HybridParams(...)`` to paste into ``assistant/hybrid.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from assistant.hybrid import HybridParams, _terms, calibrate, hybrid_score
from assistant.lexical import bm25_scores
from .cites import Ask, Corpus

GRID = {"embed_weight": (0.3, 0.4, 0.5, 0.6, 0.7), "near1": (0.3, 0.5, 0.7), "near2": (0.0, 0.15, 0.25, 0.35)}
THRESHOLDS = tuple(round(x, 2) for x in np.arange(0.05, 0.8, 0.025))


def _raw(corpus: Corpus, items: Sequence[Ask], base: HybridParams) -> list[tuple[np.ndarray, np.ndarray, set[int]]]:
    """(cosine, bm25, evidence indexes) per ask; independent of the constants being fitted."""
    out = []
    for a in items:
        cands = corpus.turns[a.conv][: a.at]
        q = corpus.questions[a.conv][a.question.index]
        cos = np.vstack([c.vector for c in cands]).astype(np.float64) @ q
        bm = bm25_scores(_terms(a.question.question), [_terms(c.content) for c in cands],
                         base.bm25_k1, base.bm25_b)
        out.append((cos, bm, {e - 1 for e in a.question.evidence if e <= a.at}))
    return out


def _recall_at(raw, params: HybridParams, k: int) -> float:
    hit = tot = 0
    for cos, bm, ev in raw:
        s = hybrid_score(cos, bm, params)
        top = np.lexsort((np.arange(len(s)), -s))[:k]
        hit += len(ev & set(top.tolist()))
        tot += len(ev)
    return hit / tot if tot else 0.0


def _features(score: np.ndarray, bm: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(len(score)), score, score.max() - score, np.log1p(bm),
                            np.full(len(score), np.log(len(score)))])


def _logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, iters: int = 30) -> np.ndarray:
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


def _f1(raw, params: HybridParams) -> float:
    hits = cited = ev_total = 0
    for cos, bm, ev in raw:
        s = hybrid_score(cos, bm, params)
        p = calibrate(s, bm, params)
        order = np.lexsort((np.arange(len(s)), -s))
        chosen = [i for i in order.tolist() if p[i] >= params.threshold][: params.max_cites]
        hits += len(ev & set(chosen))
        cited += len(chosen)
        ev_total += len(ev)
    prec, rec = (hits / cited if cited else 0.0), (hits / ev_total if ev_total else 0.0)
    return 2 * prec * rec / (prec + rec) if prec + rec else 0.0


def fit(corpus: Corpus, items: Sequence[Ask], base: HybridParams = HybridParams()) -> tuple[HybridParams, dict]:
    raw = _raw(corpus, items, base)
    best, best_key = base, (-1.0, -1.0)
    for values in itertools.product(*GRID.values()):
        params = replace(base, **dict(zip(GRID, values)))
        key = (round(_recall_at(raw, params, 5), 4), round(_recall_at(raw, params, 20), 4))
        if key > best_key:
            best, best_key = params, key
    x = np.vstack([_features(hybrid_score(cos, bm, best), bm) for cos, bm, _ in raw])
    y = np.concatenate([[float(i in ev) for i in range(len(cos))] for cos, _, ev in raw])
    w = _logistic(x, y)
    best = replace(best, calibration=tuple(round(float(v), 4) for v in w))
    scored = [(_f1(raw, replace(best, threshold=t)), t) for t in THRESHOLDS]
    f1, threshold = max(scored, key=lambda st: (st[0], -st[1]))
    best = replace(best, threshold=float(threshold))
    return best, {"recall_at_5": best_key[0], "recall_at_20": best_key[1], "f1": round(f1, 4),
                  "questions": len(items)}
