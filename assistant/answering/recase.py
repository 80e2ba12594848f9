"""Names typed in lower case, capitalised for the answer rules.

People type their first messages in lower case ("my flatmate siobhan makes amazing pierogi", "the
bakery is in cuenca"), while the answer rules (``kinds``, ``values``, ``note.salient``) know a name by
its capital. ``recased`` gives the rules a view of a text in which the words its place marks as a
name are capitalised: the word after a person's role said as theirs ("my flatmate siobhan", "a guy
called yusuf", "her name is clementine", "dr okonkwo"), the word after a preposition of place that
is no common word ("in cuenca", "moving to coimbra") and someone's place ("at rosalind's"). Only
lower-case words change, letter for letter, so a quote taken from the view is the turn's own words
(``restore`` gives them back their case).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from assistant.answering.english import known_word
from assistant.answering.kinds import TIME_NAMES, TIME_WORDS
from assistant.answering.referents import ROLES as ROLE_GROUPS
from assistant.retrieval.lexical import STOP_WORDS, stem

# whose role a name follows: every word the answer rules have for a person or pet (``referents.ROLES``),
# and the people around one they do not list ("my flatmate siobhan", "a guy called yusuf")
ROLES = frozenset(w for group in ROLE_GROUPS for w in group.split()) | frozenset(
    """fiance fiancee fiancé fiancée kid child baby twin mam parent gran stepmum stepmom stepdad stepson stepdaughter
friend mate buddy pal bestie flatmate roommate housemate colleague coworker tutor nurse mechanic physio guy girl
man woman lady bloke dude rabbit bunny hamster horse parrot budgie tortoise turtle goldfish fish pony gecko
snake""".split()
)
PERSON_STEMS = frozenset(stem(w) for w in ROLES)
# a title before a name ("dr okonkwo", "prof aigerim")
TITLES = frozenset("dr doctor prof professor mr mrs ms miss mx sir madam auntie uncle aunt coach".split())
# the words a place's name follows
PLACE_BEFORE = frozenset("in from near around outside visiting visit".split())
# "to" names a place after a move ("moving to coimbra"), not before a verb ("nice to meet you")
MOVES = frozenset(
    """move moving moved fly flying flew travel traveling travelling travelled traveled trip went drive driving
drove head heading relocate relocating relocated holiday vacation way back return returning returned flight
train ticket tickets transferred transfer commute commuting emigrated emigrating""".split()
)
# common words that follow "in", "to", "from" and name no place ("in bed", "to work", "from scratch")
NOT_PLACES = frozenset(
    """bed town home work school class church hospital college uni university office love time fact
general case person advance charge trouble public private total particular order front line mind touch use
stock detail short doubt pain hand sight place turn fun dinner lunch breakfast brunch tea coffee sleep
bed hell heaven peace person tears shape debt luck danger control return addition theory practice season
progress half english french spanish german italian portuguese chinese japanese scratch nowhere everywhere
somewhere anywhere there here bits pieces prison jail court traffic bloom stock town city country hand
lockdown quarantine labour labor case spite favour favor common person secret silence finance marketing sales
retail insurance education hospitality construction tech it healthcare law banking admin management
engineering design research medicine nursing accounting logistics publishing media advertising year years
week weeks month months day days hour hours minute minutes ages tears pieces bits friends parts stages
outside inside behind beside near nearby opposite upstairs downstairs abroad overseas underneath""".split()
)
# words that follow a role and name no one: verbs without a telltale ending, adverbs, adjectives
NOT_NAMES = frozenset(
    """last next told said got get gets go goes went come came made make take took gave give saw see left bought found
thought think knew know felt feel kept sent brought wants want needs need likes like loves love hates
hate always never also still often sometimes even already actually really usually finally recently
literally super pretty quite very basically totally kinda sorta probably maybe well too now back and or
but who which that got isn't wasn't can't won't doesn't didn't hasn't haven't just only new old little
big best older younger oldest youngest twin twins lives works says has had does did can could would
should will might must""".split()
) | frozenset(  # contractions typed without the apostrophe ("my aunt cant make the 21st")
    """cant wont dont didnt doesnt isnt wasnt arent werent couldnt shouldnt wouldnt hasnt havent hadnt aint
