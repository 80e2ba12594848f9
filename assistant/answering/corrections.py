"""Corrections: which later statement of the user's supersedes an earlier note, and whether it
changes what a question asks.

* **A cue and a link.** "Actually it's Tuesday, not Monday", "Change of plan: ... Saturday instead": a
  later statement with a correction cue that shares a word or a name/number with the note, points
  back to it by a pronoun, or is the next one holding the asked kind (``correction_of``).
* **The latest value of a slot** (``assistant.answering.latest``): without a cue, a later value of the
  same kind for the same slot.
* **One value changed.** A correction changing only a time does not answer where the train goes, nor
  which company the pitch is to, and one whose words said again are all in a part of the statement
  without the asked kind corrects that part's slot, not the asked one (``changes_asked``); a cited
  correction of another value gives way to the statement it corrects (``uncorrected``).
* **The old value set aside.** What the correction repeats of the statement it corrects, in a part
  of its own ("..., Emil was the other cat"), is stale: the answer leaves it out
  (``assistant.answering.parts``; ``corrected_by`` finds what a cited correction corrects).

Used by the choice of notes (``assistant.answering.notes``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.answering.kinds import CLOCK, DAY_ASKED, TIME_WORDS, has_kind, kind_beyond, label_value
from assistant.answering.latest import newer_value, values
from assistant.answering.note import Note, note_of, salient
from assistant.answering.parts import parts, repeated
from assistant.answering.referents import referent, restates
from assistant.answering.values import LABELS
from assistant.retrieval.lexical import WORD, words

# a correction cue: a word or phrase with which people take back what they said ("actually",
# "no sorry", "scratch that", "hold on", "turns out", "make that 8 not 6", "or rather"), or say that the
# value changed ("pushed back to", "moving to", "switched to", "changed our minds")
_TAKE_BACK = (
    r"actually|instead|correction|i meant|sorry,? i mean|^\s*i mean|meant to say|"
    r"mis-?typed|misspoke|misspelt|misspelled|my bad|my mistake|"
    r"mixed (?:it|them|that|those) up|mixed up|misread|mis-?heard|typo|typed (?:that|it|this) wrong|"
    r"(?:said|wrote|got) (?:that|it|this) wrong|scratch that|strike that|forget (?:that|it|what|about)|"
    r"ignore (?:that|what)|never ?mind|let me fix that|fix that|i lied|or rather|rather than|"
    r"hold on|hang on|no wait|wait|no sorry|sorry no|oops|whoops|wrong|not quite|turns out|turned out|it turns out|"
    r"on second thoughts?|second thoughts|changed (?:my|our|their|his|her) minds?|change of (?:plans?|heart)|"
    r"make that|update|updated"
)
_CHANGED = (
    r"changed|changing|moved (?:it|me|us|them)|rescheduled|pushed|postponed|delayed|shifted|bumped|"
    r"brought (?:it |them )?forward|called off|cancell?ed|not anymore|no longer|rang back|called back|"
    r"(?:got )?promoted|moved to|moving (?:it |us |them )?to|switched|switching|swapped|gone off|new job"
)
CORRECTION = re.compile(
    rf"(?i)\b(?:{_TAKE_BACK}|{_CHANGED}|mix(?:ed)? (?:it|them|that|those|these) up)\b"
    r"|\bnot\s+\w+\s*,?\s+but\b|,\s*not\s+\w+|\b\d\w*\s+(?:\w+\s+)?not\s+\d"
)


def superseding(n: Note, statements: Sequence, kind: str | None, question: str, embed):
    """The later statement that supersedes ``n``: a correction, else a newer value of its slot that
    changes what is asked."""
    fix = correction_of(n, statements, kind, question)
    if fix is not None:
        return fix
    newer = newer_value(n, statements, kind, question, embed)
    return newer if newer is not None and changes_asked(newer.content, n.content, kind, question) else None


# a label the question asks the value of ("What platform is it?"): a code or number, never a time
ASKED_LABEL = re.compile(
    r"(?i)\b(platform|gate|seat|room|flat|apartment|terminal|locker|table|desk|floor|level|bus|line)\b"
)


AFTER_LABEL = re.compile(rf"(?i)\b(?:{'|'.join(sorted(LABELS))})\s+$")


def changes_asked(fix: str, note: str, kind: str | None, question: str = "") -> bool:
    """May ``fix`` correct ``note`` for this question? A correction changes one value: one that
    changes only a time ("it's 7:50 actually" after "my train to Bilbao leaves at 7:05 from platform
    12") does not answer where the train goes or its platform, and the original statement stands; nor
    does "it was at 10 but they pushed it to 2:30" say which company the pitch is to. A question of no
    kind may ask for a number that looks like a year ("it's the 2008" is a car model), so there a year
    is no time. Without a question, whether ``fix`` corrects ``note`` at all: yes."""
    if kind is not None and _speaks_of_another_part(fix, note, kind, question):
        return False
    if kind == "time" and DAY_ASKED.search(question) and not kind_beyond(fix, kind, question):
        return False  # "landing at 9pm now" changes the hour, not the day "she lands friday" said
    if kind in ("time", "clock") or not (kind or question):
        return True
    new = salient(fix) - salient(note)
    if not new:
        return True
    # "room 5.02" is the room, not a time: a value right after a label is the label's
    times = [m for m in [*CLOCK.finditer(fix), *TIME_WORDS.finditer(fix)] if not AFTER_LABEL.search(fix[: m.start()])]
    if not (kind or ASKED_LABEL.search(question)):
        times = [m for m in times if not re.fullmatch(r"(19|20)\d\d", m.group(0))]
    timed = {w.lower() for m in times for w in re.findall(r"\w+", m.group(0))}
    return not new <= timed


def _speaks_of_another_part(fix: str, note: str, kind: str, question: str) -> bool:
    """Does ``fix`` speak only of a part of ``note`` that holds no value of the asked kind? "update:
    the blue anchor was full so we're at rosalind's" corrects where the party is, not the name in
    "my uncle Piet turns 60 and we're taking him to a place called the blue anchor": the words it
    says again are all in the part without the name. Without words said again, no one can tell."""
    said = repeated(fix, note, question)
    if kind in ("time", "clock"):
        # a new day or hour is said in a part of its own: words said again elsewhere ("actually it got
        # moved to monday, Fatima just messaged me") name who told, not what moved
        timed = [p for p in parts(fix, at_and=True) if has_kind(p, kind)]
        said = said & {w.lower() for p in timed for w in WORD.findall(p)} if timed else said
    if not said:
        return False
    pieces = parts(note, at_and=True)
    holding = [p for p in pieces if values(p, kind)] or [p for p in pieces if has_kind(p, kind)]
    if not holding or len(holding) == len(pieces):
        return False
    return not any(said & {w.lower() for w in WORD.findall(p)} for p in holding)


def uncorrected(n: Note, told: Sequence, kind: str | None, question: str) -> Note:
    """A cited correction that changes another value than the one asked ("it's 7:50 actually" for
    "What platform is it?") gives way to the statement it corrects, when that one holds the asked
    kind of value."""
    if n.role != "user" or not CORRECTION.search(n.content):
        return n
    for c in sorted((c for c in told if c.number < n.number), key=lambda c: -c.number):
        fix = correction_of(note_of(c, n.weight), told)
        if fix is not None and fix.number == n.number:
            if changes_asked(n.content, c.content, kind, question) or not kind_beyond(c.content, kind, question):
                return n  # nor when the statement it corrects holds no value of the kind ("good morning")
            return note_of(c, n.weight)
    return n


LOOK_BACK = 12  # a correction corrects one of the user's last statements before it, not the whole memory


def corrected_by(n: Note, told: Sequence, kind: str | None, question: str):
    """The earlier statement of the user's that ``n`` corrects, or None: the latest one whose
    correction (``correction_of``) is ``n`` ("sorry, wrong one, his name is Oskar, Emil was the
    neighbour's cat" corrects "we adopted a tabby called Emil")."""
    return next(corrects(n, told, kind, question), None)


def corrects(n: Note, told: Sequence, kind: str | None, question: str):
    """Each earlier statement of the user's that ``n`` corrects, latest first: "scratch that about
    the time, ... its 6.35 now" may point back by "that" to the chatter before it and correct "our
    slot with his form tutor is 6.10" too."""
    if n.role != "user" or not CORRECTION.search(n.content):
        return
    for c in sorted((c for c in told if c.number < n.number), key=lambda c: -c.number)[:LOOK_BACK]:
        fix = correction_of(note_of(c, n.weight), told, kind, question)
        if fix is not None and fix.number == n.number:
            yield c


def correction_of(note: Note, statements: Sequence, kind: str | None = None, question: str = ""):
    """The latest later user statement that corrects ``note``: it has a correction cue and shares
    a word or a name/number with it, or points back to it by a pronoun (and, when the question
    wants a kind of word, holds one). The user's next statement holding a value of the question's
    kind needs no shared word, whatever chatter came between: people correct what they said ("Dinner
    with Jonas is at 7:30." / "He just texted, make that 8:15."; "The play is on the 12th." / "ok
    thanks" / "They moved it to the 19th."). The same "my X is" slot filled again with another name
    or number corrects it without a cue (``referents.restates``)."""
    mine = set(words(note.content)) | salient(note.content)
    later = [
        c
        for c in statements
        if c.number > note.number
        and (has_kind(c.content, kind) or label_value(c.content, question))
        and changes_asked(c.content, note.content, kind, question)
    ]
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
