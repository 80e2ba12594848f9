"""The kind of word an answer needs, and whether a text holds one.

"Who ...?" wants a name, "When ...?" a day, date or time, "Where ...?" a place (typed without
the apostrophe too: "whos", "whens", "wheres"), "How old / how many
...?" a number; "what colour", "what do I do for a living", "the code for my locker" ask for a colour,
a job, a code. ``expected_kind`` reads the question, ``has_kind`` a turn; ``kind_beyond`` leaves out the
names the question already says ("Lukas" does not answer "Where does Lukas live?"). Used by the choice
of notes (``assistant.answering.notes``).
"""

from __future__ import annotations

import re

from assistant.answering.dates import CLOCK, PERIOD, TIME_NAMES, TIME_WORDS
from assistant.answering.note import OPENERS, salient
from assistant.answering.referents import CODE_ASKED, SAYS_ROLE, code_shaped, holds_code, names
from assistant.retrieval.lexical import STOP_WORDS, words

# a question may open with words joining it to the talk ("and when is my home insurance due?", "ok
# wait, where does tendai pick me up from again?")
LEAD = (
    r"^\s*(?:(?:and|so|also|ok|okay|oh|but|btw|um+|hm+|erm|uh+|wait|hey|sorry|right|remind me|quick question)"
    r"[\s,:.!-]+){0,3}"
)
# "call" asks for a name as a verb ("What did I call my daughter?", "what should we call it"), not as
# a noun ("what time is the bank call?")
CALL_VERB = r"\b(?:do|did|does|should|will|would|can|could|to|i|we|you|they|he|she)\s+(?:\w+\s+)?call\b"
KINDS = (
    (
        "name",
        re.compile(
            rf"(?i){LEAD}(who|whom|whos)\b|\b(name|called|surname|forename|nickname)\b|{CALL_VERB}"
            r"|^\s*(which|what)\s+(relative|family member|person)\b"
        ),
    ),
    ("clock", re.compile(r"(?i)\b(what|which)\s+time\b|\bat what time\b|\bhow (late|early)\b")),
    ("time", re.compile(rf"(?i){LEAD}whens?\b|\b(what|which)\s+(day|date|month|year|weekday)s?\b")),
    (
        "place",
        re.compile(
            rf"(?i){LEAD}wheres?\b|\b(what|which)\s+(city|town|country|place|street|"
            r"hospital|school|village|island|state|church|port|airport|station|venue)\b"
        ),
    ),
    ("colour", re.compile(r"(?i)\bcolou?rs?\b")),
    (
        "job",
        re.compile(
            r"(?i)\bwhat\s+(do|does|did)\s+[\w' ]+?\s+do\s*(for\s+(work|a\s+living))?\s*[?.!]*\s*$"
            r"|\b(job|occupation|profession|career)\b|\bfor a living\b"
        ),
    ),
    ("code", CODE_ASKED),
    ("instrument", re.compile(r"(?i)\b(what|which)\s+(musical\s+)?instruments?\b")),
    ("food", re.compile(r"(?i)\b(what|which)\s+(food|dish|meal)\b")),
    # "what price did i put it up for?", "whats my membership cost?": the money's own noun asks for an amount
    (
        "amount",
        re.compile(
            r"(?i)\bhow\s+much\b|\b(price|cost|fee|rent|deposit|fare|budget|salary|wage|rate)s?\b"
            r"|\b(?:what|which)\s+(?:sum|amount)\b"
        ),
    ),
    ("number", re.compile(r"(?i)\bhow\s+(old|many|much|long)\b|\b(number|age)\b")),
)
# where something is: a capitalised name, or a place said with a preposition ("in the shed",
# "under the blue flowerpot", "at my mother's house", "moving to the church hall"), not a date ("on the 12th")
LOCATIVE = re.compile(
    r"(?i)\b(in|at|on|under|behind|near|next to|beside|by|inside|outside|above|below|from|into|"
    r"opposite|across from|between|upstairs|downstairs|(?:mov(?:e|es|ed|ing)|relocat\w+)(?: it| us)? to)"
    r"\s+(the|a|an|my|our|his|her|their|your|this|that)\s+(?!\d)\w"
)
# a house number and its street, typed in lower case too ("he lives round the corner at 22 orchard close")
ADDRESS = re.compile(
    r"(?i)\b\d{1,4}[a-z]?\s+(?:[a-z'-]+\s+){1,2}(?:street|st|road|rd|lane|ln|avenue|ave|close|drive|way|crescent|"
    r"court|terrace|gardens|grove|row|square|walk|mews|parade|place)\b"
)
# a name said as one: "called rafa", "her name is Bernice", "my bf kwame" (lower-case names too)
_PEOPLE = (
    "bf gf boyfriend girlfriend husband wife partner son daughter brother sister mum mom mother dad "
    "father friend cat dog kid boss neighbour neighbor cousin uncle aunt nephew niece landlord "
    "landlady colleague teacher doctor dentist rabbit bunny hamster horse baby"
)
NAME_CUE = re.compile(
    rf"(?i)\b(called|named|name is|name's|names are)\s+\w"
    rf"|\b(my|our)\s+({'|'.join(_PEOPLE.split())})\s+(?P<who>[a-z]\w+)"
)
COLOURS = re.compile(
    r"(?i)\b(red|orange|yellow|green|blue|purple|violet|pink|brown|black|white|grey|gray|silver|gold|"
    r"golden|beige|navy|turquoise|teal|ginger|maroon|cream|tan|tabby)\b"
)
# occupations that no ending of ``JOB`` tells ("a radiographer" does: "-er")
_OCCUPATIONS = (
    "nurse vet pilot chef cook judge clerk nanny mechanic architect surgeon midwife barista plumber electrician "
    "paramedic physio physiotherapist dentist doctor medic pharmacist optician chemist lawyer solicitor barrister "
    "accountant analyst consultant engineer developer programmer scientist researcher lecturer professor tutor "
    "carpenter joiner builder welder roofer tiler painter decorator gardener florist baker butcher cashier "
    "waiter waitress bartender receptionist secretary librarian curator journalist editor photographer "
    "designer artist musician actor actress dancer translator interpreter hairdresser barber beautician "
    "therapist counsellor psychologist psychiatrist vicar priest firefighter paramedic soldier sailor "
    "police officer detective farmer fisherman courier postman postwoman driver"
)
OCCUPATIONS = frozenset(_OCCUPATIONS.split())
JOB = re.compile(
    r"(?i)\b(work(s|ed|ing)?|job|profession|occupation|career|employed|retired|unemployed|teach(es|ing)?|"
    r"student|studying)\b|\b(am|'m|im|is|'s|are|'re|was|were|be|been|became|become)\s+(an?|the)\s+(\w+\s+)?"
    rf"(\w+(er|or|ist|ian|ant|ent|eer|man|woman|ess)|{'|'.join(sorted(OCCUPATIONS))})\b"
    r"|\b(promoted|hired|took a job)\s+(to|as)\b|\bas\s+an?\s+(\w+\s+)?"
    rf"({'|'.join(sorted(OCCUPATIONS))}|\w+(er|or|ist|ian))\b"
)
# what a job statement says the job is: "work as a sound engineer", "'m a nurse", "teaches chemistry"
JOB_SAID = re.compile(
    r"(?i)\b(?:work(?:s|ed|ing)?\s+(?:as|at|for|in)|(?:am|'m|im|is|'s|are|'re|was|were|became|become)\s+(?:an?|the)"
    r"|\bas\s+an?"
    r"|teach(?:es|ing)?|stud(?:y|ies|ying)|(?:promoted|hired|took a job)\s+(?:to|as)(?:\s+an?)?)\s+(?P<what>[^,.;!?]+)"
)
JOB_GENERIC = frozenset(words("work job living job profession career part time full"))


