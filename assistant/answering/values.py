"""The values of a slot's kind a text holds (names, numbers, colours, places), and whether a
value is another noun's ("my sister Greta" asked about the baby, "number 27" asked for a code)."""

from __future__ import annotations

import re

from assistant.answering.asked import (
    COLOUR_HEADS,
    NAME_HEADS,
    NUMBER_HEADS,
    PLACE_HEADS,
    TOKEN,
    Slot,
    plain_token,
    role_forms,
)
from assistant.answering.kinds import COLOURS, LOCATIVE, TIME_NAMES
from assistant.answering.note import OPENERS
from assistant.answering.referents import SAYS_ROLE, SLOT
from assistant.retrieval.lexical import STOP_WORDS, stem

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
    "table desk terminal level floor spot plate registration".split()
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


def token_stems(text: str) -> set[str]:
    return {stem(plain_token(t)[0]) for t in TOKEN.findall(text)}


AFTER_PLACE_WORD = re.compile(r"(?i)\b(?:in|to|from|near)\s+$")


def values_in(text: str, slot: Slot, opening: bool = True) -> list[tuple[str, int]]:
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
    names_found = _names_in(text, opening)
    if slot.head in NAME_HEADS:
        # "a cafe in Hobart" names the town, not the cafe: a name after "in", "to" or "from" is a place,
        # unless the thing asked of follows it ("they've put him in Hedgehogs class": the class's name)
        names_found = [
            (w, at)
            for w, at in names_found
            if not AFTER_PLACE_WORD.search(text[:at]) or _names_the_owner(text, at + len(w), slot)
        ]
    found += names_found
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


def _names_the_owner(text: str, end: int, slot: Slot) -> bool:
    """Is the word right after a name (ending at ``end``) the thing whose name is asked?"""
    after = TOKEN.findall(text[end:])
    return bool(after) and stem(plain_token(after[0])[0]) in slot.owner


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
        if (before and plain_token(before[-1])[0] in LABELS) or PLACE_CODE.match(m.group(0)):
            found.append((m.group(0).lower(), m.start()))
    return found


def _names_in(text: str, opening: bool) -> list[tuple[str, int]]:
    """Capitalised words that may be names (``opening``: a word opening a sentence may be one)."""
    found = []
    for m in re.finditer(r"\b[A-Z][\w'-]+", text):
        w = plain_token(m.group(0))[0]
        if w in STOP_WORDS or w in OPENERS or w in INTERJECTIONS or w in TIME_NAMES or CONTRACTION.search(w):
            continue
        first = m.start() == 0 or bool(re.search(r"[.!?]\s*$", text[: m.start()]))
        if first and (not opening or re.search(r"(ed|ing|ly|s)$", w)):
            continue  # "Spent the whole day ...": a verb or adverb opening the sentence
        found.append((w, m.start()))
    return found


def _named_for_another(before: str, slot: Slot) -> bool:
    """Asked for a person's or pet's name ("What's my kid called?"), is the nearest person or pet
    said before the value in its sentence another one ("my son Lysander just got a hamster and he
    named it Professor Whiskers": the hamster's name, not the son's)?"""
    if slot.head not in NAME_HEADS or not {stem(w) for w in ROLE_WORDS} & slot.owner:
        return False
    sentence = re.split(r"[.!?;]\s", before)[-1]
    roles = [w for w in (plain_token(t)[0] for t in TOKEN.findall(sentence)) if w in ROLE_WORDS]
    return bool(roles) and stem(roles[-1]) not in slot.owner | slot.forms | slot.around


def _own_words_between(between: str, slot: Slot) -> bool:
    """Does the asked slot's owner come between a "my X is" and a value? Then the value is bound to
    it, the nearer noun ("my gym class is on mondays w a trainer named Kofi": the trainer's). Not
    the head's own forms: "my swim club is called Otters" names the club."""
    return any(stem(plain_token(t)[0]) in slot.owner for t in TOKEN.findall(between))


def anothers(text: str, value: str, at: int, slot: Slot) -> bool:
    """Is the value another noun's: in apposition to a role the slot is not about ("my sister
    Greta" for the baby), named after another person or pet (``_named_for_another``), or the value
    of a "my X is" slot with another head ("my favourite band is Khruangbin" for the movie) with
    none of the asked slot's own words nearer to it?"""
    before = TOKEN.findall(text[:at])
    if _named_for_another(text[:at], slot):
        return True
    if before:
        prev = plain_token(before[-1])[0]
        label = prev in LABELS and slot.head not in PLACE_HEADS  # "locker 318" is a place
        if (prev in ROLE_WORDS or label) and stem(prev) not in slot.owner | slot.forms | slot.around:
            return True
    for m in SLOT.finditer(text):
        if (
            m.end() <= at
            and not CLAUSE_END.search(text[m.end() : at])
            and not _own_words_between(text[m.end() : at], slot)
        ):
            said = m.group(1).lower().split()
            head = stem(plain_token(said[-1])[0])
            if head not in slot.forms | slot.owner and not role_forms(said) & slot.owner:
                return True
    return False
