"""What a question asks for (its kind and head) and whether a text says the head.

A question asks for a **kind** of value (``kinds.expected_kind``: a name, an amount, a place, a
time, ...) of a **head** -- what it asks about: "girlfriend" in "What's my girlfriend called?",
"insurance quote" in "How much is my insurance quote?", "school" in "What school does Lysander go
to?", "move" in "Where did Ignatius move to?". The head's words are the question's content words,
less the kind's own ("called", "city", "how much"), the names it asks about ("Ignatius") and light
verbs ("go", "do"); a question left with none ("What's my name?", "How long have I been going
there?") asks the value alone.

A text says the head when it says one of its forms, a word said for it (``asked.SAME``,
``related.RELATED``, the role words of ``referents.ROLES``: "son" for "kid"; for a name, the doer of
a verb, ``related.DOERS``: "landlord" for "owns"), or a word the
sentence-embedding model puts close to it ("moving" for "relocating"): ``HEAD_SIMILARITY``, set on
the probe sets. Used by the answerability gate (``answerable``, ``binding``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np

from assistant.answering.asked import DETERMINERS, SAME
from assistant.answering.kinds import LEAD, TIME_NAMES, expected_kind
from assistant.answering.recase import ROLES as PERSON_WORDS
from assistant.answering.recase import TITLES
from assistant.answering.referents import ROLES, names
from assistant.answering.related import DOERS, RELATED
from assistant.retrieval.lexical import STOP_WORDS, WORD, stem, stem_groups, words

HEAD_SIMILARITY = (
    0.55  # cosine of two single words' MiniLM vectors: "moving"/"relocating" 0.71, "school"/"hamster" 0.33
)

# the words a kind of answer is asked with: they name the kind, not what it is of
_KIND_WORDS = {
    "name": "name names called call named nickname who whom",
    "clock": "time clock late early",
    "time": "when day days date dates month year weekday weekdays time",
    "place": "where place city town country village island state location located whereabouts",
    "colour": "colour color colours colors",
    "job": "job jobs title occupation profession career living work works working",
    "code": "code pin password passcode passphrase combination combo ref reference",
    "food": "food dish meal eat ate eating",
    "instrument": "instrument instruments",
    "amount": "amount much sum",
    "number": "number numbers digit digits age old many much long count",
}
KIND_WORDS = {kind: frozenset(stem(w) for w in ws.split()) for kind, ws in _KIND_WORDS.items()}
# verbs and adjectives that say nothing of what is asked ("Where am I going on my trip?": the trip)
LIGHT = frozenset(
    "go goes going went gone do does doing done get gets getting got gotten make makes making made have has having "
    "had be being been come comes coming came take takes taking took supposed happen happens happened again remind "
    "now please new latest last first next current these days need needs needed".split()
)
# the question words a noun phrase opens after ("what school", "whats my ...")
QUESTION_WORDS = frozenset("what which whats".split())
# question words typed without their apostrophe: no head word ("whos my boss?", "wheres the party?")
SPOKEN_QUESTION_WORDS = frozenset("whos wheres whens hows whys".split())
NUMERAL = re.compile(r"(?i)^(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred)$")
ROLE_GROUPS = stem_groups(ROLES)
ROLE_WORDS = frozenset(w for group in ROLES for w in group.split()) | PERSON_WORDS | TITLES
# a noun and the verb it is said with, whose stems differ ("my flight" / "I'm flying"), and verbs said
# for one another
DERIVED = stem_groups(
    (
        "fly flying flew flown flight flights",
        "marry married marrying wedding",
        "born birthday",
        "live lives living moved moving relocated relocating",  # who moved to a town lives there
        "cost costs price paid pay spent spend",
        "practise practises practised practising practice practices practiced practicing",
    )
)


@dataclass(frozen=True)
class Asked:
    """What a question asks for: the kind of value and the head's words (stem -> the word as typed;
    empty: the value alone is asked for); ``thing``: the head's stems said as a noun ("my insurance
    quote", "what school"), not a verb ("move", "stay")."""

    kind: str
    head: dict[str, str]
    thing: frozenset[str] = frozenset()


