"""Whether a note answers what the question asks for: the answerability gate.

A turn about the same person or thing is no answer to a question about another attribute of it:
"transferred to the station in Ostrava" does not say what the girlfriend is called, "just bought a
used Peugeot 208" holds a number but not the insurance quote, "my climbing buddy Ignatius moved
away" says that he moved, not where to. A question asks for a kind of value of a head
(``heads.asked_for``); a clause of a note answers when it says the head and holds a value of the
kind that is the head's (``binding.answering_clauses``: a name bound to the thing it names, a job
said as one); a correction (``required``) answers the value it corrects.

The verdict on the notes (``judge``): ``answer`` when a note answers (the notes that do come first);
``unsure`` when a note says the head and a value of the kind but never in one clause (the quote is
offered as a guess); ``unknown`` otherwise: the honest reply is "I don't know". A question of no
kind is not judged here (the slot and asked-thing rules of ``notes`` judge it).

The model's own text passes the same gate (``model_answers``): a value of the kind beyond the
question's names, each name or number it gives from an answering clause of a note (for a thing's
name, a name bound to it there), and never the user narrated in the third person ("The user asked:
...", "The user is a dog named ...").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np

from assistant.answering.binding import (
    PRONOUN_NAMED,
    another_of,
    answering_clauses,
    clauses,
    lacks_value,
    unnamed_which,
    values_of,
)
from assistant.answering.corrections import corrects
from assistant.answering.dates import WEEKDAYS
from assistant.answering.ends import other_end
from assistant.answering.heads import LIGHT, Asked, Similar, asked_for, forms, roots, says_head
from assistant.answering.kinds import TIME_NAMES, asks_which, kind_beyond
from assistant.answering.message import SENTENCE, states
from assistant.answering.note import Note, salient
from assistant.answering.parts import marked_parts
from assistant.answering.referents import names, other_pronoun, referent
from assistant.answering.values import LABEL_HEADS
from assistant.retrieval.lexical import STOP_WORDS, WORD, stem, words

__all__ = ["Verdict", "asked_for", "clauses", "judge", "model_answers", "narrates_user", "ties_unsaid", "valued_part"]

# how many of the user's next statements may give the details of a thing just named
FOLLOWING = 2
# the kinds whose new value after a pronoun pointing back corrects the old one
CORRECTED = frozenset(("number", "amount", "clock", "time", "code"))
# the assistant speaks to the user, never of them: "The user asked: ...", "The user is a dog named ..."
NARRATES_USER = re.compile(r"(?i)\b(?:the|this)\s+(?:user|person|speaker)(?:'s)?\b")


def narrates_user(text: str, question: str = "") -> bool:
    """Does the model's text speak of the user in the third person ("The user asked: ...")? Not the
    question's own words ("The person i live with, Siobhan, ..." for "what does the person i live
    with cook?")."""
    said = {m.group(0).lower() for m in NARRATES_USER.finditer(question)}
    return any(m.group(0).lower() not in said for m in NARRATES_USER.finditer(text))


@dataclass(frozen=True)
class Verdict:
    """``how``: ``answer``, ``unsure`` or ``unknown``; ``notes``: the notes an answer may stand on
    (answering ones first); ``clauses``: the answering clauses of those notes (what a model's
    names and numbers must come from); ``values``: the names bound there to the thing whose name is
    asked (one of which a model's text must give; empty: no such question)."""

    how: str
    notes: list
    clauses: tuple[str, ...] = ()
    values: frozenset[str] = frozenset()


