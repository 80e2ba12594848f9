"""What marks a turn as stating a lasting personal fact, or as only asking: text features for the need
estimator (``memory/need.py`` puts them in the vector; ``FACT_FEATURES`` names them).

In a chat with an assistant almost all the evidence later questions ask about is the person's own
facts: a name, an amount with its unit, "my sister", "we moved in 2019". A person's turn that only
asks the assistant something ("what are good hiking boots?") is rarely asked about again, while a
request that carries a fact ("I'm planning a trip to Rome with my 3 kids, what ...") often is:

* ``new_names``: capitalised words (not opening a sentence) the conversation has not used before;
* ``units``: numbers with a unit (times, money, percentages, counts and durations of things);
* ``possessive``: "my/our <word>" phrases (my sister, our new car);
* ``ask_only``: every sentence is a question or a request, and none says anything first-person;
* ``embedded``: a question or request and a first-person statement in the same turn.

All are pure functions of the text (and, for ``new_names``, of the names seen so far).
"""

from __future__ import annotations

import math
import re
from collections.abc import Set

FACT_FEATURES = ("new_names", "units", "possessive", "ask_only", "embedded")

_UNITS = (
    r"am|pm|a\.m\.|p\.m\.|hours?|hrs?|minutes?|mins?|seconds?|days?|weeks?|months?|years?|yrs?|nights?|"
    r"miles?|mi|km|kilometers?|meters?|m|feet|ft|inch(?:es)?|lbs?|pounds?|kg|grams?|g|oz|ounces?|"
    r"dollars?|usd|euros?|bucks|k|%|percent|times|people|kids|children|members|pages|books|items|"
    r"sessions|classes|episodes|games|points|calories|steps|degrees|servings|cups?|slices|pieces|tickets"
)
_UNIT = re.compile(
    r"(?:[$€£]\s?\d[\d,.]*(?:\s?[kKmM]\b)?|\b\d{1,2}:\d\d\b|\b\d[\d,.]*\s?(?:" + _UNITS + r")\b)", re.IGNORECASE
)
_POSSESSIVE = re.compile(r"\b(?:my|our)\s+(?:new\s+|old\s+|own\s+|little\s+|best\s+|\d+\s+)?[a-z]{3,}", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]*")
_FIRST = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|we|we're|we've|our|us)\b", re.IGNORECASE)
# what the speaker says of themselves even inside a question ("I'm planning ..., what ...?"), unlike "help me"
_SELF = re.compile(r"\b(?:I'm|I am|I've|I have|I had|I was|we're|we are|we've|we have|my|our)\b", re.IGNORECASE)
_REQUEST = re.compile(
    r"^\s*(?:can you|could you|would you|will you|please|help me|give me|tell me|show me|list|suggest|recommend|"
    r"explain|write|create|generate|provide|describe|what|how|why|which|where|when|who|is there|are there|do you)\b",
    re.IGNORECASE,
)
_CAP = re.compile(r"[A-Z][A-Za-z'\-]+")
_NOT_NAMES = frozenset(("I", "I'm", "I've", "I'll", "I'd"))


def names(text: str) -> list[str]:
    """Capitalised words that do not open a sentence (a cheap guess at names and places)."""
    words = text.split()
    out = []
    for prev, word in zip([""] + words, words):
        m = _CAP.match(word)
        if m and m.group(0) not in _NOT_NAMES and prev[-1:] not in (".", "!", "?", ""):
            out.append(m.group(0).lower())
    return out


def _asks(sentence: str) -> bool:
    return "?" in sentence or bool(_REQUEST.match(sentence))


def fact_features(text: str, seen_names: Set[str]) -> dict[str, float]:
    """The turn's fact features; ``seen_names`` are the (lower-cased) names of the turns before it."""
    sentences = [s for s in _SENTENCE.findall(text) if s.strip()]
    asks = [_asks(s) for s in sentences]
    states = [not a and bool(_FIRST.search(s)) for s, a in zip(sentences, asks)]
    self_ = bool(_SELF.search(text))
    new = {n for n in names(text) if n not in seen_names}
    return {
        "new_names": math.log1p(len(new)),
        "units": math.log1p(len(_UNIT.findall(text))),
        "possessive": math.log1p(len(_POSSESSIVE.findall(text))),
        "ask_only": 1.0 if sentences and all(asks) and not self_ else 0.0,
        "embedded": 1.0 if any(asks) and (any(states) or self_) else 0.0,
    }
