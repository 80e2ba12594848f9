"""Which turns an embedded-model answer is built from (its notes), and which of them is the fact.

The retrieval step's citations are the starting point; three general rules of how people state
facts in chat then adjust them, because the ranker (fitted on long LoCoMo memories) misses what a
short chat needs:

* **The answer's kind.** "Who ...?" wants a name, "When ...?" a day, date or time, "Where ...?" a
  place, "How old / how many ...?" a number. When no cited statement of the user's holds that kind
  of word, the best-ranked statement that does is added ("Who is coming to stay with me?" cites
  "we'll stay in" for its words; "My older brother Tomasz is visiting" holds the name).
* **The user's words.** A cited reply of the assistant's brings the user's statement it answered:
  the fact is in the user's words, the reply is the 135M model's chatter about them.
* **Self-disclosure.** A question about the user ("What's my hobby?") is answered by a turn where
  the user speaks of themselves ("... my hands are still covered in clay"), not by "It's
  relaxing.": when nothing is cited, the guesses are the best-ranked such statements first.
* **Corrections.** A later statement of the user's that corrects an earlier note ("Actually it's
  Tuesday, not Monday", "Change of plan: ... Saturday instead") and shares a word with it
  supersedes it: the earlier note is left out of the answer, and the answer must carry a value of
  the correction that the earlier note lacked (``Notes.required``).

The notes come best first: the user's statements holding the answer's kind of word before the
rest, then by the citation's weight; the extractive answer quotes the first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.answering.answer import SELF_WORDS, Note, about_the_user, salient, states
from assistant.retrieval.lexical import words

KINDS = (
    ("name", re.compile(r"(?i)^\s*(who|whom)\b|\b(name|called|call)\b")),
    ("time", re.compile(r"(?i)^\s*when\b|\b(what|which)\s+(day|date|time|month|year|weekday)\b")),
    (
        "place",
        re.compile(
            r"(?i)^\s*where\b|\b(what|which)\s+(city|town|country|place|street|"
            r"hospital|school|village|island|state)\b"
        ),
    ),
    ("number", re.compile(r"(?i)\bhow\s+(old|many|much|long)\b|\b(number|age)\b")),
)
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday weekend tomorrow tonight today"
TIME_WORDS = re.compile(
    rf"(?i)\b({'|'.join((_MONTHS + ' ' + _DAYS).split())})s?\b|\b\d{{1,2}}(:\d\d|\s?[ap]\.?m\b|st|nd|rd|th)\b"
)
NUMBER = re.compile(
    r"(?i)\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|"
    r"forty|fifty|sixty|seventy|eighty|ninety|hundred)\b"
)
CORRECTION = re.compile(
    r"(?i)\b(actually|instead|correction|i meant|mixed (?:it|them|that|those) up|mixed up|misread|"
    r"typo|scratch that|change of plans?|changed|moved (?:it|me)|rescheduled|not anymore|"
    r"no longer|wrong|oops)\b|\bnot\s+\w+\s*,?\s+but\b|,\s*not\s+\w+"
)

GUESSES = 2
RESCUE_DEPTH = 5  # the answer-kind rule looks this far down the ranker's user statements


def expected_kind(question: str) -> str | None:
    """The kind of word the answer needs (``name``, ``time``, ``place``, ``number``) or None."""
    for kind, pattern in KINDS:
        if pattern.search(question):
            return kind
    return None


def has_kind(text: str, kind: str | None) -> bool:
    if kind is None:
        return True
    if kind == "time":
        return bool(TIME_WORDS.search(text))
    if kind == "number":
        return bool(NUMBER.search(text))
    return bool(salient(text))  # a name or a place: a capitalised word inside a sentence


def is_statement(c) -> bool:
    return c.role == "user" and states(c.content)


@dataclass(frozen=True)
class Notes:
    """The notes an answer is built from, best first; ``sure``: they are citations, not guesses;
    ``required``: words of a correction the answer must carry one of (empty: none)."""

    notes: list[Note]
    sure: bool
    required: frozenset[str] = frozenset()


def _note(c, weight: float) -> Note:
    return Note(c.number, c.role, c.content, round(weight, 4), c.vector)


def select_notes(question: str, active: Sequence, retrieval, guesses: int = GUESSES) -> Notes:
    """The notes for a question (``active``: the in-memory turns; ``retrieval``: the step's result
    with ``cited`` and ``ranked``). Empty when nothing is cited and the question is not about the
    user (a guess from memory would answer "How are you?" with a quote)."""
    by_number = {c.number: c for c in active}
    ranked = [by_number[n] for n in retrieval.ranked if n in by_number]
    statements = [c for c in ranked if is_statement(c)]
    notes = [_note(by_number[c.turn], c.weight) for c in retrieval.cited if c.turn in by_number]
    sure = bool(notes)
    # a cited reply of the assistant's echoes the user's statement just before it: the fact is in
    # the user's words ("A cello is a wonderful instrument" answers "I play the cello ...")
    for n in [n for n in notes if n.role != "user"]:
        before = by_number.get(n.number - 1)
        if before is not None and is_statement(before) and all(m.number != before.number for m in notes):
            notes.append(_note(before, n.weight))
    kind = expected_kind(question)
    if not notes:
        if not about_the_user(question):
            return Notes([], False)
        # the user's statements about themselves first, then their other statements, then the rest
        usable = sorted(
            (c for c in ranked if c.role != "user" or states(c.content)),
            key=lambda c: (not is_statement(c), not SELF_WORDS.search(c.content)),
        )
        typed = [c for c in usable if is_statement(c) and has_kind(c.content, kind)]
        best = (typed[:1] + [c for c in usable if typed[:1] != [c]])[:guesses]
        notes = [_note(c, 1.0 - 0.1 * i) for i, c in enumerate(best)]
    elif kind and not any(n.role == "user" and has_kind(n.content, kind) for n in notes):
        cited = {n.number for n in notes}
        extra = [c for c in statements[:RESCUE_DEPTH] if c.number not in cited and has_kind(c.content, kind)]
        if extra:
            notes.append(_note(extra[0], min(n.weight for n in notes)))
    return _corrected(notes, statements, kind, sure)


def _corrected(notes: list[Note], statements: Sequence, kind: str | None, sure: bool) -> Notes:
    """Replace each user note that a later correcting statement supersedes by that statement."""
    out, required = [], set()
    for n in notes:
        fix = correction_of(n, statements, kind) if n.role == "user" else None
        if fix is None:
            out.append(n)
            continue
        out.append(_note(fix, n.weight))
        new = salient(fix.content) - salient(n.content)
        required |= new or (set(words(fix.content)) - set(words(n.content)))
    kept = list({n.number: n for n in out}.values())  # two notes corrected by one turn: one note
    kept.sort(key=lambda n: (not is_statement(n), not has_kind(n.content, kind), -n.weight, -n.number))
    return Notes(kept, sure, frozenset(required))


def correction_of(note: Note, statements: Sequence, kind: str | None = None):
    """The latest later user statement that corrects ``note``: it has a correction cue and shares
    a word or a name/number with it (and, when the question wants a kind of word, holds one)."""
    mine = set(words(note.content)) | salient(note.content)
    found = None
    for c in statements:
        if c.number <= note.number or not CORRECTION.search(c.content):
            continue
        theirs = set(words(c.content)) | salient(c.content)
        if mine & theirs and has_kind(c.content, kind) and (found is None or c.number > found.number):
            found = c
    return found
