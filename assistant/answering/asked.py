"""The slot a question asks to have filled: its head, the words that narrow it, its owner.

"What's my blood type?" asks for the value of one slot: the noun phrase after "what is" (or the
head and owner of "What breed is my dog?", the place of "Where are my keys?"), with its **head**
("type"), the words that narrow it (**modifiers**: "blood") and whose it is (the **owner**: "the
baby's name", "the code for my locker", "my parrot called"). Whether a turn fills it:
``assistant.answering.slots``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from assistant.answering.kinds import expected_kind
from assistant.answering.referents import SAYS_ROLE
from assistant.retrieval.lexical import STOP_WORDS, stem, stem_groups

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
SAME = stem_groups(_SAME)

NAME_HEADS = frozenset(stem(w) for w in "name names nickname called named".split())
NUMBER_HEADS = frozenset(stem(w) for w in "number age pin code passcode digits count size".split())
COLOUR_HEADS = frozenset(stem(w) for w in "colour color".split())
PLACE_HEADS = frozenset(stem(w) for w in "place venue location whereabouts".split())
VALUED = NAME_HEADS | NUMBER_HEADS | COLOUR_HEADS | PLACE_HEADS  # filled by a value of their kind, not by their word


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


# every word of a role group to all the groups it is in ("kid": the son's and the daughter's words)
_ROLE_OF: dict[str, set[str]] = {}
for _words in SAYS_ROLE.values():
    for _w in _words:
        _ROLE_OF.setdefault(_w, set()).update(_words)


def role_forms(tokens: Iterable[str]) -> set[str]:
    """Stems of the tokens and of the other words for a role ("boyfriend": "bf", "partner"; "kid":
    "son", "daughter")."""
    out = set()
    for t in tokens:
        s = stem(t)
        out |= {s} | _stems(SAYS_ROLE.get(s, ())) | _stems(SAYS_ROLE.get(t, ())) | _stems(_ROLE_OF.get(t, ()))
    return out


def plain_token(token: str) -> tuple[str, bool]:
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
        if not after or not (after[0].lower() in DETERMINERS or plain_token(after[0])[1]):
            return None
        owner = [plain_token(t)[0] for t in after if t.lower() not in DETERMINERS]
        tokens = tokens[:join]
    first = plain_token(tokens[0])
    if not (tokens[0].lower() in DETERMINERS or first[1]):
        return None  # "What is love?", "What's happening?"
    plain = [plain_token(t) for t in tokens if t.lower() not in DETERMINERS]
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
    own = role_forms(owner)
    around = (role_forms(w for w, _ in plain[:-1]) | own) - forms - _stems(STOP_WORDS)
    return Slot(head, frozenset(forms), frozenset(around), frozenset(own))


def _head_of(question: str) -> Slot | None:
    """The slot of a "what <head> is <owner>?" question ("What breed is my dog?"), when the head is
    not a kind of answer the question's own words already ask for ("What day is my haircut?" asks
    for a day: ``kinds.expected_kind``)."""
    m = ASKS_OF.match(question)
    if m is None or expected_kind(question) is not None:
        return None
    tokens = TOKEN.findall(m.group("phrase"))
    if not tokens or not (tokens[0].lower() in DETERMINERS or plain_token(tokens[0])[1]):
        return None
    owner = [plain_token(t)[0] for t in tokens if t.lower() not in DETERMINERS]
    head = m.group("head").lower()
    if not owner or len(owner) > MAX_WORDS or any(w in STOP_WORDS for w in [*owner, head]):
        return None
    if len(owner) > 1 and owner[-1].endswith("ing"):
        return None  # "What car is my brother driving?": a verb, not a noun phrase
    forms = SAME.get(stem(head), frozenset()) | {stem(head)}
    own = role_forms(owner)
    return Slot(stem(head), frozenset(forms), frozenset(own - forms), frozenset(own))


def _where_of(question: str) -> Slot | None:
    """The slot of a "where is <owner>?" question ("Where is Aditi's wedding?", "Where are my
    keys?"): a place, of the owner; not "Where is Aditi?" (no "my", "the" or possessive) or "Where
    is my sister moving?" (a verb)."""
    m = ASKS_WHERE.match(question)
    if m is None:
        return None
    tokens = TOKEN.findall(m.group("phrase"))
    if not tokens or not (tokens[0].lower() in DETERMINERS or plain_token(tokens[0])[1]):
        return None
    owner = [plain_token(t)[0] for t in tokens if t.lower() not in DETERMINERS]
    if not owner or len(owner) > MAX_WORDS or any(w in STOP_WORDS for w in owner):
        return None
    if len(owner) > 1 and re.search(r"(ing|ed)$", owner[-1]) and not plain_token(tokens[-2])[1]:
        return None  # "Where is my brother staying?" (not "Aditi's wedding", a noun after a possessive)
    own = role_forms(owner)
    return Slot(stem("place"), PLACE_HEADS, frozenset(own - PLACE_HEADS), frozenset(own))