def judge(
    notes: Sequence,
    question: str,
    embed: Callable[[str], np.ndarray] | None = None,
    required: Collection[str] = (),
    told: Sequence = (),
    own: int | None = None,
) -> Verdict:
    """The gate on the notes (``notes``: anything with ``number``, ``role`` and ``content``, best
    first; ``told``: the user's statements in memory, oldest first). A question of no kind: every
    note, ``answer``. ``required``: a correction's new words; a note carrying one answers when it
    holds a value of the kind (the statement it corrects said the head). ``own``: the number of the
    note the question's own message states ("the person handling it is Fiona Marsh, who's my claim
    handler?"); a value of the kind there is the answer the user supplies, in whatever words.

    * ``answer``: a note answers (those that do first); or, when none does or comes near (below),
      the latest statement in memory that answers, speaks of whom the question names and no later
      statement corrects ("for 2 years" of "been bouldering at a gym called Cragstone for 2 years
      now" for "How long have I been going there?").
    * ``unknown``: nothing answers, and either no note holds a value of the kind, or the user spoke
      of the head without giving one ("the insurance quote is killing me though") nor did their next
      statements: what is asked was never said.
    * ``unsure``: a note holds a value of the kind but nothing says the head ("tried the new ramen
      place Kinoko last night" for "Where did we go for dinner yesterday?"): it may say it in other
      words, and is quoted as a guess."""
    asked = asked_for(question)
    if asked is None and notes and asks_which(question):
        mine = [n.content for n in [*notes, *told] if n.role == "user"]
        if unnamed_which(question, mine):
            return Verdict("unknown", [])  # "she works in a museum" for "Which museum ...?"
    if asked is None or not notes:
        return Verdict("answer", list(notes))
    similar = Similar(embed)
    good, found = [], []
    lexical = Similar(None)  # every statement's words embedded would cost the answer's first token
    chain = _statements(notes, told)
    for n in notes:
        got = [c for c in answering_clauses(n.content, question, asked, similar) if not another_day(c, question, asked)]
        if got and n.role == "user" and _superseded(n, chain, asked.kind, question):
            continue  # "my new phone number ends in 4471", then "hm no, just checked, it's 4417"
        valued = kind_beyond(n.content, asked.kind, question)
        fixes = (required and _carries(n.content, required)) or _points_to_answer(n, chain, asked, question)
        if (
            not got
            and valued
            and fixes
            and not other_end(n.content, question)
            and not _other_label(n.content, asked)
            and not _names_another(n.content, question)
        ):
            got = [n.content]  # "hm no, just checked, it's 4417": the statement it corrects said the head
        if not got and valued and n.number == own and n.role == "user":
            got = [n.content]  # "my cousin Rohan is coming with me, who did i say is coming?"
        if not got and asked.kind == "name" and n.role == "user" and says_head(n.content, asked, similar):
            # "got an appt at the dentist on Harrow Road, its with a dr Okafor": the titled name is the
            # dentist's, though a comma parts it from the word
            got = [c for c in clauses(n.content) if TITLED.search(c)]
        if got:
            good.append(n)
            found += got
    if good:
        mine = [n for n in good if n.role == "user"]
        kept = mine or good
        if required:
            # a correction's new value is the answer: the note carrying it first ("they moved it to the
            # 24th" before "he's been studying every night"), after the question's own message's
            kept.sort(key=lambda n: (n.number != own, not _carries(n.content, required)))
        first = notes[0]
        if first not in good and first.number > max(n.number for n in kept) and _near(first, question, asked, similar):
            # "Sorry, that was my old dentist. The new one is Dr. Amani." after "My dentist is Dr.
            # Lindqvist.": the best-ranked note is the later word on the head, and stays first
            kept = [first, *kept]
        found_ = tuple(found)
        return Verdict(
            "answer", kept + [n for n in notes if n not in kept], found_, values_of(found_, question, asked, similar)
        )
    # a neighbouring thing's value is no guess ("my bike lock code is 4471" for "the code for my gym locker")
    valued = [
        n
        for n in notes
        if kind_beyond(n.content, asked.kind, question, loose=True)
        and not _neighbours(n, question, asked, similar)
        and not _other_label(n.content, asked)
    ]
    near = [n for n in valued if says_head(n.content, asked, similar) or _head_before(n, asked, told, lexical)]
    # the name or job of what a note speaks of in the question's words, never given: no guess
    near = [n for n in near if not lacks_value(n.content, question, asked)]
    if near and not any(kind_beyond(n.content, asked.kind, question) for n in near):
        # only a capitalised first word may be the value ("Whatever, we'll stay in."): a note that
        # holds one inside a sentence is the better guess ("My older brother Tomasz is visiting")
        near = [n for n in notes if n.role == "user" and kind_beyond(n.content, asked.kind, question)] + near
    if near:
        return Verdict("unsure", near)
    asked_names = names(question) - TIME_NAMES
    for c in reversed(list(told)):
        if (asked_names and not asked_names & names(c.content)) or _superseded(c, told, asked.kind, question):
            continue
        got = answering_clauses(c.content, question, asked, lexical)
        if got:
            weight = min(getattr(n, "weight", 1.0) for n in notes)
            note = Note(c.number, c.role, c.content, weight, getattr(c, "vector", None))
            return Verdict("answer", [note], tuple(got), values_of(tuple(got), question, asked, lexical))
    spoken = [
        t
        for t in [*notes, *told]
        if t.role == "user"
        and states(t.content)
        and (_head_without_value(t.content, question, asked) or lacks_value(t.content, question, asked))
        and not _details_follow(t, chain, asked.kind, question)
    ]
    if valued and not spoken:
        return Verdict("unsure", valued)
    return Verdict("unknown", [])


