"""Whether a note answers what the question asks for: the answerability gate.

A turn about the same person or thing is no answer to a question about another attribute of it:
"transferred to the station in Ostrava" does not say what the girlfriend is called, "just bought a
used Peugeot 208" holds a number but not the insurance quote, "my climbing buddy Ignatius moved
away" says that he moved, not where to. A question asks for a **kind** of value
(``kinds.expected_kind``: a name, an amount, a place, a time, ...) of a **head** -- what it asks
about: "girlfriend" in "What's my girlfriend called?", "insurance quote" in "How much is my
insurance quote?", "school" in "What school does Lysander go to?", "move" in "Where did Ignatius
move to?". A clause of a note **answers** when it says the head and holds a value of the kind
(beyond the names the question says itself):

* the head said in one of its forms, a word said for it (``asked.SAME``, ``related.RELATED``, the
  role words of ``referents.ROLES``: "son" for "kid"), or a word the sentence-embedding model puts
  close to it ("moving" for "relocating"): ``HEAD_SIMILARITY``, set on the probe sets;
* the head's words are the question's content words, less the kind's own ("called", "city", "how
  much"), the names it asks about ("Ignatius") and light verbs ("go", "do"); a question left with
  none ("What's my name?", "How long have I been going there?") asks the value alone;
* a clause, not the whole turn: "the tour company changed the itinerary, it's Fortaleza now" says
  the tour company and a name, but the name is the itinerary's;
* "he's called Lukas", "her name is Pippa": a name said of a pronoun answers a name question about
  whom the turn is about; a correction (``required``) answers the value it corrects.

The verdict on the notes (``judge``): ``answer`` when a note answers (the notes that do come first);
``unsure`` when a note says the head and a value of the kind but never in one clause (the quote is
offered as a guess); ``unknown`` otherwise: the honest reply is "I don't know". A question of no
kind is not judged here (the slot and asked-thing rules of ``notes`` judge it).

The model's own text passes the same gate (``model_answers``): a value of the kind beyond the
question's names, each name or number it gives from an answering clause of a note, and never the
user narrated in the third person ("The user asked: ...", "The user is a dog named ...").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np

from assistant.answering.asked import DETERMINERS, SAME
from assistant.answering.kinds import TIME_NAMES, expected_kind, kind_beyond
from assistant.answering.message import SENTENCE, states
from assistant.answering.note import Note, salient
from assistant.answering.referents import ROLES, names, referent
from assistant.answering.related import RELATED
from assistant.retrieval.lexical import STOP_WORDS, WORD, stem, stem_groups, words

HEAD_SIMILARITY = (
    0.55  # cosine of two single words' MiniLM vectors: "moving"/"relocating" 0.71, "school"/"hamster" 0.33
)

# the words a kind of answer is asked with: they name the kind, not what it is of
_KIND_WORDS = {
    "name": "name names called call named nickname who whom",
    "clock": "time clock late early",
    "time": "when day date month year weekday time",
    "place": "where place city town country village island state location located whereabouts",
    "colour": "colour color colours colors",
    "job": "job jobs title occupation profession career living work works working",
    "code": "code pin password passcode passphrase combination combo",
    "food": "food dish meal eat ate eating",
    "amount": "amount much",
    "number": "number numbers digit digits age old many much long count",
}
KIND_WORDS = {kind: frozenset(stem(w) for w in ws.split()) for kind, ws in _KIND_WORDS.items()}
# verbs and adjectives that say nothing of what is asked ("Where am I going on my trip?": the trip)
LIGHT = frozenset(
    "go goes going went gone do does doing done get gets getting got gotten make makes making made have has having "
    "had be being been come comes coming came take takes taking took supposed happen happens happened again remind "
    "now please new latest last first next current these days".split()
)
NUMERAL = re.compile(r"(?i)^(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred)$")
ROLE_GROUPS = stem_groups(ROLES)
# the kinds whose new value after a pronoun pointing back corrects the old one
CORRECTED = frozenset(("number", "amount", "clock", "time", "code"))
# a noun and the verb it is said with, whose stems differ ("my flight" / "I'm flying"), and verbs said
# for one another
DERIVED = stem_groups(
    (
        "fly flying flew flown flight flights",
        "marry married marrying wedding",
        "born birthday",
        "live lives living moved moving relocated relocating",  # who moved to a town lives there
        "cost costs price paid pay spent spend",
    )
)
# a name said of someone by a pronoun: "he's called Lukas", "her name is Pippa"
PRONOUN_NAMED = re.compile(
    r"(?i)\b(?:he|she|it|they|his|her|its|their)(?:'s|\s+is|\s+was|\s+are)?\s+(?:called|named|name\s+is|name's)\s+\w"
    r"|\b(?:his|her|its|their)\s+names?\s+(?:is|are|was)\s+\w|\b(?:named|called)\s+(?:him|her|it|them)\s+\w"
)
# the assistant speaks to the user, never of them: "The user asked: ...", "The user is a dog named ..."
NARRATES_USER = re.compile(r"(?i)\b(?:the|this)\s+(?:user|person|speaker)(?:'s)?\b")
# where a sentence's clauses part: a semicolon, a colon, "but" / "so", and a comma before "it",
# "that", "they" ... ("the tour company changed the itinerary, it's Fortaleza now"); other commas
# join a list or an apposition to its clause ("I parked on level 3, spot C12")
CLAUSE = re.compile(
    r"[;:]+(?=\s|$)\s*|\s+(?:but|so(?!\s+(?:far|much|many)\b)|though|although)\s+"
    r"|,\s*(?=(?:and|but|so|it|it's|its|that|that's|this|they|they're|which|there|there's)\b)|\s+-+\s+",
    re.IGNORECASE,
)


def narrates_user(text: str) -> bool:
    """Does the model's text speak of the user in the third person ("The user asked: ...")?"""
    return bool(NARRATES_USER.search(text))


