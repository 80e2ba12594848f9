"""Which clause of a note answers a question, and whose a value in it is.

A clause, not the whole turn: "the tour company changed the itinerary, it's Fortaleza now" says the
tour company and a name, but the name is the itinerary's. A clause **answers** when it says the
head (``heads``) and holds a value of the asked kind that is the head's:

* **A name is bound to what it names.** "What's the name of the hotel I work at?" is not answered
  by "i'm Gwendolyn, just started as a pastry chef at a hotel in Aveiro": Aveiro is a place (a name
  after "in"), Gwendolyn the user. A name answers for a thing X when it is bound to X: "X called
  N", "X named N", "X is N", "X's name is N", "my X N" (apposition), "N X" ("the Crooked Lantern
  pub"), "N is my X", or a titled name ("dr Okonkwo") in a clause that says X. "my band's playing
  ... at a pub called the Crooked Lantern" names the pub, not the band. A question of a person
  with no noun head ("Who's going to be interviewing me?") is not answered by a thing's name ("a
  bike shop called Spoke & Sprocket").
* **A job is said as one.** "my partner Thibault goes back to work on monday" says work, not what
  the partner does ("works as", "'m a nurse", "im a radiographer": ``kinds.job_words``); asked
  about the user ("What's my profession?"), "she's a pharmacist" is another's job.
* "he's called Lukas", "her name is Pippa": a name said of a pronoun answers a name question about
  whom the turn is about.

``lacks_value``: a clause says the head in the question's own words and no clause gives its value
("my partner Thibault goes back to work": the partner spoken of, no job said): the value was never
said, and the honest reply is "I don't know".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.answering.ends import other_end
from assistant.answering.heads import Asked, Similar, is_head_word, says_head
from assistant.answering.kinds import TIME_NAMES, WHICH, job_words, kind_beyond
from assistant.answering.message import SENTENCE
from assistant.answering.note import OPENERS
from assistant.answering.priced import other_money, priced_other
from assistant.answering.recase import PERSON_STEMS, TITLES
from assistant.answering.recase import ROLES as PERSON_WORDS
from assistant.answering.referents import names, other_pronoun
from assistant.answering.related import OPPOSITES
from assistant.retrieval.lexical import STOP_WORDS, stem

# a name said of someone by a pronoun: "he's called Lukas", "her name is Pippa"
PRONOUN_NAMED = re.compile(
    r"(?i)\b(?:he|she|it|they|his|her|its|their|hes|shes)(?:'s|\s+is|\s+was|\s+are)?\s+(?:called|named|name\s+is|name's)\s+\w"
    r"|\b(?:his|her|its|their)\s+names?\s+(?:is|are|was)\s+\w|\b(?:named|called)\s+(?:him|her|it|them)\s+\w"
)
# where a sentence's clauses part: a semicolon, a colon, "but" / "so", and a comma before "it",
# "that", "they" ... ("the tour company changed the itinerary, it's Fortaleza now"); other commas
# join a list or an apposition to its clause ("I parked on level 3, spot C12")
CLAUSE = re.compile(
    r"[;:]+(?=\s|$)\s*|\s+(?:but|so(?!\s+(?:far|much|many)\b)|though|although)\s+"
    r"|,\s*(?=(?:and|but|so|it|it's|its|that|that's|this|they|they're|which|there|there's)\b)"
    # "his dvla check code for the form, its gh7r2mkb": a value alone after "its" is the clause's
    r"(?!(?:it's|its|it\s+is)\s+\S*\d\S*\s*[.!?]*\s*$)|\s+-+\s+",
    re.IGNORECASE,
)
TOKEN = re.compile(r"[\w'-]+|&")
CUES = frozenset("called named".split())
ANYONE = frozenset(stem(w) for w in "person someone somebody people contact".split())
# the words between a thing and its name: "X called N", "X is N", "X's name is N", "X is called N"
LINKS = frozenset("called named is was are were 's name names now actually the a an just he she hes shes".split())
# nouns that only carry a cue to the name ("my teacher is a guy called yusuf", "a place called Nona")
CARRIERS = frozenset("guy man woman lady girl boy bloke dude chap person one place thing".split())
# between a name and the thing after it: "N X" ("the Crooked Lantern pub"), "N is my X"
BEFORE_LINKS = frozenset("is was my our the his her their".split())
# a name after these is a place ("a hotel in Aveiro", "visiting my sister in Plovdiv")
PLACE_BEFORE = frozenset("in to from near around outside visiting".split())
JOINERS = frozenset("& and of the".split())
# another's job, not the user's: "she's a pharmacist", "my wife is a nurse"
ANOTHERS_JOB = re.compile(
    r"(?i)\b(?:she|he|they)(?:'s|'re|\s+is|\s+was|\s+are|\s+works?)\b|\bmy\s+\w+\s+(?:is|works)\b"
)
ASKS_ABOUT_USER = re.compile(r"(?i)\b(?:my|i|me|i'm|am\s+i)\b")
# a person asked for by what they do with a thing ("who has my drill?"): the name is the person's,
# not the thing's
WHO = re.compile(r"(?i)^\W*who(?:'s|se|m)?\b|,\s*who(?:'s|se|m)?\b")
# a clause calling back to a thing just named: "Mochi knocked my coffee off again, that cat ..."
EPITHET = re.compile(r"(?i)^(?:that|this)\s+([\w'-]+)")


def clauses(text: str) -> list[str]:
    """The clauses of a turn: its sentences (a title's full stop ends none: "Dr. Okonkwo"), split
    where ``CLAUSE`` parts them."""
    out = []
    for sentence in SENTENCE.split(text.strip()):
        out += [c.strip(" ,.!?") for c in CLAUSE.split(sentence) if c and c.strip(" ,.!?")]
    return out


@dataclass(frozen=True)
class Run:
    """A name in a clause: its words (lower case), the token indices it spans."""

    words: tuple[str, ...]
    start: int
    end: int


def _is_name(token: str, first: bool, own: frozenset[str]) -> bool:
    low = token.lower().removesuffix("'s")
    if not token[:1].isupper() or first or low in own or low in STOP_WORDS or low in OPENERS:
        return False
    if low in TIME_NAMES or low.startswith("i'") or (token.isupper() and len(token) > 1 and low in STOP_WORDS):
        return False
    # digits only inside a word-like name ("PotatoNet_5G", not "G14" or "5pm")
    return not re.search(r"\d", token) or len(re.findall(r"[A-Za-z]", token)) >= 5


def _cued(tokens: list[str], i: int) -> bool:
    """A lower-case word said as a name: after "called" / "named", or after "my" and a person's
    role ("my cousin tomasz's wedding")."""
    low = tokens[i].lower().removesuffix("'s")
    if low in STOP_WORDS or low in TIME_NAMES:
        return False
    if i > 0 and tokens[i - 1].lower() in CUES:
        return any(ch.isalpha() for ch in low)  # "the new wifi network is called BlueHeron5G"
    if not low.isalpha():
        return False
    return (
        i > 1
        and tokens[i - 2].lower() in ("my", "our")
        and tokens[i - 1].lower() in PERSON_WORDS
        and not re.search(r"(ed|ing|ly|s)$", low)
    )


def name_runs(tokens: list[str], question: str) -> list[Run]:
    """The names of a clause (``tokens``): capitalised words not opening it, or a word after
    "called" / "named", joined over "&", "and", "of", "the" ("Spoke & Sprocket", "Rye and Shine")."""
    own = names(question) | {w.lower() for w in re.findall(r"\b[A-Z][\w'-]*", question[1:])}
    flags = [_is_name(t, i == 0, own) or _cued(tokens, i) for i, t in enumerate(tokens)]
    runs, i = [], 0
    while i < len(tokens):
        if not flags[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and (
            flags[j + 1] or (tokens[j + 1].lower() in JOINERS and j + 2 < len(tokens) and flags[j + 2])
        ):
            j += 1
        runs.append(Run(tuple(t.lower() for t in tokens[i : j + 1]), i, j))
        i = j + 1
    return runs


def _low(tokens: list[str], a: int, b: int) -> list[str]:
    return [t.lower() for t in tokens[max(a, 0) : max(b, 0)]]


# a place said of the thing between it and its name ("the wifi at my flat is PotatoNet")
_OF_PLACE = frozenset("at in of for from on".split())
_DETS = frozenset("my our the his her their your".split())


def _without_place(between: list[str]) -> list[str]:
    """``between`` less one phrase "at my flat" / "in the office" right after the thing."""
    if len(between) >= 4 and between[0] in _OF_PLACE and between[1] in _DETS:
        return between[3:]
    return between


def _bound_after(between: list[str]) -> bool:
    """May a name follow its thing over these words ("called the", "is", "'s name is", "is a guy
    called", "at my flat is")?"""
    between = _without_place(between)
    if all(w in LINKS for w in between):
        return True
    cue = max((k for k, w in enumerate(between) if w in CUES), default=None)
    return cue is not None and all(w in LINKS | CARRIERS for w in between[:cue])


def _place(tokens: list[str], run: Run) -> bool:
    return run.start > 0 and tokens[run.start - 1].lower() in PLACE_BEFORE


def _titled(tokens: list[str], run: Run) -> bool:
    return run.start > 0 and tokens[run.start - 1].lower().rstrip(".") in TITLES


def _things_name(tokens: list[str], run: Run) -> bool:
    """Is the name a thing's, by a cue after a noun no person is called by ("a bike shop called
    Spoke & Sprocket", not "a guy called yusuf")?"""
    before = _low(tokens, run.start - 3, run.start)
    cue = max((k for k, w in enumerate(before) if w in CUES), default=None)
    if cue is None:
        return False
    nouns = [w for w in before[:cue] if w not in LINKS]
    return bool(nouns) and nouns[-1].removesuffix("'s") not in PERSON_WORDS


def bound_names(clause: str, question: str, asked: Asked, similar: Similar) -> list[Run]:
    """The names of the clause bound to a word of the head's noun (``asked.thing``)."""
    tokens = TOKEN.findall(clause)
    heads = [i for i, t in enumerate(tokens) if is_head_word(t.lower(), asked.thing, asked, similar)]
    if not heads:
        return []
    out = []
    for run in name_runs(tokens, question):
        if _place(tokens, run):
            continue
        if _titled(tokens, run) or any(
            (h < run.start and _bound_after(_rest_of_head(_low(tokens, h + 1, run.start), asked)))
            or (h > run.end and all(w in BEFORE_LINKS for w in _low(tokens, run.end + 1, h)))
            or (run.start <= h <= run.end and len(run.words) > 1)  # "the Hotel Miramar"
            for h in heads
        ):
            out.append(run)
    return out


def _rest_of_head(between: list[str], asked: Asked) -> list[str]:
    """The words between a thing and a name, less the rest of the question's head phrase: "my head
    of department Ignacio" binds Ignacio to the head of department."""
    return [w for w in between if w != "of" and stem(w.removesuffix("'s")) not in asked.head]


def _free_names(clause: str, question: str) -> bool:
    """Does the clause hold a name that is no place and no thing's ("My older brother Tomasz is
    visiting", not "at a bike shop called Spoke & Sprocket")? True when its value is no such name
    (a lower-case name cued as one)."""
    tokens = TOKEN.findall(clause)
    runs = name_runs(tokens, question)
    return not runs or any(not _place(tokens, r) and not _things_name(tokens, r) for r in runs)


def _holds(clause: str, question: str, asked: Asked, similar: Similar) -> bool:
    """Does the clause hold a value of the kind that is the head's (the kind found beyond the
    question's names, first)?"""
    if asked.kind == "name":
        if asked.thing and WHO.search(question) and not asked.thing & PERSON_STEMS:
            return _free_names(clause, question)
        if asked.thing and asked.thing <= ANYONE:
            # "the name of the person i need to talk to": "the person ... is called Ilse" names them
            tokens = TOKEN.findall(clause)
            return any(not _place(tokens, r) for r in name_runs(tokens, question))
        if asked.thing:
            return bool(bound_names(clause, question, asked, similar)) or bool(PRONOUN_NAMED.search(clause))
        return _free_names(clause, question)
    if asked.kind == "amount" and (
        asked.thing and priced_other(clause, asked, similar) or other_money(clause, question)
    ):
        return False  # "the check-up itself costs £28.50" for "how much is the filling?"; a deposit for a total
    if asked.kind == "job":
        if not job_words(clause):
            return False  # "goes back to work on monday": work, but no job said
        return bool(asked.head) or not (ASKS_ABOUT_USER.search(question) and ANOTHERS_JOB.search(clause))
    return True


def _epithets(text: str, question: str, asked: Asked, similar: Similar) -> list[tuple[str, str]]:
    """(the two clauses, the name) where a clause calls the thing asked for back by "that <thing>"
    and the clause before it opens with a name: "Mochi knocked my coffee off the desk again, that
    cat has zero remorse" names the cat. A sentence's first word is a name here only because the
    call-back says whose it is."""
    if asked.kind != "name" or not asked.thing:
        return []
    own = names(question) | {w.lower() for w in re.findall(r"\b[A-Z][\w'-]*", question[1:])}
    out = []
    for sentence in SENTENCE.split(text.strip()):
        parts = [c.strip(" ,.!?") for c in CLAUSE.split(sentence) if c and c.strip(" ,.!?")]
        for prev, c in zip(parts, parts[1:]):
            m = EPITHET.match(c)
            first = TOKEN.findall(prev)
            if m and len(first) > 2 and is_head_word(m.group(1).lower(), asked.thing, asked, similar):
                # the name is the subject of a clause of its own, no "Anyway" or "Honestly"
                if _is_name(first[0], False, own) and not first[0].lower().endswith(("ly", "way", "ways")):
                    out.append((f"{prev}, {c}", first[0].lower().removesuffix("'s")))
    return out


def answering_clauses(text: str, question: str, asked: Asked, similar: Similar) -> list[str]:
    """The clauses of ``text`` that say the head and hold a value of the asked kind that is the head's."""
    out = [both for both, _ in _epithets(text, question, asked, similar)]
    for c in clauses(text):
        # a sentence's capitalised first word may be a name, never makes the clause an answer
        # ("Whatever, we'll stay in." does not say who is coming to stay)
        # a thing's name said with an article ("the Trattoria Lucca") is no person's, yet names the thing
        bound = asked.kind == "name" and asked.thing and bound_names(c, question, asked, similar)
        if not kind_beyond(c, asked.kind, question) and not bound:
            continue
        named = asked.kind == "name" and PRONOUN_NAMED.search(c)
        named = named and not other_pronoun(named.group(0), question)
        if (
            (says_head(c, asked, similar) or named)
            and _holds(c, question, asked, similar)
            and not another_of(c, question, similar)
        ):
            out.append(c)
    return out


# the noun phrase a question asks about, narrowed by one word or two: "my home insurance", "the yoga
# class", "the router admin password" (each word and the next: router admin, admin password)
# (a look-ahead: a phrase takes none of the words after it, so "the code for my office locker" still
# finds "my office locker")
NARROWED = re.compile(r"(?i)\b(?=(?:my|our|the|his|her|their)\s+([a-z]+)\s+([a-z]+)(?:\s+([a-z]+))?\b)")


def _narrowed(question: str) -> list[tuple[str, str]]:
    """(narrowing word, noun) pairs of the question's noun phrases (``NARROWED``), lower-cased."""
    out = []
    for m in NARROWED.finditer(question):
        words = [w.lower() for w in m.groups() if w]
        out += list(zip(words, words[1:]))
    return out


def another_of(clause: str, question: str, similar: Similar | None = None) -> bool:
    """Does the clause say the question's noun narrowed by another word, and never the question's
    ("car insurance renews in august" for "when is my home insurance due?", "spin class is on monday"
    for "what time is my yoga class?")? It speaks of a neighbouring thing, whose value is no answer.
    The noun is said in any form the head check takes (``similar``: "bike lock code" for "my gym
    locker"). So does a clause saying only the event's other end ("flight lands at 7:20" for "what
    time does our flight take off?", ``ends.other_end``)."""
    if other_end(clause, question):
        return True
    tokens = TOKEN.findall(clause)
    low = [t.lower() for t in tokens]
    said = {stem(t.removesuffix("'s")) for t in low}
    for narrow, noun in _narrowed(question):
        if narrow in STOP_WORDS or noun in STOP_WORDS or noun in CUES:
            continue  # "the piano called": a name's cue, not a noun the piano narrows
        if stem(narrow) in said or (
            similar is not None and similar.close(narrow, set(low) - OPPOSITES.get(narrow, set()))
        ):
            continue  # the question's own narrowing word is said ("favourite colour" for "favorite color")
        for i in range(1, len(tokens)):
            before = tokens[i - 1]
            if (
                (stem(low[i]) == stem(noun) or (similar is not None and similar.close(noun, {low[i]})))
                and before.islower()
                and before not in STOP_WORDS
                and before not in _DETS
                and before.lower() not in {t.lower() for t in TOKEN.findall(question)}  # "first": asked too
                and not before.endswith("'s")
            ):
                return True
    return False


def values_of(found: tuple[str, ...], question: str, asked: Asked, similar: Similar) -> frozenset[str]:
    """The names bound to the head in the answering clauses ``found`` (a name question about a
    thing), lower case; empty for any other question or a name said of a pronoun."""
    if asked.kind != "name" or not asked.thing:
        return frozenset()
    bound = {w for c in found for r in bound_names(c, question, asked, similar) for w in r.words}
    return frozenset(bound | {n for c in found for _, n in _epithets(c, question, asked, similar)})


INDEFINITE = re.compile(r"(?i)\b(?:a|an|some)\s+(?:[a-z]+\s+)?$")


def unnamed_which(question: str, texts: Sequence[str]) -> bool:
    """A "which <thing> ...?" question ("Which museum does my best friend work at?") whose thing
    the texts say only as "a <thing>" ("she works in a museum"), with no name or number in that
    clause: which one was never said. False when no text says the thing (nothing tells)."""
    m = WHICH.match(question)
    if m is None:
        return False
    asked = Asked("name", {stem(m.group("noun").lower()): m.group("noun").lower()}, frozenset())
    asked = Asked("name", asked.head, frozenset(asked.head))
    lexical, seen = Similar(None), False
    for c in (c for t in texts for c in clauses(t)):
        tokens = TOKEN.findall(c)
        at = [i for i, t in enumerate(tokens) if is_head_word(t.lower(), asked.thing, asked, lexical)]
        if not at:
            continue
        seen = True
        before = " ".join(tokens[max(at[0] - 2, 0) : at[0]]) + " "
        if not INDEFINITE.search(before) or name_runs(tokens, question) or re.search(r"\d", c):
            return False
    return seen


def lacks_value(text: str, question: str, asked: Asked) -> bool:
    """A name or a job asked: does a clause say the head in the question's own words (lexically: a
    word merely close is no evidence the user spoke of it) while no clause answers and no other
    clause holds a value of the kind ("my band's playing ... at a pub called the Crooked Lantern" for
    "What's my band called?"; not "Sorry, that was my old dentist. The new one is Dr. Amani.", whose
    second sentence may say the dentist otherwise)? A head said as a verb ("Who's going to be
    interviewing me?") lacks a name only where the clause's names are all places or things'; "we'll
    stay in" speaks of too much."""
    if asked.kind not in ("name", "job") or not asked.head:
        return False
    lexical = Similar(None)
    said = Asked(asked.kind, {s: w for s, w in asked.head.items() if s in asked.thing} or asked.head, asked.thing)
    spoken, others = [], []
    for c in clauses(text):
        (spoken if says_head(c, said, lexical) else others).append(c)
    if not spoken or answering_clauses(text, question, asked, lexical):
        return False
    if any(kind_beyond(c, asked.kind, question) for c in others):
        return False
    if asked.thing:
        return True
    return any(not _free_names(c, question) for c in spoken)