def job_words(text: str) -> set[str]:
    """The words a job statement says the job with ("sound", "engineer", "bergen" in "I work as a
    sound engineer in Bergen."), stemmed; empty when the text states no job."""
    if not JOB.search(text):
        return set()
    return {w for m in JOB_SAID.finditer(text) for w in words(m.group("what"))} - JOB_GENERIC


NUMBER = re.compile(
    r"(?i)\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|"
    r"forty|fifty|sixty|seventy|eighty|ninety|hundred|once|twice|thrice)\b"
)
# "one of them", "two of my friends": which of a group, not how many there are
PARTITIVE = re.compile(
    r"(?i)\b(?:one|two|three|four|five|some|each|either|neither|both)\s+of\s+(?:them|us|you|those|these|the|my|our)\b"
)
# an amount of a substance or a distance: "500mg", "2 litres", "5k" is money, "3 km" is not
MEASURE = re.compile(
    r"(?i)\b\d[\d,.]*\s?(?:mg|mcg|ml|g|kg|grams?|kilos?|l|litres?|liters?|oz|ounces?|lbs?|pounds? of|cups?|"
    r"tablets?|pills?|capsules?|drops?|puffs?|spoons?|teaspoons?|tablespoons?|km|miles?|metres?|meters?)\b"
)
# "how long is my car in the shop for?": a stay said by its end ("till friday", "until the 3rd")
HOW_LONG = re.compile(r"(?i)\bhow\s+long\b")
DAY_OF_MONTH = re.compile(r"(?i)\b\d{1,2}(?:st|nd|rd|th)\b")
UNTIL = re.compile(r"(?i)\b(?:until|till|til|through|thru)\s+(?:next\s+|the\s+)?(?=\w)")


