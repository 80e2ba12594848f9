"""Does the model's text say what the cited turns say? The grounding checks an answer passes.

Lexical and embedding evidence, not wording: no name or number of the model's own, most of its new
words from the notes, the asked slot's value from a note (``slots.grounded_for_slot``), the note's
answer carried (``carries.carries_answer``), not the user's sentence spoken back as "I", no "not" of
the model's own.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import numpy as np

from assistant.answering.carries import carries_answer
from assistant.answering.message import about_the_user
from assistant.answering.note import OPENERS, Note, salient
from assistant.answering.slots import grounded_for_slot
from assistant.retrieval.lexical import STOP_WORDS, words

AGREE_SIMILARITY = 0.45
AGREE_SHARE = 0.5


AS_THE_USER = re.compile(r"(?i)^\W*(i|i'm|i'll|i've|i'd)\b|\b(my|mine|myself|me|we|we're|we've|us|our|ours)\b")


I_PHRASE = re.compile(r"(?i)\b(i|i'm|i'll|i've|i'd)\s+(\w+)")


def speaks_as_user(answer: str, notes: Sequence[Note] = ()) -> bool:
    """The model copied the user's own sentence ("My wife Leena is a pharmacist", "I'm Amara",
    "The bakery I work at" from "I work at a bakery"): an answer to the user about themselves says
    "you"; spoken as "I", it reads as the assistant's. ("..., I'm told" is the assistant's own.)"""
    if AS_THE_USER.search(answer):
        return True
    theirs = {(a.lower(), b.lower()) for n in notes if n.role == "user" for a, b in I_PHRASE.findall(n.content)}
    return any((a.lower(), b.lower()) in theirs for a, b in I_PHRASE.findall(answer))


def invented_opener(answer: str, notes: Sequence[Note], message: str) -> bool:
    """The first word is a name of the model's own ("Monsieur A.N., your sister ..."): capitalised,
    not a common opening word, and in neither the notes nor the question (``salient`` cannot tell a
    name that opens a sentence from a capitalised first word, so this is checked apart)."""
    m = re.match(r"\W*([A-Z][\w'-]+)", answer)
    if not m:
        return False
    first = m.group(1).lower()
    known = {w.lower() for t in [message, *(n.content for n in notes)] for w in re.findall(r"[\w'-]+", t)}
    return first not in known and first not in OPENERS and first not in STOP_WORDS


QUOTED = re.compile(r'["\u201c]([^"\u201d]{3,})["\u201d]')


def invented_quote(answer: str, notes: Sequence[Note]) -> bool:
    """Does the answer quote, between double quotes, words no note says as they are?"""
    said = [" ".join(re.findall(r"[\w'-]+", n.content.lower())) for n in notes]
    for m in QUOTED.finditer(answer):
        quote = " ".join(re.findall(r"[\w'-]+", m.group(1).lower()))
        if quote and not any(quote in s for s in said):
            return True
    return False


# a "no" in words: "not", "never", "can't", "don't" ...
NEGATION = re.compile(r"(?i)\b(?:not|no|never|cannot|nothing|none|nobody)\b|n['\u2019]t\b")


def invented_negation(answer: str, notes: Sequence[Note], message: str) -> bool:
    """Does the answer say "no" where neither the notes nor the question do ("You can't keep your
    bicycle in the garage ..." from "I keep my bicycle in the garage ...")? The words agree; the
    meaning is the opposite."""
    return bool(NEGATION.search(answer)) and not any(NEGATION.search(t) for t in [message, *(n.content for n in notes)])


CLAUSE = re.compile(r"[,;.!?]+|\s+(?:and|but)\s+")


def focus_names(notes: Sequence[Note], message: str) -> set[str]:
    """Names and numbers of the notes' clauses that share the most words with the question ("my
    parrot Kiwi is two" in "My cat Miso is twelve and my parrot Kiwi is two" for "What is my parrot
    called?"); empty when no clause shares one."""
    asked = set(words(message))
    best, out = 0, set()
    for n in notes:
        for clause in CLAUSE.split(n.content):
            shared = len(asked & set(words(clause)))
            if shared and shared >= best:
                out = (out if shared == best else set()) | salient(clause)
                best = shared
    return out


def agrees(
    answer: str, answer_vec: np.ndarray | None, notes: Sequence[Note], message: str, required: Collection[str] = ()
) -> bool:
    """Does the model's text say what the cited turns say? Lexical and embedding evidence, not
    wording: it must repeat a word of theirs the question lacked, most of its new words must come
    from them, it may not bring a name or number of its own, it must keep a name or number of
    theirs when they have one, every value it gives for the question's slot must be that slot's
    value in a note (``slots.grounded_for_slot``), it must give what a note answers with when one
    does (``carries.carries_answer``: the name, the job), it must carry one of the ``required`` words (a
    correction's new value) when any are given, it may not speak as the user when the question is
    about the user, nor say "no" where the notes and the question do not, and (when vectors are
    given) it must be close to one of them."""
    # the user's own statements are the facts; the assistant's turns count only without them
    # (else a model repeating its earlier chatter would "agree")
    notes = [n for n in notes if n.role == "user"] or list(notes)
    noted = set().union(*(salient(n.content) for n in notes)) if notes else set()
    said, asked_names = salient(answer), salient(message)
    if said - noted - asked_names or invented_opener(answer, notes, message):
        return False  # an invented name or number ("turning 12" when the turn says "six")
    if not grounded_for_slot(answer, notes, message):
        return False  # a value beside the asked slot ("Greta", the sister, for the baby's name)
    if not carries_answer(answer, notes, message):
        return False  # the note's answer left out ("The dog is a classic example ..." for "Pippa")
    if about_the_user(message) and speaks_as_user(answer, notes):
        return False  # the user's sentence copied: the user is "you" in an answer about them
    if invented_quote(answer, notes):
        return False  # 'The user's message is: "I'm super lazy, ..."': words put in the user's mouth
    if invented_negation(answer, notes, message):
        return False  # "You can't keep your bicycle in the garage": the note said the user does
    tokens = {w.lower() for w in re.findall(r"[\w'-]+", answer)}
    if required and not (tokens | set(words(answer))) & set(required):
        return False  # the corrected value is missing ("Priya" when the user then said "Oskar")
    if noted - asked_names and not (tokens & noted) - asked_names:
        return False  # the name the question is about was dropped ("the far north", not Tromso)
    focus = focus_names(notes, message) - asked_names
    if focus and not tokens & focus:
        return False  # a name from beside what is asked ("Miso", the cat, for "my parrot")
    asked = set(words(message))
    new = [w for w in words(answer) if w not in asked]
    source = set().union(*(set(words(n.content)) for n in notes)) - asked if notes else set()
    if not new or not source:
        return False
    shared = [w for w in new if w in source]
    if not shared or len(shared) / len(new) < AGREE_SHARE:
        return False
    vecs = [n.vector for n in notes if n.vector is not None]
    if answer_vec is None or not vecs:
        return True
    return max(float(np.dot(answer_vec, v)) for v in vecs) >= AGREE_SIMILARITY
