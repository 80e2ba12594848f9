"""Words for a related thing, by stem: a question may name what a statement said otherwise ("the
dinner" for "booked a table", "vehicle" for "car", "relative" for "cousin"); small and general, not a
thesaurus."""

from __future__ import annotations

import re

from assistant.retrieval.lexical import stem, stem_groups, words

_RELATED = (
    "vehicle car van truck motorbike scooter bike bicycle",
    "dinner lunch meal table restaurant reservation booked",
    "travel travelling trip journey train flight plane bus ferry",
    "doctor appointment checkup check-up clinic gp",
    "dentist appointment checkup check-up clinic",
    "dog puppy pup greyhound labrador beagle poodle terrier spaniel",
    "cat kitten tabby",
    "flat apartment home house place",
    "job work",
    "present gift",
    "wifi wi-fi network internet router",
    "school primary academy nursery kindergarten",
    "club group society circle",
)
RELATED = stem_groups(_RELATED)
# one way only: "relative" is said as "cousin", but "sister" is not "brother"
_KIN = frozenset(
    stem(w)
    for w in "cousin sister brother sibling mum mom mother dad father aunt auntie uncle niece nephew grandad "
    "granddad grandpa grandma granny grandmother grandfather son daughter".split()
)
for _w in "relative relatives family relation".split():
    RELATED[stem(_w)] = _KIN | {stem(_w)}
# who does a thing for someone, by the verb: "who owns my flat?" asks for the landlord, "who's
# training me?" for the coach, "who services my car?" for the mechanic
_DOERS = (
    ("own owns owned owning rent renting rented lease leasing", "landlord landlady owner letting agent"),
    ("train trains trained training coach coaches coaching", "coach trainer instructor"),
    ("teach teaches teaching taught tutor tutors tutoring show shows showing", "teacher tutor instructor"),
    (
        "service services serviced servicing fix fixes fixed fixing repair repairs repaired repairing mend mends",
        "mechanic garage plumber electrician engineer technician handyman repairman",
    ),
    ("cut cuts cutting style styles styling", "hairdresser barber stylist"),
    (
        "look looks looked looking watch watches watching mind minds minding sit sits sitting feed feeds walk walks",
        "sitter babysitter childminder nanny minder walker carer",
    ),
    (
        "run runs running organise organises organising organize organizes organizing lead leads leading chair chairs "
        "charge conduct conducts conducting",
        "organiser organizer secretary chair chairperson chairman leader coordinator captain head manager conductor",
    ),
    ("treat treats treating", "doctor gp dentist physio physiotherapist vet nurse therapist specialist"),
    ("clean cleans cleaning", "cleaner"),
    ("insure insures insuring", "insurer broker"),
    ("photograph photographs photographing shoot shoots shooting", "photographer"),
)
DOERS = {stem(verb): frozenset(stem(r) for r in roles.split()) for verbs, roles in _DOERS for verb in verbs.split()}
# words whose vectors lie close though they name the other one of a pair ("the spare front door key" is
# not the back door's)
OPPOSITES: dict[str, set[str]] = {}
for _a, _b in (
    ("front", "back"),
    ("upstairs", "downstairs"),
    ("top", "bottom"),
    ("left", "right"),
    ("old", "new"),
    ("first", "last"),
    ("outbound", "return"),
    ("morning", "evening"),
    ("summer", "winter"),
    ("inside", "outside"),
    ("home", "away"),
):
    OPPOSITES.setdefault(_a, set()).add(_b)
    OPPOSITES.setdefault(_b, set()).add(_a)


THE_THING = re.compile(r"(?i)\bthe\s+([a-z][\w-]+)\b")


def related(stems: set[str]) -> set[str]:
    """The stems and their related words (``RELATED``)."""
    return set(stems).union(*(RELATED.get(w, ()) for w in stems))


def shares_word(question: str, text: str) -> bool:
    """Does ``text`` say a word of the question, or a related one ("car" for "vehicle")?"""
    return bool(related(set(words(question))) & set(words(text)))