# foods a "what food ...?" question is answered by ("celebrating with sushi tonight")
FOODS = re.compile(
    r"(?i)\b(sushi|pizza|pasta|burgers?|tacos?|curry|ramen|noodles|steak|salad|soup|sandwich(es)?|cake|pancakes|"
    r"lasagne|lasagna|risotto|paella|dumplings|kebabs?|chicken|fish|chips|fries|barbecue|bbq|carbonara|pho|pie|"
    r"ice cream|chocolate|rice|bread|cheese|eggs?|bacon|pork|beef|lamb|tofu|seafood|shellfish|prawns|shrimp|"
    r"lobster|oysters|peanuts?|nuts?|cashews?|almonds?|gluten|dairy|milk|fondue|brunch|takeaway|dim sum|bao)\b"
)
# what "which instrument ...?" is answered by ("i play bass")
INSTRUMENTS = re.compile(
    r"(?i)\b(guitar|bass|drums?|piano|keys|keyboards?|violin|viola|cello|double bass|flute|clarinet|oboe|bassoon|"
    r"saxophone|sax|trumpet|trombone|tuba|horn|harp|ukulele|uke|banjo|mandolin|bouzouki|accordion|harmonica|"
    r"organ|synth|synthesizer|percussion|vocals|voice|singing|sitar|tabla|recorder|bagpipes|fiddle|oud|"
    r"djembe|xylophone|marimba|glockenspiel|cajon)\b"
)
# an amount ("6400 euros", "950 a month", "1,350"): a number that is no clock time, date, label's
# value ("flat number 12B", "year 4") or code ("cb500", "mt-07")
_AMOUNT = re.compile(r"(?<![\w:.])(?<![A-Za-z]-)[$\u20ac\u00a3]?\d[\d,.]*(?:k\b)?(?![\w:])")
# money said after a number ("at 10 euros each"): an amount, not a clock time
_MONEY_AFTER = re.compile(r"(?i)\s*(?:[$\u20ac\u00a3%]|k\b|euros?\b|dollars?\b|pounds?\b|quid\b|bucks\b|grand\b)")
_LABEL_BEFORE = re.compile(
    r"(?i)\b(number|no|room|flat|apartment|gate|platform|seat|locker|bus|line|route|door|unit|suite|table|desk|"
    r"terminal|level|floor|spot|year|grade|class|code|pin)\s*(?:(?:is|was|'s)\s+|[:#]\s*)?$"
)
# a length of time after a number ("been doing it for 20 years", "6 nights"): a duration, not money
# (or a range of them: "delivery is 6-8 weeks")
_DURATION_AFTER = re.compile(
    r"(?i)(?:\s*(?:-|–|to|or)\s*\d[\d.,]*)?"
    r"\s*(?:years?|yrs?|months?|weeks?|wks?|days?|nights?|hours?|hrs?|minutes?|mins?|seconds?|secs?)\b"
)
# what "how long" asks for: a length of time or of a thing, with its unit ("for 20 years", "lessons
# are 30 minutes", "half an hour", "25 metres", "since 2019"), never a bare count or label ("plot 27")
LENGTH = re.compile(
    r"(?i)\b(?:\d[\d.,]*|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|few|"
    r"couple(?: of)?|several|half an?|half)\s*(?:-|–|to|or)?\s*(?:\d[\d.,]*\s*)?"
    r"(?:years?|yrs?|months?|weeks?|wks?|days?|nights?|hours?|hrs?|h|minutes?|mins?|seconds?|secs?|decades?|"
    r"metres?|meters?|m|km|kilometres?|kilometers?|miles?|feet|ft|foot|inches?|cm|laps?)\b"
    r"|\bsince\b"
)
# a span of hours after a day or a time of day ("coming friday between 8 and 10", "tomorrow from 9 to
# 11"), or an hour it is bounded by ("pick it up friday after 4"): clock times, unless money follows
_HOURS_SPAN = re.compile(
    r"(?i)\b(?:today|tonight|tomorrow|tmrw|morning|afternoon|evening|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|sat|sun)\w*\s+(?:(?:between|from)\s+"
    r"\d{1,2}\s*(?:and|to|-|&)\s*\d{1,2}\b|(?:after|before|by|until|till|around)\s+(?:1[0-2]|0?[1-9])\b(?![:.,]\d))"
)


