"""The need estimator's pure part: causal features of a turn at arrival, and the model that turns
them into a prior expected need (the probability that a later question will need this turn).

Why a prior: on LoCoMo most of what a policy can win is knowing *which* turns will be needed, not
*when*; a quarter of turns are evidence, and the rate depends on what the turn says and where it
stands (long turns, a session's opening turns, answers to questions, turns with names, numbers and
dates are needed more). The prior is computed once, when the turn arrives, from what is known then
(nothing about later turns), and handed to the layer as a number: the layer never sees text.

``ArrivalContext`` keeps the little a conversation must remember to compute the features of the
next turn (position in the session, the previous turn, the recent questions' embeddings). The
model is a logistic regression whose coefficients come from a small versioned JSON document
(``NeedModel.from_dict``); loading the file is the application's job (``assistant/need.py``).
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

MONTHS = ("january february march april may june july august september october november december "
          "jan feb mar apr jun jul aug sep sept oct nov dec")
TIME_WORDS = ("yesterday today tomorrow tonight week weekend month year ago last next monday tuesday "
              "wednesday thursday friday saturday sunday morning evening night birthday")
_DATE = re.compile(r"\b(?:%s)\b" % "|".join((MONTHS + " " + TIME_WORDS).split()), re.IGNORECASE)
_NUMBER = re.compile(r"\d")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_PHOTO = "[shares photo:"
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|we|our)\b")

RECENT_QUESTIONS = 4  # questions remembered for the similarity feature

# Feature names, in the order of the vector ``features`` returns (the model file names them too).
FEATURES = (
    "log_words", "question", "number", "year", "date_words", "names", "photo", "first_person",
    "exclaim", "session_index_0", "session_index_1", "log_session_index", "after_question",
    "sim_prev", "sim_recent_question", "log_prev_words",
)


def _names(text: str) -> int:
    """Capitalised words that do not start a sentence: a cheap count of names and places."""
    words = text.split()
    count = 0
    for prev, word in zip([""] + words, words):
        if word[:1].isupper() and word not in ("I", "I'm", "I've", "I'll", "I'd") and prev[-1:] not in (".", "!", "?", ""):
            count += 1
    return count


def text_features(text: str) -> dict[str, float]:
    """What the turn's own text says (no context)."""
    words = len(_WORD.findall(text))
    return {
        "log_words": math.log1p(words),
        "question": 1.0 if "?" in text else 0.0,
        "number": 1.0 if _NUMBER.search(text) else 0.0,
        "year": 1.0 if _YEAR.search(text) else 0.0,
        "date_words": math.log1p(len(_DATE.findall(text))),
        "names": math.log1p(_names(text)),
        "photo": 1.0 if _PHOTO in text else 0.0,
        "first_person": math.log1p(len(_FIRST_PERSON.findall(text))),
        "exclaim": 1.0 if "!" in text else 0.0,
    }


def _cos(a: np.ndarray | None, b: np.ndarray | None) -> float:
    if a is None or b is None:
        return 0.0
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b)) / (na * nb) if na and nb else 0.0


@dataclass
class ArrivalContext:
    """What a conversation remembers to compute the next turn's features: causal by construction
    (it is only ever told about turns that have arrived)."""

    session_index: int = 0  # turns before this one in the current session
    prev_text: str | None = None
    prev_vector: np.ndarray | None = None
    questions: deque = field(default_factory=lambda: deque(maxlen=RECENT_QUESTIONS))

    def features(self, text: str, vector: np.ndarray | None = None, new_session: bool = False) -> dict[str, float]:
        """The features of a turn arriving now; then remember it (call once per turn, in order)."""
        if new_session:
            self.session_index = 0
        f = text_features(text)
        i = self.session_index
        f["session_index_0"] = 1.0 if i == 0 else 0.0
        f["session_index_1"] = 1.0 if i == 1 else 0.0
        f["log_session_index"] = math.log1p(i)
        prev = self.prev_text
        f["after_question"] = 1.0 if prev is not None and "?" in prev else 0.0
        f["log_prev_words"] = math.log1p(len(_WORD.findall(prev))) if prev is not None else 0.0
        f["sim_prev"] = _cos(vector, self.prev_vector)
        f["sim_recent_question"] = max((_cos(vector, q) for q in self.questions), default=0.0)
        self.session_index = i + 1
        self.prev_text, self.prev_vector = text, vector
        if "?" in text and vector is not None:
            self.questions.append(vector)
        return f


def vector(features: Mapping[str, float], names: Sequence[str] = FEATURES) -> np.ndarray:
    return np.array([float(features.get(n, 0.0)) for n in names], dtype=np.float64)


@dataclass(frozen=True)
class NeedModel:
    """Logistic regression on standardised features (and optionally the turn's embedding).

    ``p = sigmoid(intercept + sum_k coef_k * (x_k - mean_k) / scale_k + embedding . embedding_coef)``.
    ``version`` names the file's format and training run; ``meta`` holds how it was trained.
    """

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    embedding_coef: tuple[float, ...] = ()
    version: str = ""
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def uses_vectors(self) -> bool:
        """Whether the model reads embeddings (the similarity features or the vector itself)."""
        return bool(self.embedding_coef) or any(n.startswith("sim_") for n in self.names)

    def predict(self, features: Mapping[str, float], embedding: np.ndarray | None = None) -> float:
        x = (vector(features, self.names) - np.array(self.mean)) / np.array(self.scale)
        z = self.intercept + float(np.dot(x, np.array(self.coef)))
        if self.embedding_coef and embedding is not None:
            z += float(np.dot(np.asarray(embedding, dtype=np.float64), np.array(self.embedding_coef)))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def as_dict(self) -> dict:
        return {
            "format": "lagmem-need-model/1",
            "version": self.version,
            "names": list(self.names),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "embedding_coef": list(self.embedding_coef),
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "NeedModel":
        if d.get("format") != "lagmem-need-model/1":
            raise ValueError(f"not a lagmem need model (format {d.get('format')!r}, expected 'lagmem-need-model/1')")
        names = tuple(d["names"])
        if not (len(names) == len(d["mean"]) == len(d["scale"]) == len(d["coef"])):
            raise ValueError("need model: names, mean, scale and coef must have the same length")
        return cls(names, tuple(map(float, d["mean"])), tuple(float(s) or 1.0 for s in d["scale"]),
                   tuple(map(float, d["coef"])), float(d["intercept"]), tuple(map(float, d.get("embedding_coef", ()))),
                   str(d.get("version", "")), dict(d.get("meta", {})))
