"""What a question's verb asks for, and whether a turn about the same topic gives it.

A turn about what a question speaks of may hold another attribute of it, and quoting it answers a
question that was not asked:

* "Who plays drums in my band?" asks for the person doing that: a turn must say the doing
  ("plays", "played") and a person's name; "i play bass" and "the gig moved to the Brass Monkey"
  speak of the band but name no drummer.
* "What present did I get my grandad?" asks for a thing of the question's head ("present") that the
  verb ("get") did: a turn about the grandad that says neither the head nor the verb ("my grandad
  Thaddeus is turning 90") holds his age, not the present.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.answering.kinds import TIME_NAMES, expected_kind, kind_beyond
from assistant.answering.note import note_of
from assistant.answering.related import DOERS, related
from assistant.retrieval.lexical import STOP_WORDS, stem, stem_groups, words

# "Who plays drums ...?", "Who lent me the ladder?": a verb right after "who", not a copula or an
# auxiliary ("Who is coming?", "Who did I meet?")
WHO_DOES = re.compile(r"(?i)^\s*who\s+(?P<verb>[a-z]+)\b")
AUXILIARIES = frozenset(
    "is was are were am be been has have had does did do will would can could should shall may might must s".split()
)
# "What present did I get my grandad?", "Which instrument do I play in the band?": a head noun, an
# auxiliary, a subject, then the verb
WHAT_DONE = re.compile(
    r"(?i)^\s*(?:what|which)\s+(?:(?:kind|type|sort)\s+of\s+)?(?P<head>[a-z]+)\s+"
    r"(?:do|does|did|am|are|is|was|were|will|would|have|has|had)\s+(?P<who>i|we|you|he|she|they)\s+"
    r"(?P<verb>[a-z]+)\b(?P<rest>[^?!.]*)"
)
# forms of a verb its stem does not fold ("got" for "get", "bought" for "buy")
_VERB_FORMS = (
    "get got gotten getting buy bought buying gave give given giving",
    "lend lent lending",
    "teach taught teaching",
    "drive drove driven driving",
    "eat ate eaten eating",
    "make made making",
    "pay paid paying",
    "meet met meeting",
    "take took taken taking",
)
VERB_FORMS = stem_groups(_VERB_FORMS)


def verb_forms(verb: str) -> set[str]:
    s = stem(verb.lower())
    return {s} | set(VERB_FORMS.get(s, ()))


def said_stems(text: str) -> set[str]:
    """Every word of the text, stemmed, stop words too ("got" is one)."""
    return {stem(t) for t in re.findall(r"[\w']+", text.lower())} | set(words(text))


def _user_notes(notes: Sequence) -> list:
    return [n for n in notes if n.role == "user"] or list(notes)


def no_doer(question: str, notes: Sequence) -> bool:
    """A "who <verb>s ...?" question whose notes hold no turn saying the doing with a person's name
    beyond the question's ("Who plays drums in my band?" after "i play bass"): the honest reply is
    "I don't know". False for other questions or when there are no notes."""
    m = WHO_DOES.match(question)
    if m is None or not notes or m.group("verb").lower() in AUXILIARIES:
        return False
    # the doer may be said by role: "landlord is a guy called mr haddad" for "who owns my flat?"
    forms = (
        verb_forms(m.group("verb"))
        | _object_head(question[m.end() :])
        | DOERS.get(stem(m.group("verb").lower()), set())
    )
    return not any(
        forms & said_stems(n.content) and kind_beyond(n.content, "name", question) for n in _user_notes(notes)
    )


_BEFORE_PLACE = re.compile(r"(?i)\b(?:in|at|on|for|with|to|from|of|by|since|every)\b|[?!.,]")


def _object_head(rest: str) -> set[str]:
    """The head noun of what the doer does ("lessons" of "gives me my portuguese lessons", "drums" of
    "plays drums in my band"): the last content word before a preposition. A turn that names a
    person beside it says the doing in other words ("my tutor Anselmo does lessons with me")."""
    content = [w for w in words(_BEFORE_PLACE.split(rest, maxsplit=1)[0]) if w not in STOP_WORDS]
    return {content[-1]} if content else set()


def thing_not_said(question: str, notes: Sequence) -> bool:
    """A "what <head> did I <verb> ...?" question whose notes speak of its other words (the topic:
    "my grandad") but say neither the head (or a related word) nor the verb: they hold another
    attribute of the topic, not the asked thing. False when the question has no other words (then
    nothing tells what the notes are about), no notes, or a head that is a kind of answer
    (``kinds.expected_kind``)."""
    m = WHAT_DONE.match(question)
    if m is None or not notes or expected_kind(question) is not None:
        return False  # "What time do I have to be at the clinic?": the kind rules judge a time
    head = related({stem(m.group("head").lower())})
    forms = verb_forms(m.group("verb"))
    topic = related(set(words(m.group("rest"))) - STOP_WORDS - {stem(w) for w in TIME_NAMES})
    told = _user_notes(notes)
    if not topic or not any(topic & set(words(n.content)) for n in told):
        return False
    return not any((head | forms) & said_stems(n.content) for n in told)


def doers(notes: Sequence, told: Sequence, kind: str | None, question: str) -> list:
    """Asked a name by what the person does ("whos leading the choir?", ``related.DOERS``) and no note
    says one of the doers' roles: the first of the user's statements that says one and a name
    ("the conductor is this guy called lewis")."""
    if kind != "name":
        return []
    roles = set().union(*(DOERS.get(s, set()) for s in said_stems(question)))
    if not roles or any(roles & said_stems(n.content) for n in notes):
        return []
    have = {n.number for n in notes}
    weight = min((n.weight for n in notes), default=1.0)
    for c in told:
        if c.number not in have and roles & said_stems(c.content) and kind_beyond(c.content, kind, question):
            return [note_of(c, weight)]
    return []
