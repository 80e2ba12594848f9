"""A note (a cited turn as the answer step uses it) and the words an answer and its notes are
compared by: the names and numbers in a text (``salient``) and the common words that open a reply
(``OPENERS``). Used by the answer (``answer.py``) and by the choice of notes (``notes.py``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Note:
    """A cited turn as the answer step uses it."""

    number: int
    role: str
    content: str
    weight: float
    vector: np.ndarray | None = None


def note_of(turn, weight: float) -> Note:
    """The note of a turn (anything with ``number``, ``role``, ``content``, ``vector``) at ``weight``."""
    return Note(turn.number, turn.role, turn.content, round(weight, 4), turn.vector)


SALIENT = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]+|\b\w*\d\w*")


def salient(text: str) -> set[str]:
    """Names and numbers: capitalised words not opening a sentence, and anything with a digit."""
    found = {m.group(0).lower() for m in SALIENT.finditer(text.strip())}
    return {w for w in found if not w.startswith("i'")}  # "I'm", "I'll": the pronoun, not a name


OPENERS = frozenset(
    """yes no sure okay ok well sorry hello hi dear great certainly of according based
as in on at for from to your you you're yours the this that these those it it's there here he she they
""".split()
)
