"""The parts of a correction: which of them states the new value, and which only names the old one.

People correct a fact in one breath that says both values: "sorry, wrong one -- his name is Oskar,
Emil was the neighbour's cat", "hang on, it's the canon r6 i want, the nikon was my dad's", "update:
the blue room was taken so we're in the garden room". Quoted whole, the answer carries the stale
value beside the new one, and reads as both. So:

* **The stale words** (``stale_words``): the words the correction repeats from the statement it
  corrects, less the question's own (they say the slot, not its value: "name" in "What's my cat's
  name?") and less function words and verb forms: "emil", "nikon", "blue". The old value, said again
  to be put aside.
* **A part** (``parts``): a sentence, cut at a comma, semicolon, colon, dash, "but", "so" or a
  reason ("because", "bc": "moved it to the 28th bc my aunt cant make the 21st").
* **The old part** is one holding a stale word and no name or number of its own that the corrected
  statement lacks ("Emil was the neighbour's cat"); a part saying the new value beside the old one
  ("make that 8 days not 5") stays. ``without_stale`` leaves the old parts out of the quote, as
  long as something besides them remains.

Used by the choice of notes (``assistant.answering.notes``: which words are stale), the quote
(``assistant.answering.quoting``) and the check of the model's text (``assistant.answering.answer``).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from assistant.answering.kinds import TIME_NAMES
from assistant.answering.note import salient
from assistant.retrieval.lexical import STOP_WORDS, WORD, stem

# where a correction's parts meet: a sentence end, a comma, semicolon, colon or dash, "but", "so", a reason
BOUNDARY = re.compile(
    r"[.!?]+\s+|\s*[,;:]\s+|\s+-+\s+|\s*[\u2013\u2014]\s*|\s+(?:but|so|though|because|bc|cause|cuz)\s+", re.IGNORECASE
)
# words a correction repeats that are no value: verb forms, and the chat around them
_FORM = re.compile(r"(?:ed|ing|ly)$")
# what a correction names after "not": "8 days not 5", "the 14th, not the 4th"; after "it's" or "is"
# the "not" denies the old value in a part of its own ("it's not Tuesday, it's Thursday")
AFTER_NOT = re.compile(r"(?i)(?<!\bis)(?<!'s)(?<!\bits)(?<!\bwas)(?<!\bare)\s*,?\s+not\s+(?:the\s+)?([\w'-]+)")
CHATTER = frozenset(
    """just really actually got get gets going gonna wanna gotta said says told think thought know knew
sorry wait hold hang update correction oops ugh hmm yeah okay ok one thing things way lot bit first last next
new old other same""".split()
)


def parts(text: str, at_and: bool = False) -> list[str]:
    """The parts of a text, in order, without the marks between them (``at_and``: cut at "and" too:
    "my uncle Piet turns 60 and we're taking him to a place called the blue anchor")."""
    found = [p.strip() for p in BOUNDARY.split(text.strip()) if p and p.strip()]
    return [q.strip() for p in found for q in re.split(r"\s+and\s+", p) if q.strip()] if at_and else found


def marked_parts(text: str) -> list[tuple[str, str]]:
    """The parts of a text, each with the mark after it ("" after the last): joined again, the text."""
    pieces = re.split(f"({BOUNDARY.pattern})", text, flags=re.IGNORECASE)
    return [(pieces[i], pieces[i + 1] if i + 1 < len(pieces) else "") for i in range(0, len(pieces), 2)]


def _tokens(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


def repeated(fix: str, old: str, question: str) -> set[str]:
    """The words of ``old`` that ``fix`` says again, in the fix's own form ("monday is the kids class"
    repeats "sessions are mondays and ..."), less the question's, function words, chatter and verb
    forms (a name or number always counts)."""
    asked = _tokens(question)
    asked |= {stem(w) for w in asked}
    said = _tokens(old)
    said |= {stem(w) for w in said}
    out = set()
    for w in _tokens(fix):
        if w not in said and stem(w) not in said:
            continue
        if w in asked or stem(w) in asked or w in STOP_WORDS or w in CHATTER or (len(w) < 2 and not w.isdigit()):
            continue
        if w in salient(old) or (w.isalpha() and len(w) > 2 and not _FORM.search(w)):
            out.add(w)
    return out


def stale_words(fix: str, old: str, question: str) -> set[str]:
    """The words of ``old`` that the correction ``fix`` repeats as the old value, lower-cased: those
    of its old parts, when another part says something new without them ("her name is Oskar, Emil
    was the neighbour's cat"), and what it names after "not" ("make that 8 days not 5"). A statement
    said again ("my cousin Ilse is moving to Graz" twice) names no stale value."""
    said = repeated(fix, old, question)
    if not said:
        return set()
    ps = parts(fix)
    # a part says something new when it repeats nothing, or gives a value of its own beside what it
    # repeats ("tuesdays and thursdays" after "mondays and thursdays")
    fresh = [p for p in ps if (not _tokens(p) & said or _values(p) - said) and _tokens(p) - CHATTER - STOP_WORDS]
    out = {w for p in ps if _old_part(p, said) for w in _tokens(p) & said} if fresh else set()
    return out | {m.group(1).lower() for m in AFTER_NOT.finditer(fix) if m.group(1).lower() in said}


def _old_part(part: str, stale: Collection[str]) -> bool:
    """Does the part name a stale word, give no name, day or number besides the stale ones, and put no
    stale word aside by "not" ("it's thursday not tuesday" says the new day)?"""
    if any(m.group(1).lower() in stale for m in AFTER_NOT.finditer(part)):
        return False
    return bool(_tokens(part) & set(stale)) and not (_values(part) - set(stale))


def _values(part: str) -> set[str]:
    """The names, days and numbers a part gives, lower-cased: a day or month is a name typed in lower
    case too ("its friday at 10 now" says the new day)."""
    return salient(part) | {w for w in _tokens(part) if w in TIME_NAMES or stem(w) in TIME_NAMES}


def without_stale(text: str, stale: Collection[str]) -> str:
    """``text`` without its parts that only name the old value (``stale``: ``stale_words``), each
    with the mark after it; the text as it is when nothing else would remain but chatter."""
    if not stale:
        return text
    text = _not_stale(text, stale)
    spans = marked_parts(text.strip())
    kept = [(p, mark) for p, mark in spans if not (p.strip() and _old_part(p, stale))]
    if len(kept) == len(spans) or not any(_tokens(p) - CHATTER - STOP_WORDS for p, _ in kept):
        return text
    # a part goes with the mark after it; the last one kept ends the text
    return "".join(p + mark for p, mark in kept[:-1]) + kept[-1][0]


def _not_stale(text: str, stale: Collection[str]) -> str:
    """``text`` without the stale words it puts aside by "not" ("thursday not tuesday" -> "thursday")."""
    drop = lambda m: "" if m.group(1).lower() in stale else m.group(0)  # noqa: E731
    return AFTER_NOT.sub(drop, text)


def carries_stale(text: str, stale: Collection[str]) -> bool:
    """Does a text (the model's answer) say one of the stale words?"""
    return bool(_tokens(text) & set(stale))
