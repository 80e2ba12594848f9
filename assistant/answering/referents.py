"""What a user's turn is about when it does not say: pronouns, possessives, restated slots, codes.

People state one fact over several chat turns ("My best friend is Lukas." / "He lives in Vienna.";
"my son Theo started at a new school" / "it's called Greenfield Primary"), and correct a fact
without repeating its words ("The school play is on the 12th." / "ok thanks" / "They moved it to
the 19th."). Rules of English chat, no model:

* **Pronouns.** A statement that speaks of "he", "she", "it", "they" (and their other forms) without
  a name of its own points back to the latest of the user's recent statements (``RECENT``) with a
  referent of that kind: a person for he/she (a name or a family word, "she" not resolved to a
  "brother"), anything for it/they. Chains follow ("he seems to like it" after "it's called ...").
* **The question's own names.** "Where does Lukas live?": a statement holding only "Lukas" holds no
  place; the answer's kind must be found beyond the names the question already says ("Theo's"
  counts as "Theo").
* **Restated slots.** "My dentist is Dr. Lindqvist." then "My dentist is Dr. Amani.": the same
  "my X is" subject stated again is a correction, cue or not.
* **Whom a question asks about.** "What's my wife's name?", "Where does Nadia's brother live?": a
  person (or pet) the question asks about by role, that no statement of the user's mentions, has
  nothing said about them (``unmentioned_role``).
* **Codes.** "What's the code for my locker?" asks for a code, PIN or password: "My gym locker is
  number 27." is a number, not a code, and does not answer it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from assistant.answering.dates import CLOCK, TIME_NAMES, TIME_WORDS
from assistant.answering.note import salient
from assistant.retrieval.lexical import STOP_WORDS

RECENT = 3  # a pronoun points back at most this many of the user's statements
# also as typed without the apostrophe ("hes from HeatRight", "shes kind of a diva")
HE = re.compile(r"(?i)\b(he|him|his|he's|hes|he'll|he'd)\b")
SHE = re.compile(r"(?i)\b(she|her|hers|she's|shes|she'll|she'd)\b")
IT = re.compile(r"(?i)\b(it|its|it's|they|them|their|they're|they've|they'll)\b")
MALE = re.compile(
    r"(?i)\b(he|him|his|he's|hes|brother|dad|father|husband|boyfriend|bf|son|uncle|nephew|grandpa|grandfather|"
    r"mr|guy|man|boy)\b"
)
FEMALE = re.compile(
    r"(?i)\b(she|her|she's|shes|sister|mum|mom|mother|wife|girlfriend|gf|daughter|aunt|niece|grandma|grandmother|"
    r"mrs|ms|miss|woman|girl)\b"
)
PERSON = re.compile(
    r"(?i)\b(friend|partner|boss|neighbou?r|cousin|colleague|teacher|doctor|dentist|landlord|landlady|"
    r"kid|child|baby|roommate|flatmate|coach|manager|called|named|name is|name's|"
    # a pet is "he" or "she" too ("my dog mochi is a shiba inu")
    r"dog|puppy|cat|kitten|rabbit|bunny|hamster|horse|pony|parrot|tortoise|pet)\b"
)
# a reference asks for a code ("booking ref"), but "the reference number" for a number
CODE_ASKED = re.compile(
    r"(?i)\b(code|pin|password|passcode|passphrase|combination|combo|ref|reference)\b(?!\s+(?:number|no)\b)"
)
# "my dentist is", "our flight number is", "the wifi password's": the slot a statement fills
SLOT = re.compile(r"(?i)\b(?:my|our)\s+((?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?:is|are|was|'s|=|:)\s")


@lru_cache(maxsize=4096)
def names(text: str) -> frozenset[str]:
    """The text's names and numbers (``salient``), a possessive "Theo's" as "theo" (cached: every
    question looks at each statement's several times)."""
    return frozenset(w[:-2] if w.endswith("'s") else w for w in salient(text))


def _person(text: str) -> bool:
    return bool(MALE.search(text) or FEMALE.search(text) or PERSON.search(text))


@lru_cache(maxsize=4096)
def _fits(pronoun_text: str, earlier: str) -> bool:
    """May the pronouns of ``pronoun_text`` stand for something ``earlier`` speaks of?"""
    he, she = bool(HE.search(pronoun_text)), bool(SHE.search(pronoun_text))
    if he or she:
        if not _person(earlier):
            return False
        # "she" is not the "brother" of a statement that names only men (and the other way round)
        if he and not she and FEMALE.search(earlier) and not MALE.search(earlier):
            return False
        return not (she and not he and MALE.search(earlier) and not FEMALE.search(earlier))
    # what was moved to another day had a day: "actually it got moved to monday" speaks of "big
    # presentation for the board on friday", not of "i barely slept" between them
    return not RESCHEDULED.search(pronoun_text) or bool(TIME_WORDS.search(earlier) or CLOCK.search(earlier))