def amounts(text: str) -> list[str]:
    """The amounts a text says: numbers not a clock time ("3:45", "6pm", "friday at 10", "friday between 8 and
    10"), a date ("the 14th", "2016" is kept: a price may be one), a length of time ("for 20 years"), a label's
    value ("number 12B", "plot number is 27") or a code."""
    # a bare number after "at" is a clock time ("coming friday at 10"), unless money follows it
    clock = [c.span() for c in CLOCK.finditer(text) if not _MONEY_AFTER.match(text, c.end())]
    clock += [c.span() for c in _HOURS_SPAN.finditer(text) if not _MONEY_AFTER.match(text, c.end())]
    out = []
    for m in _AMOUNT.finditer(text):
        after = text[m.end() : m.end() + 3].lower()
        if re.match(r"\s?(am|pm|a\.m|p\.m|h\b|st\b|nd\b|rd\b|th\b)", after) or _LABEL_BEFORE.search(text[: m.start()]):
            continue
        if _DURATION_AFTER.match(text, m.end()):
            continue
        if any(a <= m.start() < b for a, b in clock):
            continue
        out.append(m.group(0))
    return out


def label_value(text: str, question: str) -> bool:
    """Does the text give the value of the label the question asks for ("Which year do I teach?"
    and "i teach year 4": the label, then its number or code)?"""
    m = re.match(r"(?i)^\s*(?:what|which)\s+([a-z]+)\b", question)
    return bool(m) and bool(re.search(rf"(?i)\b{re.escape(m.group(1))}\s+\d\w*\b", text))


def says_value(text: str, kind: str | None) -> bool:
    """Does a text holding the answer's kind say the value itself? A job statement says which job
    ("she works as a nurse"), not only that there is one ("just started a new job")."""
    return kind != "job" or bool(job_words(text))


