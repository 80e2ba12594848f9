"""What the hybrid ranker knows about each candidate turn: a row of numbers per turn, for one message.

The ranker (``assistant.retrieval.hybrid``) scores a turn as a weighted sum of these features, the weights
learnt by ``lagmem bench cites --fit`` (a listwise softmax over each question's candidates, so
only differences between the turns of one question matter). Each feature is here because chat
evidence looks like it (measured on LoCoMo conversations other than the ones scored):

* ``cos_z``: the cosine to the message, standardised over this question's candidates (the raw
  cosine of a relevant turn varies from question to question; its standing among the others less);
* ``lex`` and ``log_bm25``: BM25 over the message's content words, scaled by the best one, and raw;
* ``near1``, ``near2``: the best plain mix (cosine + scaled BM25) one and two turns away: the turn
  that answers a question is often the reply to the turn that matches it;
* ``prev_lex``: the scaled BM25 of the turn just before (the question this turn answers);
* ``prev_asks``, ``asks``: the turn before holds a ``?`` (this one answers), this one does
  (a question rarely holds the fact);
* ``speaker``, ``other_speaker``: in a transcript written ``Name: text``, the turn's speaker is
  named in the message, or the message names someone else and not this speaker;
* ``length``: log(1 + words): one-word replies ("Yes!") seldom carry a fact;
* ``recency``: position in memory, 0 (oldest) to 1 (newest);
* ``when_time``: a "when"/"how long" message and a turn that says when (yesterday, last week, a
  month, a year);
* ``around``: the plain mix averaged over the 8 turns on each side: a passage that keeps matching
  (one topic, one session) raises its turns.

Pure: numbers and text in, an array out; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

NAMES = (
    "cos_z",
    "lex",
    "log_bm25",
    "near1",
    "near2",
    "prev_lex",
    "prev_asks",
    "asks",
    "speaker",
    "other_speaker",
    "length",
    "recency",
    "when_time",
    "around",
)

SPEAKER = re.compile(r"([^\W\d_][\w.' -]{0,39}):\s")
TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last|next|ago|recently|since|weekend|days?|weeks?|months?"
    r"|years?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march"
    r"|april|may|june|july|august|september|october|november|december|(?:19|20)\d\d)\b",
    re.I,
)
WHEN = re.compile(r"\s*(when|how long|what (year|month|date|day|time))\b", re.I)
AROUND = 8


@lru_cache(maxsize=65536)
def turn_facts(text: str) -> tuple[str, float, float, float]:
    """(speaker lower-cased or "", log(1 + words), holds a "?", says when) of one turn's text."""
    m = SPEAKER.match(text)
    return (
        m.group(1).strip().lower() if m else "",
        float(np.log1p(len(text.split()))),
        float("?" in text),
        float(TIME_WORDS.search(text) is not None),
    )


def shift(x: np.ndarray, d: int) -> np.ndarray:
    """x moved by ``d`` places (positive: the value of the turn ``d`` before), zeros at the ends."""
    out = np.zeros_like(x)
    if abs(d) >= len(x):
        return out
    if d > 0:
        out[d:] = x[:-d]
    else:
        out[:d] = x[-d:]
    return out


def window_mean(x: np.ndarray, half: int) -> np.ndarray:
    """Mean of ``x`` over the ``half`` turns on each side and the turn itself (clipped at the ends)."""
    n = len(x)
    c = np.concatenate([[0.0], np.cumsum(x)])
    i = np.arange(n)
    lo, hi = np.clip(i - half, 0, n), np.clip(i + half + 1, 0, n)
    return (c[hi] - c[lo]) / (hi - lo)


@lru_cache(maxsize=65536)
def name_pattern(speaker: str) -> re.Pattern:
    """A speaker's name as a whole word (compiled once: ``re``'s own cache holds 512 patterns, and
    a conversation's first exchange would otherwise compile one per speaker in memory)."""
    return re.compile(r"\b" + re.escape(speaker) + r"\b")


def named(message: str, speakers: Sequence[str]) -> set[str]:
    """The speakers whose name the message says (whole words, any case)."""
    low = message.lower()
    return {s for s in set(speakers) if s and name_pattern(s).search(low)}


def features(message: str, cosine: np.ndarray, bm25: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    """The (candidates x len(NAMES)) feature matrix, candidates in memory order."""
    n = len(texts)
    if n == 0:
        return np.zeros((0, len(NAMES)))
    cosine = np.asarray(cosine, dtype=np.float64)
    bm25 = np.asarray(bm25, dtype=np.float64)
    sd = float(cosine.std())
    cos_z = (cosine - cosine.mean()) / sd if sd > 1e-9 else np.zeros(n)
    top = float(bm25.max())
    lex = bm25 / top if top > 0 else np.zeros(n)
    plain = 0.5 * cosine + 0.5 * lex
    facts = [turn_facts(t) for t in texts]
    speakers = [f[0] for f in facts]
    said = named(message, speakers)
    speaker = np.array([float(s in said) for s in speakers])
    other = np.array([float(bool(said) and s not in said) for s in speakers])
    asks = np.array([f[2] for f in facts])
    when = float(WHEN.match(message) is not None)
    cols = {
        "cos_z": cos_z,
        "lex": lex,
        "log_bm25": np.log1p(bm25),
        "near1": np.maximum(shift(plain, 1), shift(plain, -1)),
        "near2": np.maximum(shift(plain, 2), shift(plain, -2)),
        "prev_lex": shift(lex, 1),
        "prev_asks": shift(asks, 1),
        "asks": asks,
        "speaker": speaker,
        "other_speaker": other,
        "length": np.array([f[1] for f in facts]),
        "recency": np.arange(n) / (n - 1) if n > 1 else np.ones(1),
        "when_time": when * np.array([f[3] for f in facts]),
        "around": window_mean(plain, AROUND),
    }
    return np.column_stack([cols[name] for name in NAMES])