_MOVED = r"(?:moved|pushed|rescheduled|postponed|brought forward|put back|delayed|bumped)"
# a thing moved to another time: "it got moved to monday", "they moved it to the 19th" (not "they moved
# to Leeds": people move house)
_MOVED = r"(?:moved|pushed|rescheduled|postponed|brought forward|put back|delayed|bumped)"
# a thing moved to another time: "it got moved to monday", "they moved it to the 19th" (not "they moved
# to Leeds": people move house)
RESCHEDULED = re.compile(
    rf"(?i)\b(?:it|it's|its)\s+(?:(?:got|has|had|was|is|been|being|just|now|all)\s+){{0,3}}{_MOVED}\b|\b{_MOVED}\s+it\b"
)


def _pronoun(text: str) -> bool:
    return bool(HE.search(text) or SHE.search(text) or IT.search(text))


@lru_cache(maxsize=4096)
def points_back(text: str) -> bool:
    """Does the statement speak of someone or something by a pronoun: as its subject (in its first
    three words: "He lives in Vienna.", "it's called Greenfield Primary"), or anywhere when it names
    nobody itself ("They moved it to the 19th.")?"""
    head = " ".join(text.split()[:3])
    return _pronoun(head) or (_pronoun(text) and not {w for w in names(text) if not re.search(r"\d", w)})


# "it" that points at nothing said: the time, the weather, how things go
IMPERSONAL = re.compile(
    r"(?i)\b(?:what time is it|how(?:'s| is) it going|is it (?:raining|snowing|sunny|cold|hot|warm|late|early))\b"
)


def asks_after(question: str, statements: Sequence) -> bool:
    """Does the question ask after someone by "he" or "she" ("What does she do?") that one of the
    user's statements (``statements`` in order, oldest first) can be, whatever chatter came between,
    or something by "it" or "they" ("How much did it cost?" after "paid 6400 euros for it") that one
    of the ``RECENT`` latest can be? Not an impersonal "it" ("What time is it?")."""
    if IMPERSONAL.search(question):
        return False
    if HE.search(question) or SHE.search(question):
        return any(_fits(question, s.content) for s in statements)
    return bool(IT.search(question)) and any(_fits(question, s.content) for s in list(statements)[-RECENT:])


def referent(c, statements: Sequence):
    """The earlier user statement ``c`` points back to (``statements``: the user's statements with
    ``number`` and ``content``, any order), or None: the latest of the ``RECENT`` before it whose
    subject fits the pronoun."""
    if not points_back(c.content):
        return None
    before = sorted((s for s in statements if s.number < c.number), key=lambda s: -s.number)[:RECENT]
    return next((s for s in before if _fits(c.content, s.content)), None)


def said_names(text: str) -> frozenset[str]:
    """``names`` and the capitalised words opening a sentence ("Ludo wants to be a train driver",
    "Rania is vegan btw"), lower-cased, a possessive as its name: whom a statement may name."""
    return names(text) | {w.lower().removesuffix("'s") for w in re.findall(r"\b[A-Z][\w'-]*", text)}


def about(text: str, asked: set[str], told: Sequence, number: int) -> bool:
    """Does a statement speak of a name the question says, itself (opening a sentence too: "Ludo
    wants to be a train driver") or by a pronoun pointing back?"""
    if said_names(text) & asked:
        return True
    seen, c = set(), next((t for t in told if t.number == number), None)
    while c is not None and c.number not in seen:
        seen.add(c.number)
        c = referent(c, told)
        if c is not None and names(c.content) & asked:
            return True
    return False


# "Which day is Clementine's appointment?": a name, then the thing of theirs asked about
POSSESSED = re.compile(r"\b([A-Z][a-z][\w-]*)'s\s+([a-z][\w-]*)")


def the_possessed(text: str, question: str, told: Sequence = ()) -> bool:
    """Does a statement say the thing the question asks of someone by name as "the <thing>", naming
    no one ("The appointment is on Thursday at 10:40" for "Which day is Clementine's appointment?",
    the rabbit named in another turn)? It speaks of the same thing; "my appointment" would be the
    user's own. Once a statement in ``told`` said the thing is theirs ("my daughter Amara's seventh
    birthday party"), "the party" is it whatever else it names ("The party is at Jumping Jacks")."""
    m = POSSESSED.search(question)
    if m is None or not re.search(rf"(?i)\bthe\s+{re.escape(m.group(2))}\b", text):
        return False
    theirs = re.compile(rf"(?i)\b{re.escape(m.group(1))}'s\s+(?:[\w-]+\s+){{0,3}}{re.escape(m.group(2))}\b")
    if any(theirs.search(c.content) for c in told):
        return True
    return not any(n.isalpha() and n not in TIME_NAMES for n in names(text) - {m.group(1).lower()})


