"""The slot a question asks to have filled, and whether a turn fills it.

"What's my blood type?" asks for the value of one slot: the noun phrase after "what is" (or the
head and owner of "What breed is my dog?"), with its **head** ("type"), the words that narrow it
(**modifiers**: "blood") and whose it is (the **owner**: "the baby's name", "the code for my
locker", "my parrot called"). A turn that speaks of the slot's owner or modifiers but does not fill
its head is about a neighbouring slot, and quoting it answers a question that was not asked:

* "I donated blood yesterday." says "blood", not the blood *type*;
* "My favourite band is Khruangbin." fills "favourite band", not "favourite movie";
* "I have two cats." speaks of the cats but names none of them;
* "My sister Greta just had a baby.": Greta is the sister's name, not the baby's.

A turn **fills** the slot when it holds a value of the head's kind (a name for a name, a number for
a number, an age or a code, a colour for a colour, a name or number for any other head) that is not
another noun's: not in apposition to a different person, pet or label ("my sister Greta" asked
about the baby, "number 27" asked for a code) and not the value of a different "my X is" slot ("my
favourite band is Khruangbin" asked about the movie). A head that is not itself a kind of value
("movie", "type", "hobby") is filled too by the turn saying it, in any form (``words`` stems it) or
a word for it ("film" for "movie"): "My favourite movie is the one with the whales.", or by saying
what the owner is ("My dog is a beagle." for "What breed is my dog?"). A name, number or colour
needs the value: "I forgot my dog's name." does not fill it.

A model answer is held to the same slot: every value it gives for it must be that slot's value in
one of its notes (``grounded_for_slot``).

A turn that says none of the slot's words is not judged: people state facts indirectly ("Spent the
whole Saturday at the pottery wheel" for "What's my hobby?"), and nothing here can tell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from assistant.answering.kinds import COLOURS, LOCATIVE, TIME_NAMES, expected_kind
from assistant.answering.note import OPENERS
from assistant.answering.referents import SAYS_ROLE, SLOT, names
from assistant.retrieval.lexical import STOP_WORDS, stem, words

# "What's my X?", "What are my cats' names?", "what is the name of my cat": the copula right after
# "what" (not "What day is my haircut?", where the kind of answer is the question's own word)
ASKS_SLOT = re.compile(
    r"(?i)^\s*(?:what|which)(?:'s|s|\u2019s|\s+is|\s+are|\s+was|\s+were)\s+(?P<phrase>[^?!.,;:]+?)"
    r"(?:\s+(?:again|now|then|please))?\s*[?!.]*\s*$"
)
# "Where is Aditi's wedding?", "Where are my keys?": a place is asked for, the owner after the copula
ASKS_WHERE = re.compile(
    r"(?i)^\s*where(?:'s|s|\u2019s|\s+is|\s+are|\s+was|\s+were)\s+(?P<phrase>[^?!.,;:]+?)"
    r"(?:\s+(?:again|now|then|please))?\s*[?!.]*\s*$"
)
# "What breed is my dog?", "Which flavour was the cake?": the head before the copula, the owner after
ASKS_OF = re.compile(
    r"(?i)^\s*(?:what|which)\s+(?:(?:kind|type|sort)\s+of\s+)?(?P<head>[a-z]+)\s+(?:is|are|was|were)\s+"
    r"(?P<phrase>[^?!.,;:]+?)\s*[?!.]*\s*$"
)
DETERMINERS = frozenset("my our the his her their a an this that".split())  # not "your": the assistant's
JOINS = frozenset("of for at on in".split())  # "the code for my locker", "the wifi password at the cabin"
MAX_WORDS = 5
TOKEN = re.compile(r"[\w'\u2019-]+")

# words for the same head ("film" fills "movie"); each group by its stems
_SAME = (
    "name names called named call nickname",
    "movie movies film films flick",
    "phone mobile cell",
    "job work works profession occupation career trade",
    "colour color colours colors",
    "age old",
    "birthday born",
    "address live lives",
    "code pin password passcode combination",
)
SAME: dict[str, frozenset[str]] = {}
for _group in _SAME:
    _stems = frozenset(stem(w) for w in _group.split())
    for _s in _stems:
        SAME[_s] = SAME.get(_s, frozenset()) | _stems

NAME_HEADS = frozenset(stem(w) for w in "name names nickname called named".split())
NUMBER_HEADS = frozenset(stem(w) for w in "number age pin code passcode digits count size".split())
COLOUR_HEADS = frozenset(stem(w) for w in "colour color".split())
PLACE_HEADS = frozenset(stem(w) for w in "place venue location whereabouts".split())
VALUED = NAME_HEADS | NUMBER_HEADS | COLOUR_HEADS | PLACE_HEADS  # filled by a value of their kind, not by their word
NUMBER = re.compile(
    r"(?i)\b\w*\d\w*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred)\b"
)
# people and pets a name stands beside ("my sister Greta", "our dog Rex")
ROLE_WORDS = frozenset(w for group in SAYS_ROLE.values() for w in group) | frozenset(
    "friend baby kid child colleague teacher coach flatmate roommate parrot rabbit bunny hamster "
    "horse puppy kitten fish bird".split()
)
# capitalised words that open chat and name nothing ("Anyway, grey day today.")
INTERJECTIONS = frozenset(
    "anyway anyways ugh hmm hm wow oh yeah yep nope cool nice awesome good lol haha btw also still just "
    "please morning evening night cheers bye goodbye sadly luckily honestly".split()
)
# "is a beagle", "is an accountant", "is the Brompton": a noun phrase after "my X is"
WHAT_IT_IS = re.compile(r"(?:a|an|the)\s+\w|[A-Z]")
# what follows "my dog" and is no name ("I walk my dog twice a day")
ADVERBS = frozenset("twice thrice always often never sometimes usually every daily weekly everywhere around".split())
# a name said as one, lower-case too: "called rafa", "my bf kwame"
NAME_CUE = re.compile(
    r"(?i)\b(?:called|named|name is|name's|names are)\s+(?P<cued>[\w'-]+)"
    rf"|\b(?:my|our)\s+(?:{'|'.join(sorted(ROLE_WORDS))})\s+(?P<who>[a-z][\w'-]+)"
)
CONTRACTION = re.compile(r"^i'|'(re|ve|ll|d|m)$|n't$")
# nouns a number or name stands after as its label ("number 27", "room 312", "gate C4")
LABELS = frozenset(
    "number no code pin room flat apartment gate platform seat locker bus line route door unit suite "
    "table desk terminal level floor spot".split()
)
CLAUSE_END = re.compile(r"[,;.!?]|\s(?:and|but)\s")
# a label asked as the head ("Which gate is my flight?") is filled only by the turn saying it ("gate B7"):
# the flight's time or city is not its gate
LABEL_HEADS = frozenset(stem(w) for w in LABELS - {"number", "no", "code", "pin"})
# a place said without a name or a determiner ("at home", "upstairs")
BARE_PLACE = re.compile(
    r"(?i)\b(?:at|from|in)\s+(?:home|work|school|church|college|uni|university|hospital|town|bed|class)\b"
    r"|\b(?:upstairs|downstairs|outside|indoors|outdoors|abroad|overseas|nearby|next door)\b"
)
# a number that names a place by itself ("P3", "14C"), not a date or a time ("19th", "6pm")
PLACE_CODE = re.compile(r"(?i)^(?=.*\d)(?=.*[a-z])(?!\d+(?:st|nd|rd|th|am|pm|h|s)$)[a-z0-9]+$")


@dataclass(frozen=True, slots=True)
class Slot:
    """What a question asks for: the head word's stem (``head``), its forms (``forms``), the stems
    of the modifiers and the owner (``around``: the words a neighbouring slot shares) and of the
    owner alone, with its other role words (``owner``)."""

    head: str
    forms: frozenset[str]
    around: frozenset[str]
    owner: frozenset[str]

    @property
    def words(self) -> frozenset[str]:
        return self.forms | self.around


def _stems(tokens: Iterable[str]) -> set[str]:
    return {stem(t) for t in tokens}


def _role_forms(tokens: Iterable[str]) -> set[str]:
    """Stems of the tokens and of the other words for a role ("boyfriend": "bf", "partner")."""
    out = set()
    for t in tokens:
        s = stem(t)
        out |= {s} | _stems(SAYS_ROLE.get(s, ())) | _stems(SAYS_ROLE.get(t, ()))
    return out


def _plain(token: str) -> tuple[str, bool]:
    """A token without its possessive ending, and whether it had one ("cats'", "Theo's")."""
    low = token.lower().replace("\u2019", "'")
    for end in ("'s", "'"):
        if low.endswith(end) and len(low) > len(end):
            return low[: -len(end)], True
    return low, False


def asked_slot(question: str) -> Slot | None:
    """The slot of a "what is <noun phrase>?" question, or None when the question is not of that
    shape (a verb, a relative clause or a stop word in the phrase: "What is my plan for tomorrow?"
    keeps its "for tomorrow" as an owner only when it opens with "my", "the" or a possessive)."""
    m = ASKS_SLOT.match(question)
    if m is None:
        return _head_of(question) or _where_of(question)
    tokens = TOKEN.findall(m.group("phrase"))
    if not tokens or len(tokens) > MAX_WORDS + 2:
        return None
    owner: list[str] = []
    join = next((i for i, t in enumerate(tokens) if t.lower() in JOINS), None)
    if join is not None:
        after = tokens[join + 1 :]
        if not after or not (after[0].lower() in DETERMINERS or _plain(after[0])[1]):
            return None
        owner = [_plain(t)[0] for t in after if t.lower() not in DETERMINERS]
        tokens = tokens[:join]
    first = _plain(tokens[0])
    if not (tokens[0].lower() in DETERMINERS or first[1]):
        return None  # "What is love?", "What's happening?"
    plain = [_plain(t) for t in tokens if t.lower() not in DETERMINERS]
    if plain and plain[-1][0] in ("called", "named"):
        # "What is my parrot called?": the parrot's name
        owner += [w for w, _ in plain[:-1]]
        plain = [("name", False)]
    else:
        cut = max((i for i, (_, own) in enumerate(plain) if own), default=-1)
        owner += [w for w, _ in plain[: cut + 1]]
        plain = plain[cut + 1 :]
    content = [w for w, _ in plain] + owner
    if not plain or len(content) > MAX_WORDS or any(w in STOP_WORDS for w in content):
        return None
    head = stem(plain[-1][0])
    forms = SAME.get(head, frozenset()) | {head}
    own = _role_forms(owner)
    around = (_role_forms(w for w, _ in plain[:-1]) | own) - forms - _stems(STOP_WORDS)
    return Slot(head, frozenset(forms), frozenset(around), frozenset(own))


def _head_of(question: str) -> Slot | None:
    """The slot of a "what <head> is <owner>?" question ("What breed is my dog?"), when the head is
    not a kind of answer the question's own words already ask for ("What day is my haircut?" asks
    for a day: ``kinds.expected_kind``)."""
    m = ASKS_OF.match(question)
    if m is None or expected_kind(question) is not None:
        return None
    tokens = TOKEN.findall(m.group("phrase"))
    if not tokens or not (tokens[0].lower() in DETERMINERS or _plain(tokens[0])[1]):
        return None
    owner = [_plain(t)[0] for t in tokens if t.lower() not in DETERMINERS]
    head = m.group("head").lower()
    if not owner or len(owner) > MAX_WORDS or any(w in STOP_WORDS for w in [*owner, head]):
        return None
    if len(owner) > 1 and owner[-1].endswith("ing"):
        return None  # "What car is my brother driving?": a verb, not a noun phrase
    forms = SAME.get(stem(head), frozenset()) | {stem(head)}
    own = _role_forms(owner)
    return Slot(stem(head), frozenset(forms), frozenset(own - forms), frozenset(own))


def _where_of(question: str) -> Slot | None:
    """The slot of a "where is <owner>?" question ("Where is Aditi's wedding?", "Where are my
    keys?"): a place, of the owner; not "Where is Aditi?" (no "my", "the" or possessive) or "Where
    is my sister moving?" (a verb)."""
    m = ASKS_WHERE.match(question)
    if m is None:
        return None
    tokens = TOKEN.findall(m.group("phrase"))
    if not tokens or not (tokens[0].lower() in DETERMINERS or _plain(tokens[0])[1]):
        return None
    owner = [_plain(t)[0] for t in tokens if t.lower() not in DETERMINERS]
    if not owner or len(owner) > MAX_WORDS or any(w in STOP_WORDS for w in owner):
        return None
    if len(owner) > 1 and re.search(r"(ing|ed)$", owner[-1]) and not _plain(tokens[-2])[1]:
        return None  # "Where is my brother staying?" (not "Aditi's wedding", a noun after a possessive)
    own = _role_forms(owner)
    return Slot(stem("place"), PLACE_HEADS, frozenset(own - PLACE_HEADS), frozenset(own))


def speaks_of(text: str, slot: Slot) -> bool:
    """Does the turn say a word of the slot (its head, a modifier, the owner)?"""
    return bool(set(words(text)) & slot.words) or bool(_tokens(text) & slot.words)


def _tokens(text: str) -> set[str]:
    return {stem(_plain(t)[0]) for t in TOKEN.findall(text)}


def _values(text: str, slot: Slot, opening: bool = True) -> list[tuple[str, int]]:
    """Values of the head's kind in the turn, with where they start (``opening``: a capitalised
    word opening a sentence may be a name: "Biscuit chewed my slippers")."""
    if slot.head in COLOUR_HEADS:
        return [(m.group(0).lower(), m.start()) for m in COLOURS.finditer(text)]
    if slot.head in PLACE_HEADS:
        return _places(text, opening)
    found = []
    if slot.head not in NAME_HEADS:
        found += [(m.group(0).lower(), m.start()) for m in NUMBER.finditer(text)]
    if slot.head in NUMBER_HEADS:
        return found
    found += _names_in(text, opening)
    for m in NAME_CUE.finditer(text):
        w = m.group("cued") or m.group("who")
        low = w.lower()
        if (
            low not in STOP_WORDS
            and low not in TIME_NAMES
            and low not in INTERJECTIONS | ADVERBS
            and not re.search(r"(ed|ing|ly)$", low)
        ):
            found.append((w.lower(), m.start("cued") if m.group("cued") else m.start("who")))
    return found


def _places(text: str, opening: bool) -> list[tuple[str, int]]:
    """Values of a place in the turn: a name ("Porto", "Rua Augusta"), a place said with a
    preposition ("at the cafe", "in my car", "at home"), a number after a label ("locker 318",
    "level P3") or a code of letters and digits ("C42"); not a date's or a time's number ("on 12
    June", "at 14:05")."""
    found = [(w, at) for w, at in _names_in(text, opening)]
    for m in LOCATIVE.finditer(text):
        noun = re.match(r"[\w'-]+", text[m.end() - 1 :])
        found.append((noun.group(0).lower(), m.start()))
    found += [(m.group(0).split()[-1].lower(), m.start()) for m in BARE_PLACE.finditer(text)]
    for m in NUMBER.finditer(text):
        before = TOKEN.findall(text[: m.start()])
        if (before and _plain(before[-1])[0] in LABELS) or PLACE_CODE.match(m.group(0)):
            found.append((m.group(0).lower(), m.start()))
    return found


def _names_in(text: str, opening: bool) -> list[tuple[str, int]]:
    """Capitalised words that may be names (``opening``: a word opening a sentence may be one)."""
    found = []
    for m in re.finditer(r"\b[A-Z][\w'-]+", text):
        w = _plain(m.group(0))[0]
        if w in STOP_WORDS or w in OPENERS or w in INTERJECTIONS or w in TIME_NAMES or CONTRACTION.search(w):
            continue
        first = m.start() == 0 or bool(re.search(r"[.!?]\s*$", text[: m.start()]))
        if first and (not opening or re.search(r"(ed|ing|ly|s)$", w)):
            continue  # "Spent the whole day ...": a verb or adverb opening the sentence
        found.append((w, m.start()))
    return found


def _anothers(text: str, value: str, at: int, slot: Slot) -> bool:
    """Is the value another noun's: in apposition to a role the slot is not about ("my sister
    Greta" for the baby), or the value of a "my X is" slot with another head ("my favourite band
    is Khruangbin" for the movie)?"""
    before = TOKEN.findall(text[:at])
    if before:
        prev = _plain(before[-1])[0]
        label = prev in LABELS and slot.head not in PLACE_HEADS  # "locker 318" is a place
        if (prev in ROLE_WORDS or label) and stem(prev) not in slot.owner | slot.forms | slot.around:
            return True
    for m in SLOT.finditer(text):
        if m.end() <= at and not CLAUSE_END.search(text[m.end() : at]):
            said = m.group(1).lower().split()
            head = stem(_plain(said[-1])[0])
            if head not in slot.forms | slot.owner and not _role_forms(said) & slot.owner:
                return True
    return False


def _states_owner(text: str, slot: Slot) -> bool:
    """Does the turn say what the owner is ("My dog is a beagle." for "What breed is my dog?"), not
    what it does ("My brother is coming over.")?"""
    for m in SLOT.finditer(text):
        said = m.group(1).lower().split()
        if stem(_plain(said[-1])[0]) in slot.owner and WHAT_IT_IS.match(text[m.end() :]):
            return True
    return False


def fills(text: str, slot: Slot, question: str = "") -> bool:
    """Does the turn fill the slot: say its head (in a form or a word for it), or hold a value of
    its kind that is not another noun's (beyond the names the question says itself)?"""
    said = (set(words(text)) | _tokens(text)) & slot.forms
    if slot.head in LABEL_HEADS:
        return bool(said)  # "gate B7": a label is filled where it is said
    if slot.head not in VALUED and (said or _states_owner(text, slot)):
        return True
    asked = names(question) if question else frozenset()
    opening = speaks_of(text, slot)
    return any(v not in asked and not _anothers(text, v, at, slot) for v, at in _values(text, slot, opening))


def judged(notes: Sequence, question: str) -> tuple[list, bool]:
    """The notes an answer to ``question`` may stand on, and whether the honest reply is "I don't
    know" (``notes``: anything with ``role`` and ``content``, best first, returned in their order).

    A note that speaks of the asked slot without filling it is left out: neither a quote of it nor
    a model answer naming its values answers the question ("Greta" is the sister's, not the baby's).
    "I don't know" when a note speaks of the slot and none fills it -- the user's statements, or,
    without any, the assistant's turns (the user's own words are the facts). A question of no slot's
    shape, or notes that say none of its words, keep every note and decide nothing."""
    slot = asked_slot(question)
    if slot is None:
        return list(notes), False
    speaking = [n for n in notes if speaks_of(n.content, slot)]
    if not speaking:
        return list(notes), False
    filling = [n for n in notes if fills(n.content, slot, question)]
    told = [n for n in filling if n.role == "user"]
    if not (told if any(n.role == "user" for n in notes) else filling):
        return [], True
    beside = {id(n) for n in speaking} - {id(n) for n in filling}
    return [n for n in notes if id(n) not in beside], False


def slot_values(notes: Sequence, slot: Slot) -> set[str]:
    """The slot's values in the notes: of the head's kind and not another noun's."""
    return {v for n in notes for v, at in _values(n.content, slot) if not _anothers(n.content, v, at, slot)}


def values_said(answer: str, slot: Slot) -> set[str]:
    """The values of the slot's kind an answer gives."""
    return {v for v, _ in _values(answer, slot)}


def grounded_for_slot(answer: str, notes: Sequence, question: str) -> bool:
    """Does every value the answer gives for the asked slot come from a note, as that slot's value
    and not another noun's? ("The baby's name is Greta." from "My sister Greta just had a baby." does
    not: Greta is the sister's.) True when the question asks for no slot."""
    slot = asked_slot(question)
    if slot is None:
        return True
    return values_said(answer, slot) - names(question) <= slot_values(notes, slot)