def clauses(text: str) -> list[str]:
    """The clauses of a turn: its sentences (a title's full stop ends none: "Dr. Okonkwo"), split
    where ``CLAUSE`` parts them."""
    out = []
    for sentence in SENTENCE.split(text.strip()):
        out += [c.strip(" ,.!?") for c in CLAUSE.split(sentence) if c and c.strip(" ,.!?")]
    return out


@dataclass(frozen=True)
class Asked:
    """What a question asks for: the kind of value and the head's words (stem -> the word as typed;
    empty: the value alone is asked for); ``thing``: the head's stems said as a noun ("my insurance
    quote", "what school"), not a verb ("move", "stay")."""

    kind: str
    head: dict[str, str]
    thing: frozenset[str] = frozenset()


def asked_for(question: str) -> Asked | None:
    """The kind and head of a question, or None when it asks for no kind of value."""
    kind = expected_kind(question)
    if kind is None:
        return None
    own = names(question) | {w.lower() for w in re.findall(r"\b[A-Z][\w'-]*", question[1:])}
    generic = KIND_WORDS.get(kind, frozenset()) | {stem(w) for w in TIME_NAMES}
    head: dict[str, str] = {}
    thing, noun = set(), False
    for token in WORD.findall(question.lower()):
        plain = token.removesuffix("'s")
        s = stem(plain)
        if plain in DETERMINERS or plain in ("what", "which") or token.endswith("'s"):
            noun = True  # a noun phrase opens: "my insurance quote", "the tour company", "what school"
            if not token.endswith("'s"):
                continue
        said_nothing = plain in STOP_WORDS or plain in LIGHT or plain.isdigit() or NUMERAL.match(plain)
        if len(plain) < 2 or said_nothing or plain in own or s in generic:
            noun = noun and s in generic and plain not in STOP_WORDS  # "what time is ...": the phrase goes on
            continue
        head.setdefault(s, plain)
        if noun:
            thing.add(s)
    return Asked(kind, head, frozenset(thing))


def _forms(s: str) -> set[str]:
    """A head word's stem and the stems of the words said for it."""
    return {s} | set(SAME.get(s, ())) | set(RELATED.get(s, ())) | set(ROLE_GROUPS.get(s, ())) | set(DERIVED.get(s, ()))


def _roots(stems: Collection[str]) -> set[str]:
    """Stems without a final "e": "move" and "moved" (stemmed "mov") meet."""
    return {s[:-1] if s.endswith("e") and len(s) > 3 else s for s in stems}


class Similar:
    """Word-level closeness by the sentence-embedding model (``embed``: text -> unit vector), each
    word embedded once."""

    def __init__(self, embed: Callable[[str], np.ndarray] | None):
        self.embed, self.cache = embed, {}

    def _vec(self, word: str):
        if word not in self.cache:
            self.cache[word] = self.embed(word)
        return self.cache[word]

    def close(self, a: str, candidates: Collection[str]) -> bool:
        if self.embed is None or not candidates:
            return False
        va = self._vec(a)
        if va is None:
            return False
        return any((vb := self._vec(b)) is not None and float(np.dot(va, vb)) >= HEAD_SIMILARITY for b in candidates)


def says_head(text: str, asked: Asked, similar: Similar) -> bool:
    """Does the text say a word of the question's head (a form, a word for it, or a close word)?"""
    if not asked.head:
        return True
    stems = set(words(text)) | {stem(t.removesuffix("'s")) for t in WORD.findall(text.lower())}
    if any(_roots(_forms(s)) & _roots(stems) for s in asked.head):
        return True
    typed = {t for t in WORD.findall(text.lower()) if t not in STOP_WORDS and len(t) > 2 and not t.isdigit()}
    return any(similar.close(w, typed) for w in asked.head.values())


def answering_clauses(text: str, question: str, asked: Asked, similar: Similar) -> list[str]:
    """The clauses of ``text`` that say the head and hold a value of the asked kind."""
    out = []
    for c in clauses(text):
        # a sentence's capitalised first word may be a name, never makes the clause an answer
        # ("Whatever, we'll stay in." does not say who is coming to stay)
        if not kind_beyond(c, asked.kind, question):
            continue
        if says_head(c, asked, similar) or (asked.kind == "name" and PRONOUN_NAMED.search(c)):
            out.append(c)
    return out


