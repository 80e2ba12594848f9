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
  relaxing.": when nothing is cited, the guesses are the best-ranked such statements first. A
  question naming someone the user spoke of ("How old is Kofi?") is about the user's world too.
* **Corrections.** A later statement of the user's that corrects an earlier note ("Actually it's
  Tuesday, not Monday", "Change of plan: ... Saturday instead") and shares a word with it
  supersedes it, and so does a later value of the same slot said without a cue ("transferred to the
  station in Ostrava" after "i work ... in Olomouc"; ``assistant.answering.corrections``,
  ``assistant.answering.latest``): the earlier note is left out of the answer, and the answer must
  carry a value of the correction that the earlier note lacked (``Notes.required``) and none of the
  old values it names again (``Notes.stale``); the correction speaks of whom the earlier note spoke of.
* **Reworded questions** (``assistant.answering.sentences``): among the guesses holding the answer's
  kind, the one whose sentence is closest to the question by embedding comes first ("been bouldering
  ... for 2 years now" for "How long have I been going there?"); "Which company ...?" prefers a
  statement naming a thing to one naming a person beside their role.

* **The asked slot** (``assistant.answering.slots``): "What's my blood type?" is not answered by
  "I donated blood yesterday.": a turn that speaks of the slot without filling it is left out, and
  when no turn fills it the answer is "I don't know".

* **The asked thing** (``assistant.answering.doing``): "Who plays drums in my band?" is not answered by
  "i play bass", nor "What present did I get my grandad?" by "my grandad Thaddeus is turning 90": a
  turn about the same topic holding another attribute is no answer, and the answer is "I don't know".

* **What a turn is about** (``assistant.answering.referents``): "He lives in Vienna." after "My best
  friend is Lukas." answers "Where does Lukas live?"; the names the question says are not its answer;
  a code is asked for by its label.

The notes come best first: the user's statements holding the answer's kind of word before the
rest, then by the citation's weight; the extractive answer quotes the first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from assistant.answering.asked import asked_slot
from assistant.answering.corrections import (
    CORRECTION,
    changes_asked,
    corrected_by,
    correction_of,
    superseding,
    uncorrected,
)
from assistant.answering.doing import doers, no_doer, thing_not_said
from assistant.answering.kinds import (
    TIME_NAMES,
    asks_which,
    expected_kind,
    has_kind,
    kind_beyond,
    names_a_thing,
    says_value,
)
from assistant.answering.message import ASKS_A_FAVOUR, SELF_WORDS, about_the_user, is_question, recalls, states
from assistant.answering.note import Note, salient
from assistant.answering.note import note_of as _note
from assistant.answering.parts import stale_words
from assistant.answering.referents import (
    about,
    asks_after,
    followers,
    names,
    referent,
    reported,
    said_names,
    the_possessed,
    unmentioned_role,
)
from assistant.answering.related import THE_THING, related, shares_word
from assistant.answering.sentences import closeness, memo
from assistant.answering.slots import judged, speaks_of
from assistant.retrieval.lexical import STOP_WORDS, stem, words

# the question asks about the user as "I" ("What do I do?", "Where did I park?"), and a statement
# of theirs speaks of themselves as "I"
ASKS_ABOUT_ME = re.compile(r"(?i)\b(do|did|am|was|have|can|should|will|does)\s+i\b|\bi\s+(am|do|did|have)\b")
I_START = re.compile(r"(?i)^\W*(i|i'm|i've|i'll|i'd)\b")

# the correction rules live in ``assistant.answering.corrections``; their names stay importable here
__all__ = ["CORRECTION", "Notes", "asked_subject", "changes_asked", "correction_of", "mentions", "select_notes"]

GUESSES = 2
# a question this close (cosine of MiniLM vectors) to a statement of the user's asks about it: set
# on the probe sets' questions that say no "my" (in-sample); general questions ("what's the capital
# of france?") reach it with under 1 in 500 of those sets' statements
CLOSE = 0.4
RESCUE_DEPTH = 5  # the answer-kind rule looks this far down the ranker's user statements


SUBJECT = re.compile(r"\b(?:does|did|is|was|has|will)\s+([A-Z][a-z][\w-]*)\b(?!')|\b([A-Z][a-z][\w-]*)'s\b")


def asked_subject(question: str) -> str | None:
    """The person or thing a question asks about by name ("Where does Lukas live?", "Theo's
    school"), lower-cased, or None."""
    for m in SUBJECT.finditer(question):
        w = (m.group(1) or m.group(2)).lower()
        if w not in TIME_NAMES and w not in STOP_WORDS and m.start() > 0:
            return w
    return None


def mentions(question: str, told: Sequence, embed=None) -> bool:
    """Does the question name someone or something of the user's statements ``told`` ("How old is
    Kofi?" after "My son Kofi plays the trumpet."), or ask for a slot they speak of ("What's the dog
    called?" after "Her name is Pippa"), or ask after someone of them by "he" or "she" ("What does
    she do?" after "My friend Lena is a nurse.")? It asks about the user's world though it says no "my":
    memory is what answers it, and when memory holds nothing the honest reply is "I don't know",
    never the model's free text or an acknowledgement. So does a question as close to one of them as
    ``CLOSE`` (``embed``: a unit vector per text, or None): "where's the dental office?" after "its
    with dr halvorsen at the clinic on birch st". A favour asked of the assistant ("Can you tell me a
    joke about Kofi?") is not a recall."""
    if not is_question(question) or ASKS_A_FAVOUR.match(question):
        return False
    asked, slot = names(question) - TIME_NAMES, asked_slot(question)
    if any((asked & names(c.content)) or (slot is not None and speaks_of(c.content, slot)) for c in told):
        return True
    the = {stem(w.lower()) for w in THE_THING.findall(question)} - STOP_WORDS
    if any(related(the) & set(words(c.content)) for c in told):
        return True  # "What day is the dinner?" after "Booked a table at Osteria Nonna"
    return asks_after(question, told) or _close(question, told, embed)


def _close(question: str, told: Sequence, embed) -> bool:
    """Is the question as close as ``CLOSE`` to one of the user's statements ``told``?"""
    asked = embed(question) if embed is not None else None
    if asked is None:
        return False
    vectors = (embed(c.content) for c in told)
    return any(v is not None and float(np.dot(asked, v)) >= CLOSE for v in vectors)


def is_statement(c) -> bool:
    return c.role == "user" and states(c.content)


@dataclass(frozen=True)
class Notes:
    """The notes an answer is built from, best first; ``sure``: they are citations, not guesses;
    ``required``: words of a correction the answer must carry one of (empty: none); ``unknown``:
    memory holds nothing that answers, and the honest reply is "I don't know"; ``stale``: the old
    values a correction among the notes names again, which the answer must not carry
    (``parts.stale_words``); ``replaced``: (the correction's number, the number of the statement it
    corrects) for each correction that took a note's place."""

    notes: list[Note]
    sure: bool
    required: frozenset[str] = frozenset()
    unknown: bool = False
    stale: frozenset[str] = frozenset()
    replaced: tuple[tuple[int, int], ...] = ()


def select_notes(question: str, active: Sequence, retrieval, guesses: int = GUESSES, current=None, embed=None) -> Notes:
    """The notes for a question (``active``: the in-memory turns; ``retrieval``: the step's result
    with ``cited`` and ``ranked``; ``current``: the fact the question's own message states, a turn
    with number/role/content, or None; ``embed``: a unit vector per text, or None). Empty when
    nothing is cited and the question is not about the user (a guess from memory would answer "How
    are you?" with a quote); ``unknown`` when the question recalls something about the user that no
    statement of theirs holds."""
    by_number = {c.number: c for c in active}
    if embed is not None:
        embed = memo(embed, {c.content: c.vector for c in active if getattr(c, "vector", None) is not None})
    ranked = [by_number[n] for n in retrieval.ranked if n in by_number]
    statements = [c for c in ranked if is_statement(c)]
    told = sorted((c for c in active if is_statement(c)), key=lambda c: c.number)
    notes = [_note(by_number[c.turn], c.weight) for c in retrieval.cited if c.turn in by_number]
    if current is not None:
        # the fact was told in the same message as its question: that is what it asks about
        notes.insert(0, _note(current, 1.0))
        statements.insert(0, current)
        told.append(current)
    sure = bool(notes)
    # a cited reply of the assistant's echoes the user's statement just before it: the fact is in
    # the user's words ("A cello is a wonderful instrument" answers "I play the cello ...")
    for n in [n for n in notes if n.role != "user"]:
        before = by_number.get(n.number - 1)
        if before is not None and is_statement(before) and all(m.number != before.number for m in notes):
            notes.append(_note(before, n.weight))
    kind = expected_kind(question)
    subject = asked_subject(question)
    if (subject and not any(subject in said_names(c.content) for c in told)) or unmentioned_role(
        question, [c.content for c in told]
    ):
        # "Where does Lukas live?" and Lukas was never mentioned: nothing said is about him
        return Notes([], False, unknown=True)
    theirs = mentions(question, told, embed)
    if not notes and not (about_the_user(question) or theirs):
        # "Who is going to show me how to use the equipment?": not about the user by its words, but
        # asked by what someone does for them, and a statement names who does it (a guess)
        doer = doers([], told, kind, question)
        return Notes(doer, False) if doer else Notes([], False)
    if not notes:
        # the user's statements about themselves first, then their other statements, then the rest
        which = asks_which(question)  # "Which company ...?": a statement naming a thing first
        usable = sorted(
            (c for c in ranked if c.role != "user" or states(c.content)),
            key=lambda c: (
                not is_statement(c),
                which and not names_a_thing(c.content),
                not shares_word(question, c.content),
                not SELF_WORDS.search(c.content),
            ),
        )
        typed = [c for c in usable if is_statement(c) and has_kind(c.content, kind)]
        typed = typed or [c for c in usable if is_statement(c) and has_kind(c.content, kind, loose=True)]
        if embed is not None and kind is not None:
            # the statement whose sentence holding the kind is closest to the question first
            typed.sort(key=lambda c: -closeness(c.content, question, kind, embed))
        typed.sort(key=lambda c: not says_value(c.content, kind))  # "works as a nurse" before "a new job"
        # "Who will be teaching my little girl?": the statement saying who does it ("Her instructor is ...")
        doer = {n.number for n in doers([], told, kind, question)}
        typed.sort(key=lambda c: c.number not in doer)
        if kind is not None and ASKS_ABOUT_ME.search(question):
            # among the statements holding the answer's kind, the user speaking as "I" first
            typed.sort(key=lambda c: not I_START.match(c.content))
        if not usable or (kind and not typed):
            return Notes([], False, unknown=recalls(question) or theirs)
        best = (typed[:1] + [c for c in usable if typed[:1] != [c]])[:guesses]
        notes = [_note(c, 1.0 - 0.1 * i) for i, c in enumerate(best)]
    else:
        notes += _pointed(notes, told, kind, question)
        notes += doers(notes, told, kind, question)
        if kind and not any(n.role == "user" and kind_beyond(n.content, kind, question) for n in notes):
            cited = {n.number for n in notes}
            extra = [
                c for c in statements[:RESCUE_DEPTH] if c.number not in cited and kind_beyond(c.content, kind, question)
            ]
            if extra:
                notes.append(_note(extra[0], min(n.weight for n in notes)))
    said = reported(question, told)  # "How often did Gwen tell me to water the fig?": what she said first
    if said is not None:
        notes = [_note(said, notes[0].weight if notes else 1.0), *(n for n in notes if n.number != said.number)]
    notes = [uncorrected(n, told, kind, question) for n in notes]
    picked = _corrected(notes, told, kind, sure, bool(ASKS_ABOUT_ME.search(question)), question, embed)
    heirs = _heirs(picked, told)
    on_subject = [
        n
        for n in picked.notes
        if subject and (_about(n, {subject}, told, heirs) or _the_possessed(heirs.get(n.number, n), told, question))
    ]
    if subject and kind and not _answers_kind(on_subject, kind):
        # "What does Gideon do for a living?" and only "My neighbour Gideon lent me his ladder" is
        # about him: "just got home from work" holds a job, but the user's, not his
        return Notes([], False, unknown=True)
    if kind and not _answers_kind(picked.notes, kind, question) and (recalls(question) or _on_topic(picked, question)):
        # "What time does my flight leave?" and only "I'm flying to Oslo on Friday" is known: the
        # turns are about the question, but none holds what it asks for
        return Notes([], False, unknown=True)
    kept, unknown = judged(picked.notes, question)
    if unknown or no_doer(question, kept) or thing_not_said(question, kept):
        # "What's my blood type?" and only "I donated blood yesterday." speaks of it: the turns are
        # about a neighbouring slot, and none fills the one asked
        return Notes([], False, unknown=True)
    return replace(picked, notes=kept)


def _on_topic(picked: Notes, question: str) -> bool:
    """Cited notes that share a word with the question ("Where is the meeting?" / "The meeting is
    on Monday"): the conversation is about what is asked."""
    asked = set(words(question))
    return picked.sure and any(asked & set(words(n.content)) for n in picked.notes)


def _answers_kind(notes: Sequence[Note], kind: str, question: str = "") -> bool:
    """A note holds the answer's kind beyond the question's names: a user statement's, or, without
    any, an assistant turn's (the user's own words are the facts; the assistant's are evidence only
    when alone)."""
    told = [n for n in notes if n.role == "user"]
    return any(kind_beyond(n.content, kind, question, loose=True) for n in (told or notes))


def _pointed(notes: Sequence[Note], told: Sequence, kind: str | None, question: str) -> list[Note]:
    """The user's statements that point back by a pronoun to a cited statement, or to one naming
    whom the question names, and hold the answer's kind ("He lives in Vienna." after "My best
    friend is Lukas." for "Where does Lukas live?")."""
    if kind is None:
        return []
    asked = names(question) - TIME_NAMES
    anchors = {n.number for n in notes if n.role == "user"} | {c.number for c in told if names(c.content) & asked}
    have, out = {n.number for n in notes}, []
    weight = min((n.weight for n in notes), default=1.0)
    for a in sorted(anchors):
        for c in followers(a, told):
            if c.number not in have and kind_beyond(c.content, kind, question):
                have.add(c.number)
                out.append(_note(c, weight))
    return out


def _corrected(
    notes: list[Note],
    statements: Sequence,
    kind: str | None,
    sure: bool,
    mine: bool = False,
    question: str = "",
    embed=None,
) -> Notes:
    """Replace each user note that a later correcting statement supersedes by that statement, or by
    the latest statement giving another value of its slot (``latest.newer_value``); best first
    (``mine``: the question asks about the user as "I", and among the statements holding the
    answer's kind "I'm an electrician" comes before "My brother Yusuf is an accountant")."""
    out, required, stale, heirs = [], set(), set(), {}
    for n in notes:
        fix = superseding(n, statements, kind, question, embed) if n.role == "user" else None
        if fix is None:
            out.append(n)
            # a cited correction names the old value it puts aside ("Emil was the neighbour's cat")
            old = corrected_by(n, statements, kind, question) if n.role == "user" else None
            stale |= stale_words(n.content, old.content, question) if old is not None else set()
            continue
        out.append(_note(fix, n.weight))
        heirs.setdefault(fix.number, n)
        new = salient(fix.content) - salient(n.content)
        required |= new or (set(words(fix.content)) - set(words(n.content)))
        stale |= stale_words(fix.content, n.content, question)
    kept = _once(out)
    asked = names(question) - TIME_NAMES
    # a correction speaks of whom the statement it corrects spoke of ("update: the blue room was
    # taken so we're in the garden room" after "my brother Anselm's dinner is in the blue room")
    kept.sort(
        key=lambda n: (
            not is_statement(n),
            bool(asked) and not _about(n, asked, statements, heirs),
            not kind_beyond(n.content, kind, question),
            not says_value(n.content, kind),
            mine and kind is not None and not I_START.match(n.content),
            -n.weight,
            -n.number,
        )
    )
    on_them = [n for n in kept if asked and n.role == "user" and _about(n, asked, statements, heirs)]
    if on_them:
        # "Where does Lukas live?": a statement about someone else by name ("My cousin Emma lives in
        # Dublin.") is not shown to the model beside Lukas's
        kept = [n for n in kept if n in on_them or not _other_name(n.content)]
    replaced = tuple((new, old.number) for new, old in heirs.items())
    return Notes(kept, sure, frozenset(required), stale=frozenset(stale), replaced=replaced)


def _heirs(picked: Notes, told: Sequence) -> dict:
    """Each correction that took a note's place -> the statement it corrects."""
    by_number = {c.number: c for c in told}
    return {new: by_number[old] for new, old in picked.replaced if old in by_number}


def _about(n, asked: set[str], told: Sequence, heirs: dict) -> bool:
    """Does the note speak of a name the question says, itself or as the correction of a statement
    that does?"""
    old = heirs.get(n.number)
    return about(n.content, asked, told, n.number) or (old is not None and about(old.content, asked, told, old.number))


def _the_possessed(n, told: Sequence, question: str) -> bool:
    """Does the note, or the statement it points back to, say "the <thing>" the question asks of
    someone by name ("I've booked it for twelve children" after "The party is at Jumping Jacks ..."
    for "How many children is Amara's party booked for?", ``referents.the_possessed``)?"""
    back = referent(n, told) if n.role == "user" else None
    return any(c is not None and the_possessed(c.content, question, told) for c in (n, back))


def _once(notes: Sequence[Note]) -> list[Note]:
    """Each turn once, where it first came, with the greatest weight it came with: a correction that
    replaces a cited note keeps that note's weight, though the same turn also came in at a lower one
    (pointing back by a pronoun to a statement of the chain), so chatter cited below the corrected
    note cannot outrank the correction ("Anyway, grey day today." is not the haircut's day)."""
    best: dict[int, Note] = {}
    for n in notes:
        if n.number not in best or n.weight > best[n.number].weight:
            best[n.number] = n
    return list(best.values())


def _other_name(text: str) -> bool:
    return any(not re.search(r"\d", w) for w in names(text) - TIME_NAMES)
