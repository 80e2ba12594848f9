"""The latest value of a slot wins: a later statement of the user's that gives another value of the
same kind for the same thing supersedes the earlier one, with or without a correction cue.

People update what they said in their own words: "i work night shifts as a paramedic in Olomouc" /
"well, i did. transferred to the station in Ostrava two weeks ago"; "finally sent my first V5" /
"ugh they regraded it to V4". No cue word says "correction" there; what says it is the shape:

* **the same kind of value**: the earlier statement holds a value of the kind the question asks for
  (a place, a number, a name, a time; for a question of no kind, a code or number such as "V5"),
  and the later one holds another value of that kind (``values``);
* **the same slot**: the two sentences that hold the values speak of the same thing -- they share a
  content word beside the values ("first V5" / "first V4"), or their embeddings are close
  (``SAME_SLOT``) and the later one says a change of value ("transferred to the station in Ostrava",
  "regraded it to V4": a verb in the past, then "to"/"into"/"in" and the value); two "my X is" slots
  with different heads are different slots ("my locker number is 218" / "my flat is number 41");
* **the same subject**: the part of the later statement giving the new value is not about someone
  else -- no "he" or "she" ("She's based in Tangier" says where the aunt is, not that "Farida" was
  wrong), no person or pet the earlier one did not speak of ("My sister lives in Rome." does not move
  the user from Paris; "it's the canon r6 i want, the nikon was my dad's" does move the user's
  wish: the dad is in the part naming the old value) -- and the value is no name the question says.

The latest such statement wins. Used by the choice of notes (``assistant.answering.notes``) when no
correction cue is found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from assistant.answering.kinds import CLOCK, TIME_WORDS, _person_names, _places_named, amounts
from assistant.answering.parts import parts
from assistant.answering.referents import names, slot
from assistant.answering.sentences import sentences
from assistant.answering.values import ROLE_WORDS
from assistant.retrieval.lexical import words

# the cosine of two turns' embeddings (all-MiniLM-L6-v2) from which a change of value in the later
# one may be about the earlier one's slot; set on the first-minute dev sets: an update in other
# words ("well, i did. transferred to the station in Ostrava ..." after "... i work night shifts as a
# paramedic in Olomouc") scores 0.41, while two facts of one chat score 0.35 to 0.55, which is why a
# change of value must be said too
SAME_SLOT = 0.3
# a change of value: a verb in the past, up to three words, then the preposition the value follows
CHANGE = re.compile(r"(?i)\b[a-z]{3,}ed\b(?:\s+[\w'-]+){0,3}?\s+(?:to|into|in|at|for)\s+\S")
THIRD_PERSON = re.compile(r"(?i)\b(he|she|he's|she's|his|her|him)\b")
DIGITS = re.compile(r"\b\w*\d\w*\b")


def values(text: str, kind: str | None) -> set[str]:
    """The values of ``kind`` a text holds, lower-cased (a question of no kind: codes and numbers)."""
    if kind == "place":
        return set(_places_named(text))
    if kind == "name":
        return set(_person_names(text))
    if kind == "time":
        return {m.group(0).lower() for m in TIME_WORDS.finditer(text)}
    if kind == "clock":
        return {m.group(0).lower() for m in CLOCK.finditer(text)}
    if kind == "amount":
        return {a.lower() for a in amounts(text)}
    if kind in (None, "number", "code"):
        return {m.group(0).lower() for m in DIGITS.finditer(text)}
    return set()


def _holding(text: str, kind: str | None) -> list[str]:
    return [s for s in sentences(text) if values(s, kind)]


# people said by no role ("The woman who runs it is Agnieszka" names her, not the knitting group)
PEOPLE = frozenset("woman women man men guy lady bloke chap girl boy person".split())


def _roles(text: str) -> set[str]:
    """The people and pets a text speaks of by their role ("my sister", "our dog") or as a person
    ("the woman who runs it"): another subject than the user's when the earlier statement did not
    speak of them."""
    return {w for w in re.findall(r"[\w'-]+", text.lower()) if w in ROLE_WORDS or w in PEOPLE}


def same_slot(earlier: str, later: str, embed: Callable[[str], np.ndarray] | None, kind: str | None) -> bool:
    """Do the sentences holding the two values speak of the same thing: a shared content word beside
    the values, or close embeddings?"""
    a, b = " ".join(_holding(earlier, kind)), " ".join(_holding(later, kind))
    if not a or not b:
        return False
    for x, y in ((a, b), (b, a)):
        head = slot(x)
        if head is not None and not set(words(head.split()[-1])) <= set(words(y)):
            return False  # "my locker number at the pool is 218" / "and my flat is number 41"
    told = values(a, kind) | values(b, kind)
    if (set(words(a)) & set(words(b))) - {w for v in told for w in words(v)}:
        return True
    return bool(CHANGE.search(b)) and embed is not None and float(np.dot(embed(earlier), embed(later))) >= SAME_SLOT


def newer_value(note, statements: Sequence, kind: str | None, question: str, embed=None):
    """The latest later user statement (``statements``: with ``number`` and ``content``) that gives
    another value of ``kind`` for the slot ``note`` fills, or None."""
    asked = {w.lower() for w in names(question)}
    old = values(note.content, kind) - asked
    if not old:
        return None
    found = None
    for c in statements:
        if c.number <= note.number:
            continue
        new = values(c.content, kind) - old - asked
        if not new:
            continue
        # whose the new value is: the parts of the statement that give it ("its a canon r6 i want, the
        # nikon was my dad's" gives the user's; "the nikon was my dad's" only names the old one)
        giving = " ".join(p for p in parts(c.content) if values(p, kind) & new) or c.content
        if THIRD_PERSON.search(giving) or _roles(giving) - _roles(note.content):
            continue
        if same_slot(note.content, c.content, embed, kind):
            found = c if found is None or c.number > found.number else found
    return found