mustnt neednt im ive youre youve theyre theyve hes shes thats whats theres""".split()
)


def _lower_word(word: str) -> bool:
    """A word of lower-case letters, in any alphabet ("siobhán", "zoë" and "nguyễn" are names too)."""
    return word[:1].isalpha() and word.islower() and all(ch.isalpha() or ch in "'-" for ch in word)


_AFTER_NAME = frozenset("is was has had just will and , . ! ? ; : ( ) 's".split())


def _may_name(word: str) -> bool:
    """A word that can be a name: no common word, day, month or verb form ("siobhan", not "makes")."""
    return (
        len(word) > 1
        and word not in STOP_WORDS
        and word not in TIME_NAMES
        and not TIME_WORDS.fullmatch(word)
        and word not in ROLES
        and word not in NAMED_ROLES
        and word not in NOT_NAMES
        and not re.search(r"(ing|ed|ly)$", word)
    )


def named(text: str) -> set[str]:
    """The lower-case words of ``text`` that its place marks as a name."""
    tokens = [(m.group(0), m.start()) for m in re.finditer(r"[\w'-]+|[.,;:!?()]", text)]
    found, called_the = set(), 0  # called_the: words so far of a name said "called the ..."
    for i in range(1, len(tokens)):
        word, before = tokens[i][0], tokens[i - 1][0].lower()
        two_before = tokens[i - 2][0].lower() if i >= 2 else ""
        bare = word.removesuffix("'s")
        if (
            _lower_word(word)
            and (
                (before == "the" and two_before in {"called", "named"} and _names_a_thing(tokens, i - 3))
                or 0 < called_the < 3
            )
            and bare not in STOP_WORDS | ROLES | TIME_NAMES
        ):
            # "a choir called the harbour voices", "a pub called the crooked lantern": every word of
            # the name, up to three ("crooked" too, which alone would read as a verb)
            found.add(bare)
            called_the += 1
            continue
        called_the = 0
        if not _lower_word(word) or not _may_name(bare):
            continue
        after = tokens[i + 1][0].lower() if i + 1 < len(tokens) else "."
        if after in VENUES and bare not in NOT_VENUE_NAMES and (before in _VENUE_AFTER or two_before in _VENUE_AFTER):
            found |= {bare, after}  # "started at greenfield primary", "at the riverside gym"
            continue
        if before in ROLES and two_before in {"my", "our", "his", "her", "their", "a", "the"}:
            # "my brother james is": a name; "my wife works in": a verb; "my neighbour dilys next door":
            # a name no English vocabulary has
            if not word.endswith("s") or after in _AFTER_NAME or not _known_verb(word):
                found.add(word.removesuffix("'s"))
        elif _full_name_of_role(tokens, i):
            # "my manager is priya raman, she ...": a first name and a surname said as who the role is
            found |= {bare, tokens[i + 1][0].lower()}
        elif _rare_name_of_role(tokens, i):
            found.add(bare)  # "my coach is bongani, he's tough"
        elif before in {"called", "named", "name's"} or (before in TITLES and two_before not in {"a", "the", "my"}):
            found.add(word.removesuffix("'s"))
        elif (before, two_before) in {("is", "name"), ("was", "name")} or (before == "at" and word.endswith("'s")):
            # "her name is clementine"; "at rosalind's": someone's place, a venue
            found.add(word.removesuffix("'s"))
        elif (before in PLACE_BEFORE or (before == "to" and two_before in MOVES)) and word not in NOT_PLACES:
            found.add(word.removesuffix("'s"))
    return found


OWNERS = frozenset({"my", "our", "his", "her", "their"})
# the roles a first name and a surname may be said of, beside ``ROLES`` ("the club secretary is bev hollis"):
# only in that shape, where a verb cannot pass for the name
NAMED_ROLES = frozenset(
    """secretary treasurer organiser organizer chair captain receptionist instructor trainer broker plumber
electrician builder cleaner nanny childminder sitter babysitter optician pharmacist surgeon midwife stylist
landlady handyman photographer agent consultant walker mover""".split()
)


_CLAUSE_ENDS = frozenset({",", ".", "!", "?", ";", ":", "and", "btw", "lol"})


def _said_of_role(tokens: list, i: int) -> bool:
    """Does ``tokens[i]`` follow a person's role said as theirs and "is" ("my coach is", "the club
    secretary is")?"""
    if i < 3:
        return False
    owner, role, verb = (tokens[i - k][0].lower() for k in (3, 2, 1))
    if owner not in OWNERS and i >= 4 and tokens[i - 4][0].lower() in OWNERS | {"the"} and _lower_word(owner):
        owner = "the"  # "the club secretary is bev hollis": a word narrowing the role
    return owner in OWNERS | {"the"} and role in ROLES | NAMED_ROLES and verb in {"is", "was"}