@dataclass(frozen=True)
class Verdict:
    """``how``: ``answer``, ``unsure`` or ``unknown``; ``notes``: the notes an answer may stand on
    (answering ones first); ``clauses``: the answering clauses of those notes (what a model's
    names and numbers must come from)."""

    how: str
    notes: list
    clauses: tuple[str, ...] = ()


def judge(
    notes: Sequence,
    question: str,
    embed: Callable[[str], np.ndarray] | None = None,
    required: Collection[str] = (),
    told: Sequence = (),
) -> Verdict:
    """The gate on the notes (``notes``: anything with ``number``, ``role`` and ``content``, best
    first; ``told``: the user's statements in memory, oldest first). A question of no kind: every
    note, ``answer``. ``required``: a correction's new words; a note carrying one answers when it
    holds a value of the kind (the statement it corrects said the head).

    * ``answer``: a note answers (those that do first); or, when none does or comes near (below),
      the latest statement in memory that answers, speaks of whom the question names and no later
      statement corrects ("for 2 years" of "been bouldering at a gym called Cragstone for 2 years
      now" for "How long have I been going there?").
    * ``unknown``: nothing answers, and either no note holds a value of the kind, or the user spoke
      of the head without giving one ("the insurance quote is killing me though"): what is asked was
      never said.
    * ``unsure``: a note holds a value of the kind but nothing says the head ("tried the new ramen
      place Kinoko last night" for "Where did we go for dinner yesterday?"): it may say it in other
      words, and is quoted as a guess."""
    asked = asked_for(question)
    if asked is None or not notes:
        return Verdict("answer", list(notes))
    similar = Similar(embed)
    good, found = [], []
    lexical = Similar(None)  # every statement's words embedded would cost the answer's first token
    chain = _statements(notes, told)
    for n in notes:
        got = answering_clauses(n.content, question, asked, similar)
        if got and n.role == "user" and _superseded(n, chain, asked.kind, question):
            continue  # "my new phone number ends in 4471", then "hm no, just checked, it's 4417"
        valued = kind_beyond(n.content, asked.kind, question)
        fixes = (required and _carries(n.content, required)) or _points_to_answer(n, chain, asked, question)
        if not got and valued and fixes:
            got = [n.content]  # "hm no, just checked, it's 4417": the statement it corrects said the head
        if got:
            good.append(n)
            found += got
    if good:
        mine = [n for n in good if n.role == "user"]
        kept = mine or good
        first = notes[0]
        if first not in good and first.number > max(n.number for n in kept) and _near(first, question, asked, similar):
            # "Sorry, that was my old dentist. The new one is Dr. Amani." after "My dentist is Dr.
            # Lindqvist.": the best-ranked note is the later word on the head, and stays first
            kept = [first, *kept]
        return Verdict("answer", kept + [n for n in notes if n not in kept], tuple(found))
    valued = [n for n in notes if kind_beyond(n.content, asked.kind, question, loose=True)]
    near = [n for n in valued if says_head(n.content, asked, similar) or _head_before(n, asked, told, lexical)]
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
            return Verdict("answer", [note], tuple(got))
    spoken = [
        t
        for t in [*notes, *told]
        if t.role == "user" and states(t.content) and _head_without_value(t.content, question, asked)
    ]
    if valued and not spoken:
        return Verdict("unsure", valued)
    return Verdict("unknown", [])


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
    twins start school on Monday")."""
    back = referent(note, told) if note.role == "user" else None
    return back is not None and bool(answering_clauses(back.content, question, asked, Similar(None)))


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


def model_answers(text: str, question: str, verdict: Verdict) -> bool:
    """Does the model's text pass the gate: no third-person narration of the user, and (for a
    question of a kind) a value of that kind beyond the question's names, each name and number it
    gives said in an answering clause of a note?"""
    if narrates_user(text):
        return False
    asked = asked_for(question)
    if asked is None or not verdict.clauses:
        return True
    if not kind_beyond(text, asked.kind, question, loose=True):
        return False
    given = salient(text) - names(question)
    said = set().union(*(salient(c) | {w.lower() for w in WORD.findall(c)} for c in verdict.clauses))
    return given <= said


def valued_part(note: Note, question: str) -> Note:
    """The note cut to its sentences holding a value of the asked kind ("The new one is Dr. Amani."
    of "Sorry, that was my old dentist. The new one is Dr. Amani."): what a guess too long for the
    cap keeps. The whole note when the question asks no kind or no sentence (or every one) holds one."""
    asked = asked_for(question)
    if asked is None:
        return note
    sentences = [x for x in SENTENCE.split(note.content.strip()) if x.strip()]
    kept = [x for x in sentences if kind_beyond(x, asked.kind, question, loose=True)]
    if not kept or len(kept) == len(sentences):
        return note
    return Note(note.number, note.role, " ".join(kept), note.weight, note.vector)