def asked_for(question: str) -> Asked | None:
    """The kind and head of a question, or None when it asks for no kind of value.

    For a name the thing is the noun the name is of: the last noun of the first noun phrase, not
    the words narrowing it or whose it is ("teacher" in "whats my pottery teacher's name?",
    "doctor" in "the name of my pup's doctor", "restaurant" in "the name of the restaurant my
    husband works at"): a name bound to "pottery" or "husband" there names something else."""
    kind = expected_kind(question)
    if kind is None:
        return None
    own = names(question) | {w.lower() for w in re.findall(r"\b[A-Z][\w'-]*", question[1:])}
    generic = KIND_WORDS.get(kind, frozenset()) | {stem(w) for w in TIME_NAMES}
    head: dict[str, str] = {}
    thing, noun = set(), False
    phrases: list[list[str]] = [[]]  # the noun phrases' thing stems, in order
    lead = re.match(rf"(?i){LEAD}", question)  # "ok wait, where ...": no word of the head
    for token in WORD.findall(question[lead.end() :].lower()):
        plain = token.removesuffix("'s")
        s = stem(plain)
        if plain in DETERMINERS or plain in QUESTION_WORDS or token.endswith("'s"):
            if not token.endswith("'s") or not noun:
                phrases.append([])  # "the restaurant | my husband works at": another phrase
            noun = True  # a noun phrase opens: "my insurance quote", "the tour company", "what school"
            if not token.endswith("'s"):
                continue
        said_nothing = plain in STOP_WORDS or plain in LIGHT or plain.isdigit() or NUMERAL.match(plain)
        if len(plain) < 2 or said_nothing or plain in own or s in generic or plain in SPOKEN_QUESTION_WORDS:
            noun = noun and s in generic and plain not in STOP_WORDS  # "what time is ...": the phrase goes on
            if not noun:
                phrases.append([])
            continue
        head.setdefault(s, plain)
        if noun:
            thing.add(s)
            if kind == "name" and plain.endswith("ing"):
                phrases.append([])  # "the guy fixing my sink": a verb ends the noun phrase
            else:
                phrases[-1].append(s)
    if kind == "name":
        first = next((p for p in phrases if p), None)
        thing = {first[-1]} if first else thing
    return Asked(kind, head, frozenset(thing))


def forms(s: str) -> set[str]:
    """A head word's stem and the stems of the words said for it."""
    return {s} | set(SAME.get(s, ())) | set(RELATED.get(s, ())) | set(ROLE_GROUPS.get(s, ())) | set(DERIVED.get(s, ()))


def asked_forms(s: str, asked: Asked) -> set[str]:
    """A head word's forms (``forms``); for a person's name, also the roles of whoever does the verb
    ("landlord" for "who owns my flat?", ``related.DOERS``)."""
    return forms(s) | set(DOERS.get(s, ())) if asked.kind == "name" else forms(s)


def roots(stems: Collection[str]) -> set[str]:
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
    if any(roots(asked_forms(s, asked)) & roots(stems) for s in asked.head):
        return True
    typed = {t for t in WORD.findall(text.lower()) if t not in STOP_WORDS and len(t) > 2 and not t.isdigit()}
    return any(similar.close(w, typed - _other_roles(w)) for w in asked.head.values())


def _other_roles(word: str) -> frozenset[str]:
    """The person words a head word may not be close to: a role is said in its own words, or is
    another person ("my mum Clotilde" is no answer to "What's my dad's name?", though the two words'
    vectors are close)."""
    return ROLE_WORDS if word in ROLE_WORDS else frozenset()


def is_head_word(token: str, stems: Collection[str], asked: Asked, similar: Similar) -> bool:
    """Is one word of a text (lower case) a word of the head's stems ``stems`` (a form, a word for
    it, or a close word)?"""
    plain = token.removesuffix("'s")
    mine = roots({stem(plain)})
    if any(roots(asked_forms(s, asked)) & mine for s in stems):
        return True
    if plain in STOP_WORDS or len(plain) < 3 or plain.isdigit():
        return False
    return any(similar.close(w, {plain} - _other_roles(w)) for w in (asked.head.get(s, s) for s in stems))
