"""The hybrid ranker of the retrieval step: BM25 + embeddings, neighbours, a calibrated confidence.

Why each part (measured with ``lagmem bench cites`` on LoCoMo; see the README's table):

* **score** ``s = w * cosine + (1 - w) * bm25 / max(bm25)``: lexical matches find the names and
  objects a question asks about, the embedding finds paraphrases; either alone ranks worse.
* **neighbours**: ``s' = s + near1 * max(s of the turns just before/after) + near2 * max(s two
  away)``. In chat the turn that answers a question is often the reply to the turn that matches
  it ("What did you paint?" / "A sunrise"), so a turn next to a strong match is worth looking at.
  Neighbours are neighbours in the list given (the turns in memory, in order).
* **confidence** ``p = sigmoid(c0 + c1 * s' + c2 * (max s' - s') + c3 * log(1 + bm25) + c4 *
  log(n))``, n the number of candidates (a turn among 5 is more likely needed than one among
  500): the probability that a turn is evidence, fitted by logistic regression on held-in LoCoMo
  conversations (``lagmem bench cites --fit``). It is the citation's weight, and the threshold
  ``p >= threshold`` (chosen for the best citation F1 on the same conversations) decides what is
  cited without a model: citing nothing beats citing noise, because each citation is evidence an
  eviction decision will trust.

The constants below were fitted on conversations 1-2 of ``locomo_dev.json`` and are reported on
conversations 3-4 (held out) in the README.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .lexical import bm25_scores, words


@dataclass(frozen=True, slots=True)
class HybridParams:
    # fitted with `lagmem bench cites --conversations 1,2 --fit` on locomo_dev.json (seeds 0-4)
    embed_weight: float = 0.5
    bm25_k1: float = 0.9  # chosen on conversations 1-2 among (0.9-2.0) x (0.25-0.9)
    bm25_b: float = 0.3  # short turns: weak length normalisation ranks better
    near1: float = 0.5
    near2: float = 0.35
    # logistic calibration: bias, score, gap to the best score, log(1 + bm25), log(candidates)
    calibration: tuple[float, ...] = (-0.8456, 0.5586, -7.8147, 0.7983, -0.3965)
    threshold: float = 0.23
    max_cites: int = 5
    # a turn cited without a model shares a word with the message or is this close to it: the
    # calibration saw memories of 20-700 turns, and in a memory of one or two turns it would
    # otherwise cite "Hello." for "How are you today?"
    min_cosine_alone: float = 0.6


DEFAULT_PARAMS = HybridParams()


@dataclass(frozen=True, slots=True)
class Ranking:
    """Per-candidate scores, in the order of the candidates given."""

    cosine: np.ndarray
    lexical: np.ndarray  # raw BM25
    score: np.ndarray  # the hybrid score with neighbours (ranking key)
    confidence: np.ndarray  # calibrated probability of being evidence, in [0, 1]
    overlap: np.ndarray | None = None  # words shared with the message (BM25 is 0 in a memory of
    # one turn: a word in every document has no weight)


@lru_cache(maxsize=65536)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(words(text))


def _shift(x: np.ndarray, d: int) -> np.ndarray:
    """x moved by ``d`` places (positive: the value of the turn ``d`` before), zeros at the ends."""
    out = np.zeros_like(x)
    if abs(d) >= len(x):
        return out
    if d > 0:
        out[d:] = x[:-d]
    else:
        out[:d] = x[-d:]
    return out


def hybrid_score(cosine: np.ndarray, lexical: np.ndarray, params: HybridParams = DEFAULT_PARAMS) -> np.ndarray:
    top = float(lexical.max()) if len(lexical) else 0.0
    lex = lexical / top if top > 0 else np.zeros_like(lexical)
    s = params.embed_weight * cosine + (1.0 - params.embed_weight) * lex
    near1 = np.maximum(_shift(s, 1), _shift(s, -1))
    near2 = np.maximum(_shift(s, 2), _shift(s, -2))
    return s + params.near1 * near1 + params.near2 * near2


def calibrate(score: np.ndarray, lexical: np.ndarray, params: HybridParams = DEFAULT_PARAMS) -> np.ndarray:
    if not len(score):
        return np.zeros(0)
    c0, c1, c2, c3, c4 = params.calibration
    z = (c0 + c1 * score + c2 * (float(score.max()) - score) + c3 * np.log1p(lexical)
         + c4 * np.log(len(score)))
    return 1.0 / (1.0 + np.exp(-z))


def rank(message: str, cosine: np.ndarray, texts: Sequence[str],
         params: HybridParams = DEFAULT_PARAMS) -> Ranking:
    """Score ``texts`` (the candidates, in memory order) for ``message``; ``cosine`` given."""
    cosine = np.asarray(cosine, dtype=np.float64)
    lexical = bm25_scores(_terms(message), [_terms(t) for t in texts], params.bm25_k1, params.bm25_b)
    score = hybrid_score(cosine, lexical, params)
    asked = set(_terms(message))
    overlap = np.array([len(asked.intersection(_terms(t))) for t in texts], dtype=np.int64)
    return Ranking(cosine, lexical, score, calibrate(score, lexical, params), overlap)


def order(score: np.ndarray, numbers: Sequence[int]) -> list[int]:
    """Indexes by descending score, ties to the older turn (deterministic)."""
    return sorted(range(len(score)), key=lambda i: (-float(score[i]), numbers[i]))
