"""Lexical scoring of turns against a message: BM25 (Okapi, the ``rank-bm25`` package) over words.

Why a lexical score beside the embeddings: a question asks about the exact names, places and
objects a turn mentions ("When did Melanie paint a sunrise?"), and a sentence embedding of a
one-line chat turn blurs them. On LoCoMo a plain BM25 puts more evidence turns in its top 5 than
MiniLM does; the hybrid ranker (``assistant.retrieval.hybrid``) uses both.

Words are lower-cased alphanumeric runs (apostrophes kept inside words), English stop words and
one-letter words dropped, and a light suffix stripping folds plurals and verb forms
("paintings" / "painted" / "painting" -> "paint"). Anything else (other scripts) is kept as is, so
non-English text still matches itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just let me
more most my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves i'm i've i'd i'll you're you've it's
that's there's what's don't didn't doesn't isn't wasn't can't won't yeah oh hey hi wow really
also get got gonna like lot lots much thanks thank tell told know think thing things one ever
""".split()
)
_SUFFIXES = ("ings", "ing", "edly", "ed", "ies", "es", "s")
# the short forms people type for a word a question spells out ("its on Delancey st" for "what
# street ..."): folded to the word before stripping
ABBREVIATIONS = {
    "st": "street",
    "rd": "road",
    "ave": "avenue",
    "blvd": "boulevard",
    "apt": "apartment",
    "appt": "appointment",
    "bday": "birthday",
}


def stem(word: str) -> str:
    """A light, deterministic suffix strip (not a full stemmer): enough to fold inflections; a
    short form is its word first (``ABBREVIATIONS``: "appts" -> "appointment")."""
    if word.endswith("'s"):
        word = word[:-2]
    word = ABBREVIATIONS.get(word, word)
    if word.endswith("s") and word[:-1] in ABBREVIATIONS:
        word = ABBREVIATIONS[word[:-1]]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix == "ies":
                return base + "y"
            if suffix in ("es",) and not base.endswith(("s", "x", "z", "ch", "sh")):
                return word[:-1]  # "games" -> "game", not "gam"
            if suffix in ("ing", "ings", "ed") and len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]  # "running" -> "run"
            return base
    return word


def stem_groups(groups: Iterable[str]) -> dict[str, frozenset[str]]:
    """Each stem of a group of words said for one another ("vehicle car", "got get") -> the stems of
    every group it stands in."""
    out: dict[str, frozenset[str]] = {}
    for group in groups:
        stems = frozenset(stem(w) for w in group.split())
        for s in stems:
            out[s] = out.get(s, frozenset()) | stems
    return out


def words(text: str) -> list[str]:
    """The terms BM25 counts: lower-cased words, stop words dropped, stemmed."""
    out = []
    for w in WORD.findall(text.lower()):
        if len(w) < 2 or w in STOP_WORDS or w.isdigit() and len(w) < 2:
            continue
        out.append(stem(w))
    return out


def bm25_scores(
    query: Sequence[str], documents: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75
) -> np.ndarray:
    """BM25 score of each tokenized document for the tokenized query (zeros when nothing matches).

    The corpus is the documents given (the turns that can be cited now), so a word's rarity is its
    rarity in this conversation's memory.
    """
    if not documents:
        return np.zeros(0, dtype=np.float64)
    terms = [t for t in dict.fromkeys(query)]
    if not terms:
        return np.zeros(len(documents), dtype=np.float64)
    # rank-bm25 divides by the mean document length: an all-empty corpus would divide by zero
    docs = [list(d) if d else ["\x00"] for d in documents]
    scores = np.asarray(BM25Okapi(docs, k1=k1, b=b).get_scores(terms), dtype=np.float64)
    return np.maximum(scores, 0.0)