def _full_name_of_role(tokens: list, i: int) -> bool:
    """Does ``tokens[i]`` open a two-word name said as who a person's role is ("my manager is priya
    raman, ...")? Two name-like words and then the sentence or clause ends: one word after "is" may
    say how the person is ("my boss is nice"), a first name and a surname say who."""
    if i + 1 >= len(tokens) or not _said_of_role(tokens, i):
        return False
    nxt = tokens[i + 1][0]
    end = tokens[i + 2][0].lower() if i + 2 < len(tokens) else "."
    return _lower_word(nxt) and _may_name(nxt) and end in _CLAUSE_ENDS


def _known_verb(word: str) -> bool:
    """A word ending in "s" that the vocabulary has as it is or without its ending ("purrs")."""
    return any(known_word(w) for w in (word, word[:-1], word.removesuffix("es")))


def _rare_name_of_role(tokens: list, i: int) -> bool:
    """Is ``tokens[i]`` one word said as who a person's role is, and then the clause ends, a word
    no English vocabulary has ("my coach is bongani, he's tough"; not "my coach is tough")?"""
    end = tokens[i + 1][0].lower() if i + 1 < len(tokens) else "."
    return end in _CLAUSE_ENDS and _said_of_role(tokens, i) and not known_word(tokens[i][0].lower())


# a venue's kind after its name ("at greenfield primary", "at riverside park", "on elm st"): the name and the
# kind word, both capitalised
VENUES = frozenset(
    """primary academy school college university hospital clinic park street road lane avenue cafe café gym
studio library hall centre center stadium arena theatre theater church station market surgery pharmacy
mall st rd ave""".split()
)
# what stands before a venue's kind and is no name ("at the local school", "my old gym")
NOT_VENUE_NAMES = frozenset(
    """local new old big small nearby main primary secondary high little same other usual closest nearest
public private community medical dental sports city town village""".split()
)
_VENUE_AFTER = frozenset("at to in from near on".split())
# who calls ("I called the bank"): the word before "called" that makes it a verb, not a name's
_CALLERS = frozenset("i we you u he she they just also then and finally already".split())


def _names_a_thing(tokens: list, at: int) -> bool:
    """Is "called" (after ``tokens[at]``) a thing's name ("a choir called the ..."), not a call?"""
    return at >= 0 and tokens[at][0].lower() not in _CALLERS


def recase(text: str, names: Iterable[str], owners: bool = False) -> str:
    """``text`` with each of ``names`` (lower case) capitalised where it stands as a lower-case word;
    ``owners`` (a question: it is read, never quoted): a name's possessive typed without the
    apostrophe too, given it back ("the tracking number for rashidas parcel": "Rashida's parcel")."""
    wanted = set(names)
    if not wanted:
        return text

    def cap(word: str) -> str:
        if owners and word.endswith("s") and word[:-1] in wanted:
            return word[:-1].capitalize() + "'s"
        return word.capitalize() if word in wanted else word

    return re.sub(r"(?<![\w'-])[^\W\d_][\w-]*", lambda m: cap(m.group(0)), text)


def restore(text: str, names: Iterable[str]) -> str:
    """The reverse of ``recase`` on a quote: the names given back the user's lower case."""
    wanted = {n.capitalize(): n for n in names}
    if not wanted:
        return text
    return re.sub(r"(?<![\w'-])[^\W\d_][\w-]*", lambda m: wanted.get(m.group(0), m.group(0)), text)


def recased_turns(turns: Sequence, extra: str = "") -> tuple[list, set[str]]:
    """The user's turns (objects with ``role`` and ``content``; a dataclass, copied) with the names
    any of them or ``extra`` marks capitalised in all of them, and those names."""
    names = set(named(extra))
    for t in turns:
        if t.role == "user" and t.content:
            names |= named(t.content)
    if not names:
        return list(turns), names
    out = [replace(t, content=recase(t.content, names)) if t.role == "user" and t.content else t for t in turns]
    return out, names