def expected_kind(question: str) -> str | None:
    """The kind of word the answer needs (``name``, ``time``, ``place``, ``number``) or None.

    The cue said first wins (``KINDS``' order breaks a tie): the question's own noun comes before
    the words that narrow it, so "what's the reference number for the boiler job?" asks for a
    number, not a job."""
    found = [(m.start(), i, kind) for i, (kind, pattern) in enumerate(KINDS) if (m := pattern.search(question))]
    return min(found)[2] if found else None


def _names(text: str) -> set[str]:
    """Capitalised words inside a sentence and words with a digit, less days and months and common
    words typed in capitals for emphasis ("she is NOT going to be happy")."""
    shouted = {w.lower() for w in re.findall(r"\b[A-Z]{2,}\b", text)} & STOP_WORDS
    return {w for w in salient(text) if w not in TIME_NAMES and w not in shouted}


# a name in apposition to a person or pet ("my niece Amara"): who, not where
_ROLES = sorted(set(_PEOPLE.split()) | {w for group in SAYS_ROLE.values() for w in group})
_BESIDE_ROLE = re.compile(rf"(?i)\b(?:my|our|his|her|their)\s+(?:{'|'.join(_ROLES)}|twins?)\s+([A-Z][\w'-]*)")
# a name after an article and lower-case words ("a used green Fiat Panda"): a thing, not a person
_A_THING = re.compile(r"\b(?:[Aa]n?)\s+(?:[a-z][\w-]*\s+){0,3}((?:[A-Z][\w'-]*\s*)+)")


# a person's or pet's name said as one: "a greyhound named Biscotti", "her name is Pistachio",
# "Biscotti was the other dog" (not "a bar called the Copper Kettle": a place may be called so)
_NAMED_ONE = re.compile(
    rf"(?i)\b(?:{'|'.join(_ROLES)})\s+(?:called|named)\s+([\w'-]+)"
    r"|\b(?:his|her|their|its)\s+name\s+(?:is|was)\s+([\w'-]+)"
    rf"|\b([\w'-]+)\s+(?:is|was)\s+(?:the|my|our|a|an)\s+(?:other\s+)?(?:{'|'.join(_ROLES)})\b"
)


def _places_named(text: str) -> set[str]:
    """The names that may be places: not a clock time ("7:50" is when, not where), a bare number
    ("just turned 7") or a day of the month ("on the 9th"), nor a person's or pet's name (beside
    their role, or said as their name)."""
    people = {m.group(1).lower() for m in _BESIDE_ROLE.finditer(text)}
    people |= {w.lower() for m in _NAMED_ONE.finditer(text) for w in m.groups() if w}
    return {
        w
        for w in _names(text)
        if not CLOCK.fullmatch(w) and not re.fullmatch(r"\d+", w) and not DAY_OF_MONTH.fullmatch(w) and w not in people
    }


def _person_names(text: str) -> set[str]:
    """The names that may be people: no number ("the meeting is at 10" names no one) and no thing
    said with an article ("a used green Fiat Panda")."""
    things = {w.lower() for m in _A_THING.finditer(text) for w in m.group(1).split()}
    return {w for w in _names(text) if not re.search(r"\d", w) and w not in things}


# "Which company am I presenting to?", "Which car model did I buy?": one thing among named ones
WHICH = re.compile(r"(?i)^\s*which\s+(?P<noun>[a-z]+)\b")


def asks_which(question: str) -> bool:
    """Does the question ask which thing (not which person: "Which friend ...?" wants a person)?"""
    m = WHICH.match(question)
    return bool(m) and m.group("noun").lower() not in _PEOPLE.split() and expected_kind(question) is None


def names_a_thing(text: str) -> bool:
    """Does the text name a thing: a name or a code that is no one's beside their role ("big pitch
    to Halvorsen & Quist tomorrow", not "my manager Philippa is sitting in")?"""
    return bool(_places_named(text))