def followers(number: int, statements: Sequence) -> list:
    """The user's statements that point back, directly or along a chain, to statement ``number``
    (in order)."""
    linked, out = {number}, []
    for c in sorted(statements, key=lambda s: s.number):
        if c.number in linked:
            continue
        r = referent(c, statements)
        if r is not None and r.number in linked:
            linked.add(c.number)
            out.append(c)
    return out


def slot(text: str) -> str | None:
    """The subject a statement fills ("my dentist is ..." -> "dentist"), lower-cased, or None."""
    m = SLOT.search(text)
    return m.group(1).lower() if m else None


VALUE = re.compile(r"\b[A-Z][\w'-]*|\b\w*\d\w*")


def _value(text: str) -> set[str]:
    """The names and numbers after a statement's "my X is" ("Dr. Amani": a capital after "Dr." too)."""
    m = SLOT.search(text)
    return {w.lower() for w in VALUE.findall(text[m.end() :])} if m else set()


def restates(later: str, earlier: str) -> bool:
    """Does ``later`` fill the same "my X is" slot as ``earlier`` with another name or number?"""
    s = slot(later)
    return s is not None and s == slot(earlier) and bool(_value(later) - _value(earlier))


def asks_code(question: str) -> bool:
    return bool(CODE_ASKED.search(question))


def holds_code(text: str, question: str | None = None) -> bool:
    """For a question asking for a code: the text says the same label ("code", "PIN") and has a
    digit or a quoted value; without a question, any label."""
    said = _labels(text)
    if WIFI.search(text) and WORD_AND_DIGITS.search(text):
        said.add("password")  # "if she needs the wifi it's fernhill22": the wifi's password
    label = said if question is None else _labels(question)
    if question is not None and not said and code_shaped(text):
        return True  # a code said with no label: "sorry typo, its VX-20913"
    return bool(label & said) and bool(re.search(r"\d|'[^']+'|\"[^\"]+\"", text))


_LABEL = {"reference": "ref"}  # one label said two ways


def _labels(text: str) -> set[str]:
    return {_LABEL.get(m.lower(), m.lower()) for m in CODE_ASKED.findall(text)}


# a token that may be a code: letters and digits, hyphens between
_TOKEN = re.compile(r"\b[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b")
_MEASURE = re.compile(r"(?i)^\d+(?:mg|ml|kg|km|cm|mm|am|pm|st|nd|rd|th|k|g|m|s|hrs?|mins?|yrs?)$")


def code_shaped(text: str) -> bool:
    """Does the text say a code by its shape: letters and digits in one token of five or more that is
    no measure and not said as a name ("VX-20913", "gh7r2mkb"; not "100mg", "10am", "network name is
    NETGEAR-77")?"""
    for m in _TOKEN.finditer(text):
        t, plain = m.group(0), m.group(0).replace("-", "")
        if len(plain) < 5 or not re.search(r"\d", plain) or not re.search(r"[A-Za-z]", plain) or _MEASURE.match(t):
            continue
        if not _NAMED_AS.search(text[: m.start()]):
            return True
    return False


_NAMED_AS = re.compile(r"(?i)\b(?:name\s+is|name's|names|called|named)\s*$")


WIFI = re.compile(r"(?i)\b(?:wifi|wi-fi|network|router)\b")
WORD_AND_DIGITS = re.compile(r"(?i)\b(?=\w*\d)(?=\w*[a-z])\w{5,}\b")


