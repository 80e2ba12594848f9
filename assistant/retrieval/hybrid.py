"""The hybrid ranker of the retrieval step: BM25 + embeddings + the shape of chat, a calibrated confidence.

Why each part (measured with ``lagmem bench cites`` on LoCoMo; see docs/benchmarks.md):

* **score** ``s = features . weights``: a learnt linear ranker over the features of
  ``assistant.retrieval.rank_features`` -- the cosine to the message (standardised among the candidates),
  BM25 over content words (lexical matches find the names and objects a question asks about, the
  embedding finds paraphrases; either alone ranks worse), the best match one and two turns away
  (the answer is often the reply to the turn that matches), the passage around a turn, who speaks,
  the turn's length, its place in memory, and "when" questions meeting turns that say when. The
  weights maximise the likelihood of the gold evidence under a softmax over each question's
  candidates (``lagmem bench cites --fit``).
* **confidence** ``p = sigmoid(c0 + c1 * s + c2 * (max s - s) + c3 * log(1 + bm25) + c4 * log(n)
  + c5 * cosine)``, n the number of candidates (a turn among 5 is more likely needed than one among
  500), the raw cosine because the score only compares turns of one question: the probability that
  a turn is evidence, fitted by logistic regression on the fit conversations. It is the
  citation's weight, and the threshold ``p >= threshold`` (chosen for the best citation F1 on the
  same conversations) decides what is cited without a model: citing nothing beats citing noise,
  because each citation is evidence an eviction decision will trust.

The fitted constants (BM25's k1 and b, the weights, the calibration, the threshold) live in
``ranker.json`` beside this module, read once at import, with their provenance: the conversations
they were fitted on, the command that wrote the file and the held-out figures they were checked
with. ``lagmem bench cites --fit --out FILE`` writes a file in that format (``document``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from assistant.retrieval import rank_features
from assistant.retrieval.lexical import bm25_scores, words

RANKER_FILE = Path(__file__).with_name("ranker.json")
FORMAT = "lagmem-ranker/1"
CALIBRATION_TERMS = ("bias", "score", "gap_to_best", "log1p_bm25", "log_candidates", "cosine")


def _fitted(doc: dict) -> dict:
    """The fitted fields of ``HybridParams`` from a ranker document (``document``'s format), checked
    against the features this code computes: a feature added or dropped since the fit would otherwise
    rank silently wrong."""
    if doc.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} document (format {doc.get('format')!r})")
    if set(doc["weights"]) != set(rank_features.NAMES):
        raise ValueError(
            f"the ranker file weighs {', '.join(doc['weights'])}; the ranker's features are "
            f"{', '.join(rank_features.NAMES)}: refit with `lagmem bench cites --fit --out FILE`"
        )
    weights = tuple(float(doc["weights"][name]) for name in rank_features.NAMES)
    calibration = tuple(float(doc["calibration"][name]) for name in CALIBRATION_TERMS)
    return {
        "bm25_k1": float(doc["bm25"]["k1"]),
        "bm25_b": float(doc["bm25"]["b"]),
        "weights": weights,
        "calibration": calibration,
        "threshold": float(doc["threshold"]),
    }


def read(path: Path = RANKER_FILE) -> dict:
    """A ranker document (``ranker.json`` by default), as JSON."""
    return json.loads(path.read_text(encoding="utf-8"))


_SHIPPED = _fitted(read())


@dataclass(frozen=True, slots=True)
class HybridParams:
    # the fitted constants default to ranker.json's (see its provenance)
    bm25_k1: float = _SHIPPED["bm25_k1"]
    bm25_b: float = _SHIPPED["bm25_b"]  # short turns: weak length normalisation ranks better
    # one weight per feature, in the order of rank_features.NAMES
    weights: tuple[float, ...] = _SHIPPED["weights"]
    # logistic calibration, in the order of CALIBRATION_TERMS
    calibration: tuple[float, ...] = _SHIPPED["calibration"]
    threshold: float = _SHIPPED["threshold"]
    max_cites: int = 5
    # a turn cited without a model shares a word with the message or is this close to it: the
    # calibration saw memories of 20-700 turns, and in a memory of one or two turns it would
    # otherwise cite "Hello." for "How are you today?"
    min_cosine_alone: float = 0.6


def params_from(doc: dict, base: HybridParams | None = None) -> HybridParams:
    """``base`` (the defaults) with the fitted constants of a ranker document."""
    return replace(base or HybridParams(), **_fitted(doc))


def document(params: HybridParams, provenance: dict) -> dict:
    """The ranker document of ``params``' fitted constants (what ``ranker.json`` holds)."""
    return {
        "format": FORMAT,
        "bm25": {"k1": params.bm25_k1, "b": params.bm25_b},
        "weights": dict(zip(rank_features.NAMES, params.weights, strict=True)),
        "calibration": dict(zip(CALIBRATION_TERMS, params.calibration, strict=True)),
        "threshold": params.threshold,
        "provenance": provenance,
    }


DEFAULT_PARAMS = HybridParams()


@dataclass(frozen=True, slots=True)
class Ranking:
    """Per-candidate scores, in the order of the candidates given."""

    cosine: np.ndarray
    lexical: np.ndarray  # raw BM25
    score: np.ndarray  # the learnt ranker's score (ranking key)
    confidence: np.ndarray  # calibrated probability of being evidence, in [0, 1]
    overlap: np.ndarray | None = None  # words shared with the message (BM25 is 0 in a memory of
    # one turn: a word in every document has no weight)


@lru_cache(maxsize=65536)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(words(text))


def warm(texts: Sequence[str]) -> None:
    """Fill the per-text caches the ranking reads (words, speaker facts and names) for these turns ahead of
    their first exchange (after an import: the turns in memory, which the budget bounds)."""
    for text in texts:
        _terms(text)
        if speaker := rank_features.turn_facts(text)[0]:
            rank_features.name_pattern(speaker)


def query_terms(message: str, texts: Sequence[str]) -> tuple[str, ...]:
    """The message's words BM25 looks for: its content words, less the names of the transcript's
    speakers (``Name: text`` turns). A speaker's name is in every turn they wrote, so BM25 would
    credit all of them for it; the ``speaker`` feature carries the name instead. A message made
    of names only keeps them."""
    terms = _terms(message)
    names = {w for t in texts if (who := rank_features.turn_facts(t)[0]) for w in _terms(who)}
    return tuple(w for w in terms if w not in names) or terms


def hybrid_score(features: np.ndarray, params: HybridParams = DEFAULT_PARAMS) -> np.ndarray:
    """The ranking key: each candidate's features (``rank_features.features``) times the weights."""
    if len(params.weights) != len(rank_features.NAMES):
        raise ValueError(
            f"HybridParams.weights has {len(params.weights)} values; the ranker has "
            f"{len(rank_features.NAMES)} features ({', '.join(rank_features.NAMES)})"
        )
    if not len(features):
        return np.zeros(0)
    return features @ np.asarray(params.weights, dtype=np.float64)


def calibrate(
    score: np.ndarray, lexical: np.ndarray, cosine: np.ndarray, params: HybridParams = DEFAULT_PARAMS
) -> np.ndarray:
    if not len(score):
        return np.zeros(0)
    c0, c1, c2, c3, c4, c5 = params.calibration
    z = (
        c0
        + c1 * score
        + c2 * (float(score.max()) - score)
        + c3 * np.log1p(lexical)
        + c4 * np.log(len(score))
        + c5 * cosine
    )
    return 1.0 / (1.0 + np.exp(-z))


def rank(message: str, cosine: np.ndarray, texts: Sequence[str], params: HybridParams = DEFAULT_PARAMS) -> Ranking:
    """Score ``texts`` (the candidates, in memory order) for ``message``; ``cosine`` given."""
    cosine = np.asarray(cosine, dtype=np.float64)
    lexical = bm25_scores(query_terms(message, texts), [_terms(t) for t in texts], params.bm25_k1, params.bm25_b)
    score = hybrid_score(rank_features.features(message, cosine, lexical, texts), params)
    asked = set(_terms(message))
    overlap = np.array([len(asked.intersection(_terms(t))) for t in texts], dtype=np.int64)
    return Ranking(cosine, lexical, score, calibrate(score, lexical, cosine, params), overlap)


def order(score: np.ndarray, numbers: Sequence[int]) -> list[int]:
    """Indexes by descending score, ties to the older turn (deterministic)."""
    return sorted(range(len(score)), key=lambda i: (-float(score[i]), numbers[i]))