def _named(text: str) -> bool:
    for m in NAME_CUE.finditer(text):
        who = m.group("who")
        if who is None or not (
            who.lower() in STOP_WORDS or who.lower() in TIME_NAMES or re.search(r"(ed|ing|s)$", who)
        ):
            return True
    return False


def _opening_name(text: str) -> bool:
    """A sentence opens with what may be a name ("Mochi knocked my coffee off the desk"): a
    capitalised word that is not a common word, a day or month, or a verb form. Only a "may be":
    it keeps "I don't know" from being said, never makes a note the answer."""
    for m in re.finditer(r"(?:^|[.!?]\s+)([A-Z][a-z]{2,})\b", text):
        w = m.group(1).lower()
        if w not in STOP_WORDS and w not in OPENERS and w not in TIME_NAMES and not re.search(r"(ed|ing|ly|s)$", w):
            return True
    return False


def has_kind(text: str, kind: str | None, loose: bool = False) -> bool:
    """Does ``text`` hold a word of the answer's kind (``expected_kind``)?"""
    if kind is None:
        return True
    if kind == "time":
        return bool(TIME_WORDS.search(text))
    if kind == "clock":
        return bool(CLOCK.search(text))
    if kind == "number":
        # a clock time or a day of the month is when, not how many or which number ("landing at 9pm
        # now", "on the 14th" for "whats my flight number?")
        return bool(NUMBER.search(DAY_OF_MONTH.sub(" ", CLOCK.sub(" ", PARTITIVE.sub(" ", text)))))
    if kind == "amount":
        return bool(amounts(text) or MEASURE.search(text))
    if kind == "food":
        return bool(FOODS.search(text))
    if kind == "instrument":
        return bool(INSTRUMENTS.search(text))
    if kind == "code":
        return holds_code(text) or code_shaped(text)  # a code's label with a digit, or a code by its shape
    if kind == "colour":
        return bool(COLOURS.search(text))
    if kind == "job":
        return bool(JOB.search(text))
    if kind == "place":
        return bool(_places_named(text) or LOCATIVE.search(text) or ADDRESS.search(text)) or (
            loose and _opening_name(text)
        )
    # a name: a capitalised word inside a sentence, or a name cue (``loose``: or a sentence's first word)
    return bool(_person_names(text)) or _named(text) or (loose and _opening_name(text))


def _without(text: str, asked: set[str]) -> str:
    """``text`` with the names the question already says blanked out ("Lukas" for "Where does Lukas
    live?"): they are what is asked about, not the answer."""
    if not asked:
        return text
    blank = lambda m: "x" if m.group(0).lower().removesuffix("'s") in asked else m.group(0)  # noqa: E731
    return re.sub(r"[\w'-]+", blank, text)


# a day is asked for, not the hour ("what day does she get here?")
DAY_ASKED = re.compile(r"(?i)\b(what|which)\s+(day|date|weekday)s?\b")


def kind_beyond(text: str, kind: str | None, question: str, loose: bool = False) -> bool:
    """``has_kind`` beyond the question's own names and numbers, or the value of the label the
    question asks for ("year 6" for "Which year do I teach?"). A question asking which day is not
    answered by a clock time alone ("landing at 9pm now" for "what day does she get here?"); one
    asking how long is, by the day it lasts until ("in the shop till friday")."""
    if kind == "time" and DAY_ASKED.search(question):
        text = PERIOD.sub(" ", CLOCK.sub(" ", text))  # nor by a stretch of time ("turning 90 next month")
    if kind == "number" and HOW_LONG.search(question):
        if any(TIME_WORDS.match(text, m.end()) for m in UNTIL.finditer(text)):
            return True
        return bool(LENGTH.search(_without(text, names(question) - TIME_NAMES)))
    return has_kind(_without(text, names(question) - TIME_NAMES), kind, loose) or label_value(text, question)
