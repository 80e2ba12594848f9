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

* **What a turn is about** (``assistant.answering.referents``): "He lives in Vienna." after "My best
  friend is Lukas." answers "Where does Lukas live?"; the names the question says are not its answer;
  a code is asked for by its label.

The notes come best first: the user's statements holding the answer's kind of word before the
rest, then by the citation's weight; the extractive answer quotes the first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.answering.message import SELF_WORDS, about_the_user, recalls, states
from assistant.answering.note import OPENERS, Note, salient
from assistant.answering.referents import (
    CODE_ASKED,
    about,
    followers,
    holds_code,
    names,
    referent,
    restates,
    unmentioned_role,
)
from assistant.retrieval.lexical import STOP_WORDS, words

KINDS = (
    ("name", re.compile(r"(?i)^\s*(who|whom)\b|\b(name|called|call)\b")),
    ("clock", re.compile(r"(?i)\b(what|which)\s+time\b|\bat what time\b|\bhow (late|early)\b")),
    ("time", re.compile(r"(?i)^\s*when\b|\b(what|which)\s+(day|date|month|year|weekday)\b")),
    (
        "place",
        re.compile(
            r"(?i)^\s*where\b|\b(what|which)\s+(city|town|country|place|street|"
            r"hospital|school|village|island|state)\b"
        ),
    ),
    ("colour", re.compile(r"(?i)\bcolou?rs?\b")),
    (
        "job",
        re.compile(
            r"(?i)\bwhat\s+(do|does|did)\s+[\w' ]+?\s+do\s*(for\s+(work|a\s+living))?\s*[?.!]*\s*$"
            r"|\b(job|occupation|profession|career)\b|\bfor a living\b"
        ),
    ),
    ("code", CODE_ASKED),
    ("number", re.compile(r"(?i)\bhow\s+(old|many|much|long)\b|\b(number|age)\b")),
)
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday weekend tomorrow tonight today yesterday"
_PERIODS = "morning afternoon evening night week weekend month year spring summer autumn fall winter"
TIME_WORDS = re.compile(
    rf"(?i)\b({'|'.join((_MONTHS + ' ' + _DAYS).split())})s?\b|\b\d{{1,2}}(:\d\d|\s?[ap]\.?m\b|st|nd|rd|th)\b"
    rf"|\b(this|next|last|every|each|in the)\s+({'|'.join(_PERIODS.split())})\b|\b(ago|19\d\d|20\d\d)\b"
)
CLOCK = re.compile(
    r"(?i)\b\d{1,2}[:.]\d\d\b|\b\d{1,2}\s?[ap]\.?m\b|o'clock|\b(noon|midday|midnight)\b|\bhalf past\b"
    r"|\bquarter (past|to)\b|\bat (\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b"
)
_TIME_NAMES = frozenset((_MONTHS + " " + _DAYS).split())
# where something is: a capitalised name, or a place said with a preposition ("in the shed",
# "under the blue flowerpot", "at my mother's house"), not a date ("on the 12th")
LOCATIVE = re.compile(
    r"(?i)\b(in|at|on|under|behind|near|next to|beside|by|inside|outside|above|below|from|into|"
    r"opposite|across from|between|upstairs|downstairs)\s+(the|a|an|my|our|his|her|their|your|this|that)\s+(?!\d)\w"
)
# a name said as one: "called rafa", "her name is Bernice", "my bf kwame" (lower-case names too)
_PEOPLE = (
    "bf gf boyfriend girlfriend husband wife partner son daughter brother sister mum mom mother dad "
    "father friend cat dog kid boss neighbour neighbor cousin uncle aunt nephew niece landlord "
    "landlady colleague teacher doctor dentist rabbit bunny hamster horse baby"
)
NAME_CUE = re.compile(
    rf"(?i)\b(called|named|name is|name's|names are)\s+\w"
    rf"|\b(my|our)\s+({'|'.join(_PEOPLE.split())})\s+(?P<who>[a-z]\w+)"
)
COLOURS = re.compile(
    r"(?i)\b(red|orange|yellow|green|blue|purple|violet|pink|brown|black|white|grey|gray|silver|gold|"
    r"golden|beige|navy|turquoise|teal|ginger|maroon|cream|tan|tabby)\b"
)
JOB = re.compile(
    r"(?i)\b(work(s|ed|ing)?|job|profession|occupation|career|employed|retired|unemployed|teach(es|ing)?|"
    r"student|studying)\b|\b(am|'m|is|'s|are|'re|was|were|be|been|became|become)\s+(an?|the)\s+(\w+\s+)?"
    r"(\w+(er|or|ist|ian|ant|ent|eer|man|woman|ess)|nurse|vet|pilot|chef|cook|judge|clerk|nanny|"
    r"mechanic|architect|surgeon|midwife|barista|plumber|electrician)\b"
)
NUMBER = re.compile(
    r"(?i)\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|"
    r"forty|fifty|sixty|seventy|eighty|ninety|hundred)\b"
)
CORRECTION = re.compile(
    r"(?i)\b(actually|instead|correction|i meant|mixed (?:it|them|that|those) up|mixed up|misread|"
    r"typo|scratch that|change of plans?|changed|moved (?:it|me)|rescheduled|pushed|postponed|delayed|shifted|bumped|"
    r"brought (?:it |them )?forward|called off|not anymore|"
    r"no longer|wrong|oops|make that|update|wait|mix(?:ed)? (?:it|them|that|those|these) up)\b"
    r"|\bnot\s+\w+\s*,?\s+but\b|,\s*not\s+\w+"
)