def another_day(clause: str, question: str, asked: Asked) -> bool:
    """For the hour of something on a day the question names ("What time is my return train on
    Friday?"), does the clause give the hour of something on another day only ("My train leaves King's
    Cross at 08:30 on Tuesday")?"""
    if asked.kind != "clock":
        return False
    day = {w.lower().rstrip("s") for w in WORD.findall(question)} & WEEKDAYS
    said = {w.lower().rstrip("s") for w in WORD.findall(clause)} & WEEKDAYS
    return bool(day) and bool(said) and not said & day


def _details_follow(t, chain: Sequence, kind: str, question: str) -> bool:
    """Does one of the user's next statements hold a value of the kind? People name a thing, then
    give its details ("signed up for a pottery class finally!!", then "its on wednesdays at 7pm"):
    the thing said without a value is no sign that the value was never said."""
    later = [c for c in chain if c.number > t.number][:FOLLOWING]
    return any(kind_beyond(c.content, kind, question) for c in later)


def _neighbours(note, question: str, asked: Asked, similar: Similar) -> bool:
    """Does every clause of the note that says the head say it of a neighbouring thing (the
    question's noun narrowed by another word, ``binding.another_of``)?"""
    saying = [c for c in clauses(note.content) if says_head(c, asked, similar)]
    return bool(saying) and all(another_of(c, question, similar) for c in saying)


def _names_another(text: str, question: str) -> bool:
    """Does the text name someone by another pronoun than the one whose name is asked ("her name's
    Clover" for "what was his name, the vet looking at her?")?"""
    named = PRONOUN_NAMED.search(text)
    return named is not None and other_pronoun(named.group(0), question)


# a person named with a title ("dr Okafor", "Mrs Patel")
TITLED = re.compile(
    r"\b(?:(?i:dr|mr|mrs)\.?\s+(?!(?i:appointment|appt|visit|surgery|office|note|said|says|told)\b)[A-Za-z][\w'-]{2,}"
    r"|(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof)\.?\s+[A-Z][\w'-]+)"
)


def _other_label(text: str, asked: Asked) -> bool:
    """Does the text say a label (gate, seat, room, ...) and none of those the question asks the number
    or code of? "gate is now D7" gives the gate, not the seat number ("what's my seat number on the
    plane?")."""
    if asked.kind not in ("number", "code"):
        return False
    wanted = {_LABEL_AS.get(w, w) for w in {stem(h) for h in asked.head} & LABEL_HEADS}
    said = {_LABEL_AS.get(w, w) for w in {stem(w) for w in words(text)} & LABEL_HEADS}
    return bool(wanted) and bool(said) and not said & wanted


# labels people use for the same thing ("flat 4B" is the apartment's number)
_LABEL_AS = {
    stem(a): stem(b)
    for a, b in (
        ("apartment", "flat"),
        ("unit", "flat"),
        ("suite", "flat"),
        ("registration", "plate"),
        ("level", "floor"),
    )
}


def _near(note, question: str, asked: Asked, similar: Similar) -> bool:
    """Does a user's statement say the head and a value of the kind, in any clauses?"""
    return (
        note.role == "user"
        and kind_beyond(note.content, asked.kind, question, loose=True)
        and says_head(note.content, asked, similar)
    )


def _statements(notes: Sequence, told: Sequence) -> list:
    """The user's statements in memory and the user's notes, each turn once, oldest first."""
    seen = {c.number: c for c in told}
    for n in notes:
        if n.role == "user" and hasattr(n, "number"):
            seen.setdefault(n.number, n)
    return sorted(seen.values(), key=lambda c: c.number)


def _points_to_answer(note, told: Sequence, asked: Asked, question: str) -> bool:
    """Does the note point back by a pronoun to a statement that answers, giving a value of its own?
    It speaks of what that statement does: a correction ("hm no, just checked, it's 4417" after "my
    new phone number ends in 4471") or the next fact ("they're going to Hillcrest Primary" after "my
    twins start school on Monday"). A correction with a cue needs no pronoun ("scratch that about the
    time, the school texted and its 6.35 now" after "our slot with his form tutor is 6.10")."""
    if note.role != "user":
        return False
    backs = [referent(note, told), *corrects(note, told, asked.kind, question)]
    return any(b is not None and answering_clauses(b.content, question, asked, Similar(None)) for b in backs)


