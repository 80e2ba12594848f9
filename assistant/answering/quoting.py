"""The extractive answer: a quote of the turn it cites, naming that turn's number.

The quote is worded in the user's language (``assistant.answering.wording``); a correction is quoted
without the old value it names after "not", and without its parts that only name the old value
(``assistant.answering.parts``: "his name is Oskar", not "..., Emil was the neighbour's cat"); a turn
that corrects itself, without the part it takes back (``assistant.answering.selffix``: "no sorry,
£430", not "he quoted me £340 ... no sorry, £430").
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from assistant.answering.cleaning import clean_answer
from assistant.answering.kinds import expected_kind
from assistant.answering.message import states
from assistant.answering.note import Note
from assistant.answering.parts import without_stale
from assistant.answering.selffix import self_fixed
from assistant.answering.sentences import answering
from assistant.answering.wording import WORDINGS

# the kinds of value a turn may take back and give again by number: a time, a date, an amount, a code
NUMBERED = frozenset(("number", "amount", "clock", "time", "code"))
# "KQ 101 not KQ 117", "Tuesday, not Monday", "£285 not £240": a correction's new value, then the old
# one it replaces
NOT_THE_OLD = re.compile(
    r"(?P<new>\b(?!I\b|I')(?:[A-Z][\w'-]*|\w*\d\w*(?:\s+[a-z]+)?))\s*,?\s+not\s+(?P<old>(?:the\s+)?(?:[A-Z]|[£$€]?\d)[^,.;!?]*)"
)


def without_old(text: str) -> str:
    """A correction without the old value it names after "not" ("actually it's KQ 101 not KQ 117" ->
    "actually it's KQ 101"): quoted whole, the stale value reads as part of the answer. Only a name or
    number after "not", right after a name or number ("I'm not sure", "Leiden, not far" are kept)."""
    return NOT_THE_OLD.sub(lambda m: m.group("new"), text)


def focused(text: str, question: str, embed=None) -> str:
    """The sentences of ``text`` that answer the question (``sentences.answering``): holding a value
    of the asked kind and saying a word of the question or a related one ("just adopted a retired
    greyhound, his name is Turnip" of "im Rasmus btw. just adopted ..." for "What kind of dog do I
    have?"), else the closest to it by embedding ("i work night shifts as a paramedic in Olomouc",
    not "Radomir here.", for "What's my profession?")."""
    return " ".join(answering(text, question, expected_kind(question), embed)) or text


def quote_turn(
    note: Note,
    max_chars: int = 400,
    lang: str = "en",
    corrected: bool = False,
    question: str = "",
    embed=None,
    stale: Collection[str] = (),
    alone: bool = False,
) -> str:
    """The quote of a turn naming its number (``corrected``: the turn is a correction, quoted
    ``without_old``; ``stale``: the old values it names, whose parts are left out; ``question``: only
    the sentences that answer it, ``focused``; ``alone``: the question asks a number, and a fix in
    the turn is quoted alone, as when ``question`` asks one)."""
    text = re.sub(r"\s+", " ", note.content).strip()
    # asked for a number or day a turn takes back, the fix alone gives it ("Sorry, I misread the ticket,
    # it's 09:30." of "My train leaves King's Cross at 08:30 on Tuesday. Sorry, ...")
    alone = alone or (expected_kind(question) in NUMBERED if question else False)
    fixed = self_fixed(text, alone) if note.role == "user" else None
    text = fixed.text if fixed is not None else text  # "£340 ... no sorry, £430": the value it gives
    text = without_stale(text, stale) if stale and note.role == "user" else text
    text = without_old(text) if corrected or stale else text
    text = focused(text, question, embed) if question else text
    if len(text) > max_chars:
        text = text[:max_chars].rsplit(" ", 1)[0] + " …"
    w = WORDINGS[lang]
    who = w.told if note.role == "user" else w.said
    return who.format(n=note.number) + clean_answer(text)


def quoted_note(notes: Sequence[Note]) -> Note:
    """The turn an extractive answer quotes (``notes``: best first): the first user statement (not
    a question), else the first of the assistant's turns, else the first turn."""
    ranked = list(notes)
    stated = [n for n in ranked if n.role == "user" and states(n.content)]
    said = [n for n in ranked if n.role != "user"]
    return (stated or said or ranked)[0]


def extractive(
    notes: Sequence[Note],
    sure: bool = True,
    lang: str = "en",
    corrected: bool = False,
    question: str = "",
    embed=None,
    stale: Collection[str] = (),
    alone: bool = False,
) -> str:
    """The honest answer built from the turns themselves: a quote of ``quoted_note(notes)``, naming
    its number, in ``lang`` (``assistant.answering.wording``); ``corrected``, ``question``, ``embed``,
    ``stale``, ``alone``: see ``quote_turn``."""
    text = quote_turn(
        quoted_note(notes), lang=lang, corrected=corrected, question=question, embed=embed, stale=stale, alone=alone
    )
    if sure:
        return text
    return WORDINGS[lang].unsure + text[0].lower() + text[1:]