# a role and the words that say it too ("mum" for "mother", "puppy" for "dog")
ROLES = (
    "wife wifey spouse partner",
    "husband hubby spouse partner",
    "boyfriend bf partner",
    "girlfriend gf partner",
    "partner wife husband boyfriend girlfriend bf gf spouse fiance fiancee",
    "mother mum mom mama",
    "father dad papa",
    "brother bro sibling",
    "sister sis sibling",
    "son kid child boy",
    "daughter kid child girl",
    "grandmother grandma granny nan",
    "grandfather grandpa granddad",
    "uncle",
    "aunt auntie",
    "cousin",
    "nephew",
    "niece",
    "boss manager supervisor",
    "dog puppy pup greyhound labrador beagle poodle terrier spaniel collie retriever dachshund corgi pug husky "
    "whippet lurcher schnauzer chihuahua dalmatian doberman rottweiler alsatian sheepdog pomeranian cockapoo "
    "labradoodle cavapoo bulldog mastiff hound pooch mutt",
    "cat kitten kitty tabby moggy siamese ragdoll",
    "teacher tutor",
    "coach trainer",
    "neighbour neighbor",
    "landlord landlady",
    "dentist",
    "vet veterinarian",
    "hairdresser barber",
    "therapist counsellor",
    "lawyer solicitor",
    "accountant",
    "doctor gp",
)
SAYS_ROLE = {}
for _group in ROLES:
    _head, *_ = _group.split()
    SAYS_ROLE.setdefault(_head, set()).update(_group.split())


# "my doctor's appointment", "the dentist's office": a visit or a place, not the person
VISITS = frozenset("appointment appointments visit office surgery clinic practice checkup check-up".split())


def unmentioned_role(question: str, statements: Sequence[str]) -> bool:
    """Does the question ask about someone by a role ("my wife", "Nadia's brother", "their
    teacher") that none of the user's ``statements`` mentions, in any word for it? ("my doctor's
    appointment" asks about a visit, not the doctor.)"""
    said = {w.lower() for t in statements for w in re.findall(r"[\w'-]+", t)}
    said |= {w[:-2] for w in said if w.endswith("'s")}
    tokens = [w.lower() for w in re.findall(r"[\w'-]+", question)]
    for owner, word, after in zip(tokens, tokens[1:], [*tokens[2:], ""]):
        if owner not in ("my", "our", "his", "her", "their") and not owner.endswith("'s"):
            continue
        if word.endswith("'s") and after in VISITS:
            continue
        role = word.removesuffix("'s")
        if role in SAYS_ROLE and not SAYS_ROLE[role] & (said | {w + "s" for w in said} | {w[:-1] for w in said}):
            return True
    return False


# whose name a question asks ("what was his name, the vet looking at her?")
NAME_OF = re.compile(r"(?i)\b(his|her|their|its)\s+(?:sur|first\s+|last\s+|full\s+|nick)?names?\b")
_PRONOUNS = {
    "his": "he",
    "he": "he",
    "him": "he",
    "he's": "he",
    "hes": "he",
    "her": "she",
    "she": "she",
    "she's": "she",
    "shes": "she",
    "their": "they",
    "they": "they",
    "them": "they",
    "its": "it",
    "it": "it",
}


def other_pronoun(named: str, question: str) -> bool:
    """Does ``named`` (the words naming someone: "her name's Clover") name them by another pronoun
    than the one whose name the question asks ("what was his name, the vet looking at her?")?"""
    asked = NAME_OF.search(question)
    said = next((_PRONOUNS[w] for w in re.findall(r"[\w']+", named.lower()) if w in _PRONOUNS), None)
    return asked is not None and said is not None and said != _PRONOUNS[asked.group(1).lower()]


# "How often did Gwen tell me to water the fig?", "Which book did Mei Lin say we're reading?": what
# someone named told the user
REPORTED_ASKED = re.compile(
    r"\b(?:did|does|has|had|will|would)\s+(?P<who>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+"
    r"(?i:say|tell|told|said|recommend|suggest|advise|ask|want)\b"
)
_REPORTING_WORDS = frozenset("say says said tell tells told recommend suggest advise ask want often".split())
REPORTING = re.compile(r"(?i)\b(?:she|he|they)\s+(?:said|says|told|tells|recommended|suggested|advised|asked|wants)\b")


def reported(question: str, told: Sequence):
    """The user's latest statement in which the person the question asks what they said says it by a
    pronoun ("She said to water it once every ten days", pointing back to "My neighbour Gwen gave me a
    fiddle-leaf fig") or by name, sharing a word with the question beyond the name; or None."""
    m = REPORTED_ASKED.search(question)
    if m is None:
        return None
    who = {w.lower() for w in m.group("who").split()}
    asked = {w.lower() for w in re.findall(r"[\w'-]+", question)} - STOP_WORDS - who - _REPORTING_WORDS
    for c in sorted(told, key=lambda c: -c.number):
        said = {w.lower() for w in re.findall(r"[\w'-]+", c.content)}
        by_name = any(re.search(rf"(?i)\b{re.escape(w)}\s+(?:said|says|told|tells)\b", c.content) for w in who)
        if asked & said and (by_name or (REPORTING.search(c.content) and about(c.content, who, told, c.number))):
            return c
    return None