def _superseded(c, told: Sequence, kind: str, question: str) -> bool:
    """Does a later statement holding a value of the kind point back to ``c`` ("hm no, just checked,
    it's 4417" after "my new phone number ends in 4471")? Then ``c``'s value is the stale one. Only
    for a number, an amount, a time or a code: a name after "he" is the next fact about him ("He lives
    in Vienna." after "My best friend is Lukas."), not a new name for him."""
    if kind not in CORRECTED:
        return False
    for t in told:
        if t.number > c.number and kind_beyond(t.content, kind, question):
            back = referent(t, told)
            if back is not None and back.number == c.number:
                return True
    return False


def _head_before(note, asked: Asked, told: Sequence, similar: Similar) -> bool:
    """Does the note point back by a pronoun to a statement saying the head ("they pushed it to 2:30"
    after "big pitch to Halvorsen & Quist tomorrow")?"""
    if not hasattr(note, "number"):
        return False
    back = referent(note, told)
    return back is not None and says_head(back.content, asked, similar)


def _head_without_value(text: str, question: str, asked: Asked) -> bool:
    """Does a clause of the text say the head as a noun and hold no value of the asked kind ("the
    insurance quote is killing me though")? Lexically only: a word merely close to the head is no
    evidence that the user spoke of it; a verb ("stay" in "we'll stay in") speaks of too much."""
    if not asked.thing:
        return False
    said = Asked(asked.kind, {s: w for s, w in asked.head.items() if s in asked.thing})
    lexical = Similar(None)
    return any(
        says_head(c, said, lexical) and not kind_beyond(c, asked.kind, question, loose=True) for c in clauses(text)
    )


def _carries(text: str, required: Collection[str]) -> bool:
    tokens = {w.lower() for w in WORD.findall(text)} | set(words(text))
    return bool(tokens & set(required))


def model_answers(text: str, question: str, verdict: Verdict, told: Sequence = ()) -> bool:
    """Does the model's text pass the gate: no third-person narration of the user, and (for a
    question of a kind) a value of that kind beyond the question's names, each name and number it
    gives said in an answering clause of a note?"""
    if narrates_user(text, question) or ties_unsaid(text, question, [*verdict.notes, *told]):
        return False
    asked = asked_for(question)
    if asked is None or not verdict.clauses:
        return True
    if not kind_beyond(text, asked.kind, question, loose=True):
        return False
    given = salient(text) - names(question)
    said = set().union(*(salient(c) | {w.lower() for w in WORD.findall(c)} for c in verdict.clauses))
    named = {w.removesuffix("'s") for w in given} | {w.lower() for w in WORD.findall(text)}
    # "Your kid's name is Professor Whiskers." from "my son Lysander ... named it Professor Whiskers"
    return given <= said and (not verdict.values or bool(named & verdict.values))


def ties_unsaid(text: str, question: str, notes: Sequence) -> bool:
    """Does the model's text take a word of the question that no note says ("You're making a lasagne
    for dessert." for "what am i making for dessert?" from "thinking of doing a big lasagne and a
    salad")? It then ties a value of the notes to what the user never spoke of; a quote of the notes
    says only what they say."""
    typed = WORD.findall(question.lower())
    asked = {stem(t) for t in typed if len(t) > 1 and t not in STOP_WORDS and t not in LIGHT and not t.isdigit()}
    taken = asked & set(words(text))
    if not taken:
        return False
    said = roots(set().union(*(words(n.content) for n in notes))) if notes else set()
    return any(not roots(forms(s)) & said for s in taken)


def valued_part(note: Note, question: str, clauses: bool = False) -> Note:
    """The note cut to its sentences holding a value of the asked kind ("The new one is Dr. Amani."
    of "Sorry, that was my old dentist. The new one is Dr. Amani."): what a guess too long for the
    cap keeps. The whole note when the question asks no kind or no sentence (or every one) holds one.
    ``clauses``: cut at commas, dashes and semicolons too, what is left out marked "…" ("… its navy
    with a broken zip" of "argh i left my rucksack on the 47 bus yesterday, its navy ..."), for a
    sentence the cap would otherwise cut before its value."""
    asked = asked_for(question)
    if asked is None:
        return note
    text = note.content.strip()
    pieces = [x for x, _ in marked_parts(text)] if clauses else SENTENCE.split(text)
    pieces = [x.strip() for x in pieces if x.strip()]
    kept = [x for x in pieces if kind_beyond(x, asked.kind, question, loose=True)]
    if not kept or len(kept) == len(pieces):
        return note
    cut = (" … " if clauses else " ").join(kept)
    cut = "… " + cut if clauses and kept[0] != pieces[0] else cut
    return Note(note.number, note.role, cut, note.weight, note.vector)
