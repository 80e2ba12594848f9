"""What marks a turn as stating a lasting personal fact: text features for the need estimator
(``memory/need.py`` puts them in the vector; ``FACT_FEATURES`` names them).

In a chat with an assistant almost all the evidence later questions ask about is the person's own
facts: a name, "my sister", "our new car". Two features, kept because they lowered the
person-assistant held-out log loss of ``lagmem bench need-train`` (the others tried, numbers with a
unit, a turn that only asks, a fact inside a request, did not):

* ``new_names``: capitalised words (not opening a sentence) none of the last ``NOVELTY_TURNS`` turns used (a
  window, as for new words, so the app, which rebuilds the context from its last turns, computes what
  training saw);
* ``possessive``: "my/our <word>" phrases (my sister, our new car, my 3 kids).

Both are pure functions of the text (and, for ``new_names``, of the names seen in that window). They are the
person's: ``ArrivalContext`` gives an assistant's turn 0 on both (its names still count as seen), which
fits better held out on both kinds of conversation than scoring every turn, and keeps a fact the person
states ranked above the same words from the assistant.
"""

from __future__ import annotations

import math
import re
from collections.abc import Set

FACT_FEATURES = ("new_names", "possessive")

_POSSESSIVE = re.compile(r"\b(?:my|our)\s+(?:new\s+|old\s+|own\s+|little\s+|best\s+|\d+\s+)?[a-z]{3,}", re.IGNORECASE)
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


def fact_features(text: str, seen_names: Set[str]) -> dict[str, float]:
    """The turn's fact features; ``seen_names`` are the (lower-cased) names of the recent turns before it."""
    new = {n for n in names(text) if n not in seen_names}
    return {
        "new_names": math.log1p(len(new)),
        "possessive": math.log1p(len(_POSSESSIVE.findall(text))),
    }