# the question asks about the user as "I" ("What do I do?", "Where did I park?"), and a statement
# of theirs speaks of themselves as "I"
ASKS_ABOUT_ME = re.compile(r"(?i)\b(do|did|am|was|have|can|should|will|does)\s+i\b|\bi\s+(am|do|did|have)\b")
I_START = re.compile(r"(?i)^\W*(i|i'm|i've|i'll|i'd)\b")

GUESSES = 2
RESCUE_DEPTH = 5  # the answer-kind rule looks this far down the ranker's user statements


def expected_kind(question: str) -> str | None:
    """The kind of word the answer needs (``name``, ``time``, ``place``, ``number``) or None."""
    for kind, pattern in KINDS:
        if pattern.search(question):
            return kind
    return None


def _names(text: str) -> set[str]:
    """Capitalised words inside a sentence and words with a digit, less days and months."""
    return {w for w in salient(text) if w not in _TIME_NAMES}


def _named(text: str) -> bool:
    for m in NAME_CUE.finditer(text):
        who = m.group("who")
        if who is None or not (
            who.lower() in STOP_WORDS or who.lower() in _TIME_NAMES or re.search(r"(ed|ing|s)$", who)
        ):
            return True
    return False


def _opening_name(text: str) -> bool:
    """A sentence opens with what may be a name ("Mochi knocked my coffee off the desk"): a
    capitalised word that is not a common word, a day or month, or a verb form. Only a "may be":
    it keeps "I don't know" from being said, never makes a note the answer."""
    for m in re.finditer(r"(?:^|[.!?]\s+)([A-Z][a-z]{2,})\b", text):
        w = m.group(1).lower()
        if w not in STOP_WORDS and w not in OPENERS and w not in _TIME_NAMES and not re.search(r"(ed|ing|ly|s)$", w):
            return True
    return False


def has_kind(text: str, kind: str | None, loose: bool = False) -> bool:
    """Does ``text`` hold a word of the answer's kind (``expected_kind``)?"""
    if kind is None:
        return True
    if kind == "time":
        return bool(TIME_WORDS.search(text))
    if kind == "clock":
        return bool(CLOCK.search(text))
    if kind == "number":
        return bool(NUMBER.search(text))
    if kind == "code":
        return holds_code(text, text)
    if kind == "colour":
        return bool(COLOURS.search(text))
    if kind == "job":
        return bool(JOB.search(text))
    if kind == "place":
        return bool(_names(text) or LOCATIVE.search(text)) or (loose and _opening_name(text))
    # a name: a capitalised word inside a sentence, or a name cue (``loose``: or a sentence's first word)
    return bool(_names(text)) or _named(text) or (loose and _opening_name(text))


def _without(text: str, asked: set[str]) -> str:
    """``text`` with the names the question already says blanked out ("Lukas" for "Where does Lukas
    live?"): they are what is asked about, not the answer."""
    if not asked:
        return text
    blank = lambda m: "x" if m.group(0).lower().removesuffix("'s") in asked else m.group(0)  # noqa: E731
    return re.sub(r"[\w'-]+", blank, text)


def kind_beyond(text: str, kind: str | None, question: str, loose: bool = False) -> bool:
    """``has_kind`` beyond the question's own names and numbers."""
    return has_kind(_without(text, names(question) - _TIME_NAMES), kind, loose)


SUBJECT = re.compile(r"\b(?:does|did|is|was|has|will)\s+([A-Z][a-z][\w-]*)\b(?!')|\b([A-Z][a-z][\w-]*)'s\b")


def asked_subject(question: str) -> str | None:
    """The person or thing a question asks about by name ("Where does Lukas live?", "Theo's
    school"), lower-cased, or None."""
    for m in SUBJECT.finditer(question):
        w = (m.group(1) or m.group(2)).lower()
        if w not in _TIME_NAMES and w not in STOP_WORDS and m.start() > 0:
            return w
    return None


def is_statement(c) -> bool:
    return c.role == "user" and states(c.content)


@dataclass(frozen=True)
class Notes:
    """The notes an answer is built from, best first; ``sure``: they are citations, not guesses;
    ``required``: words of a correction the answer must carry one of (empty: none); ``unknown``:
    memory holds nothing that answers, and the honest reply is "I don't know"."""

    notes: list[Note]
    sure: bool
    required: frozenset[str] = frozenset()
    unknown: bool = False


def _note(c, weight: float) -> Note:
    return Note(c.number, c.role, c.content, round(weight, 4), c.vector)


def select_notes(question: str, active: Sequence, retrieval, guesses: int = GUESSES, current=None) -> Notes:
    """The notes for a question (``active``: the in-memory turns; ``retrieval``: the step's result
    with ``cited`` and ``ranked``; ``current``: the fact the question's own message states, a turn
    with number/role/content, or None). Empty when nothing is cited and the question is not about
    the user (a guess from memory would answer "How are you?" with a quote); ``unknown`` when the
    question recalls something about the user that no statement of theirs holds."""
    by_number = {c.number: c for c in active}
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
    if (subject and not any(subject in names(c.content) for c in told)) or unmentioned_role(
        question, [c.content for c in told]
    ):
        # "Where does Lukas live?" and Lukas was never mentioned: nothing said is about him
        return Notes([], False, unknown=True)
    if not notes:
        if not about_the_user(question):
            return Notes([], False)
        # the user's statements about themselves first, then their other statements, then the rest
        usable = sorted(
            (c for c in ranked if c.role != "user" or states(c.content)),
            key=lambda c: (not is_statement(c), not SELF_WORDS.search(c.content)),
        )
        typed = [c for c in usable if is_statement(c) and has_kind(c.content, kind)]
        typed = typed or [c for c in usable if is_statement(c) and has_kind(c.content, kind, loose=True)]
        if kind is not None and ASKS_ABOUT_ME.search(question):
            # among the statements holding the answer's kind, the user speaking as "I" first
            typed.sort(key=lambda c: not I_START.match(c.content))
        if not usable or (kind and not typed):
            return Notes([], False, unknown=recalls(question))
        best = (typed[:1] + [c for c in usable if typed[:1] != [c]])[:guesses]
        notes = [_note(c, 1.0 - 0.1 * i) for i, c in enumerate(best)]
    else:
        notes += _pointed(notes, told, kind, question)
        if kind and not any(n.role == "user" and kind_beyond(n.content, kind, question) for n in notes):
            cited = {n.number for n in notes}
            extra = [
                c for c in statements[:RESCUE_DEPTH] if c.number not in cited and kind_beyond(c.content, kind, question)
            ]
            if extra:
                notes.append(_note(extra[0], min(n.weight for n in notes)))
    picked = _corrected(notes, told, kind, sure, bool(ASKS_ABOUT_ME.search(question)), question)
    if kind and not _answers_kind(picked.notes, kind, question) and (recalls(question) or _on_topic(picked, question)):
        # "What time does my flight leave?" and only "I'm flying to Oslo on Friday" is known: the
        # turns are about the question, but none holds what it asks for
        return Notes([], False, unknown=True)
    return picked


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
    asked = names(question) - _TIME_NAMES
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
    notes: list[Note], statements: Sequence, kind: str | None, sure: bool, mine: bool = False, question: str = ""
) -> Notes:
    """Replace each user note that a later correcting statement supersedes by that statement; best
    first (``mine``: the question asks about the user as "I", and among the statements holding the
    answer's kind "I'm an electrician" comes before "My brother Yusuf is an accountant")."""
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
    asked = names(question) - _TIME_NAMES
    kept.sort(
        key=lambda n: (
            not is_statement(n),
            bool(asked) and not about(n.content, asked, statements, n.number),
            not kind_beyond(n.content, kind, question),
            mine and kind is not None and not I_START.match(n.content),
            -n.weight,
            -n.number,
        )
    )
    on_them = [n for n in kept if asked and n.role == "user" and about(n.content, asked, statements, n.number)]
    if on_them:
        # "Where does Lukas live?": a statement about someone else by name ("My cousin Emma lives in
        # Dublin.") is not shown to the model beside Lukas's
        kept = [n for n in kept if n in on_them or not _other_name(n.content)]
    return Notes(kept, sure, frozenset(required))


def _other_name(text: str) -> bool:
    return any(not re.search(r"\d", w) for w in names(text) - _TIME_NAMES)


def correction_of(note: Note, statements: Sequence, kind: str | None = None):
    """The latest later user statement that corrects ``note``: it has a correction cue and shares
    a word or a name/number with it, or points back to it by a pronoun (and, when the question
    wants a kind of word, holds one). The user's next statement holding a value of the question's
    kind needs no shared word, whatever chatter came between: people correct what they said ("Dinner
    with Jonas is at 7:30." / "He just texted, make that 8:15."; "The play is on the 12th." / "ok
    thanks" / "They moved it to the 19th."). The same "my X is" slot filled again with another name
    or number corrects it without a cue (``referents.restates``)."""
    mine = set(words(note.content)) | salient(note.content)
    later = [c for c in statements if c.number > note.number and has_kind(c.content, kind)]
    after = min(later, key=lambda c: c.number) if later else None  # chatter between is skipped
    found = None
    for c in later:
        restated = restates(c.content, note.content)
        if not CORRECTION.search(c.content) and not restated:
            continue
        theirs = set(words(c.content)) | salient(c.content)
        follows = c is after and kind is not None and has_kind(note.content, kind)
        back = getattr(referent(c, statements), "number", None) == note.number
        if (mine & theirs or follows or back or restated) and (found is None or c.number > found.number):
            found = c
    return found
