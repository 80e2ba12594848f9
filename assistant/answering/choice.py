"""A question that offers the answers: "Does Amara's party start at 2pm or 3pm?", "is my gym induction
at 6:30 or 7:30?", "Are our seats in row 11 or row 12?".

People check what they remember by offering two values, and the statement says one of them in other
words ("it starts at two o'clock", "induction is wednesday at half six", "row eleven"). A quote of the
statement alone leaves the user to translate; the answer names the option first ("2pm. You told me
(turn 3): ..."). So:

* **The options** (``options``): two values of one kind in the question, "or" between them: times
  of day, dates, or numbers with the words after them ("3 working days or 5 working days").
* **The values a statement says** (``values_in``), spoken or written: "two o'clock", "half six",
  "quarter past seven", "twenty past nine", "half four" are times; "the thirty-first of January" is a
  date; "row eleven" and "three working days" are numbers. A time is its hour on a 12-hour clock
  and its minutes ("14:00" is "2pm").
* **The option said** (``chosen``): the first statement among the notes, then among the user's
  statements in memory (those sharing a word with the question first, newest first), that says
  exactly one of the options, with the values it takes back in its own breath left out (``selffix``);
  a number is chosen only by a statement sharing a word with the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.answering.selffix import self_fixed
from assistant.retrieval.lexical import words

_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
_UNITS += "seventeen eighteen nineteen"
NUMBER_WORDS = {w: i for i, w in enumerate(_UNITS.split())}
NUMBER_WORDS |= {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
_ORDINALS += "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
ORDINAL_WORDS = {w: i + 1 for i, w in enumerate(_ORDINALS.split())} | {"twentieth": 20, "thirtieth": 30}
MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november december".split()
    )
}
MONTHS |= {m[:3]: i for m, i in list(MONTHS.items())} | {"sept": 9}

# the pieces the patterns below are built from
_TENS = r"(?:twenty|thirty|forty|fifty)"
_NUM = rf"(?:{_TENS}(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?|{'|'.join(_UNITS.split())}|\d+)"
_HOUR = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MINUTES = rf"(?:{_TENS}(?:[\s-](?:five|one|two|three|four|six|seven|eight|nine))?|ten|fifteen|five|\d{{1,2}})"
_ORD = rf"(?:\d{{1,2}}(?:st|nd|rd|th)|(?:twenty|thirty)?-?\s?(?:{'|'.join(_ORDINALS.split())})|twentieth|thirtieth)"
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|"
_MONTH += r"jun|jul|aug|sept|sep|oct|nov|dec)"

# a time of day, written or said: "14:00", "6.30pm", "2pm", "half six", "quarter past seven", "twenty past
# nine", "two o'clock", "six thirty"
TIMES = re.compile(
    rf"(?i)\b(?P<h1>\d{{1,2}})[:.](?P<m1>[0-5]\d)(?:\s*(?P<p1>[ap]\.?m\b\.?))?(?!\d)"
    rf"|\b(?P<h2>\d{{1,2}})\s*(?P<p2>[ap]\.?m)\b"
    rf"|\bhalf\s+(?:past\s+)?(?P<h3>{_HOUR})\b"
    rf"|\bquarter\s+(?P<qd>past|to)\s+(?P<h4>{_HOUR})\b"
    rf"|\b(?P<m5>{_MINUTES})(?:\s+minutes)?\s+(?P<md>past|to)\s+(?P<h5>{_HOUR})\b"
    rf"|\b(?P<h6>{_HOUR})\s+o'?clock\b"
    rf"|\b(?P<h7>{_HOUR})\s+(?P<m7>{_TENS}(?:[\s-](?:five|one|two|three|four|six|seven|eight|nine))?|fifteen)\b"
)
# a day of the month, with its month when said: "31st of January", "May 3rd", "3 May", "the 24th"
DATES = re.compile(
    rf"(?i)\b(?P<d1>{_ORD})\s+(?:of\s+)?(?P<mo1>{_MONTH})\b|\b(?P<mo2>{_MONTH})\s+(?:the\s+)?(?P<d2>{_ORD}|\d{{1,2}})\b"
    rf"|\b(?P<d3>\d{{1,2}})\s+(?P<mo3>{_MONTH})\b|\bthe\s+(?P<d4>{_ORD})\b(?!\s+(?:of\s+)?{_MONTH})"
)
# a count, in digits or words ("11", "eleven", "twenty-one"); not part of a price, time or decimal
NUMBERS = re.compile(rf"(?i)(?<![\w£$€.,:])(?P<n>{_NUM})(?![\w:]|[.,]\d)")


def _number(text: str) -> int | None:
    text = text.lower().replace("-", " ").strip()
    if text.isdigit():
        return int(text)
    parts = text.split()
    if all(p in NUMBER_WORDS for p in parts):
        return sum(NUMBER_WORDS[p] for p in parts)
    return None


def _ordinal(text: str) -> int | None:
    text = text.lower().replace("-", " ").strip()
    m = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)", text)
    if m:
        return int(m.group(1))
    parts = text.split()
    if parts and parts[-1] in ORDINAL_WORDS and all(p in NUMBER_WORDS for p in parts[:-1]):
        return sum(NUMBER_WORDS[p] for p in parts[:-1]) + ORDINAL_WORDS[parts[-1]]
    return _number(text)


def _times(text: str) -> list[tuple[tuple, tuple[int, int]]]:
    out = []
    for m in TIMES.finditer(text):
        g = {k: v for k, v in m.groupdict().items() if v}
        if "h1" in g:
            h, mins = int(g["h1"]), int(g["m1"])
        elif "h2" in g:
            h, mins = int(g["h2"]), 0
        elif "h3" in g:
            h, mins = _number(g["h3"]), 30
        elif "h4" in g:
            h, mins = _number(g["h4"]), 15
            h, mins = (h - 1, 45) if g["qd"].lower() == "to" else (h, mins)
        elif "h5" in g:
            h, mins = _number(g["h5"]), _number(g["m5"])
            h, mins = (h - 1, 60 - mins) if g["md"].lower() == "to" else (h, mins)
        elif "h6" in g:
            h, mins = _number(g["h6"]), 0
        else:
            h, mins = _number(g["h7"]), _number(g["m7"])
        if h is not None and mins is not None and 0 <= h <= 24 and 0 <= mins < 60:
            out.append((("time", h % 12, mins), m.span()))
    return out


def _dates(text: str) -> list[tuple[tuple, tuple[int, int]]]:
    out = []
    for m in DATES.finditer(text):
        g = {k: v for k, v in m.groupdict().items() if v}
        day = _ordinal(g.get("d1") or g.get("d2") or g.get("d3") or g.get("d4"))
        month = MONTHS.get((g.get("mo1") or g.get("mo2") or g.get("mo3") or "").lower())
        if day is not None and 1 <= day <= 31:
            out.append((("date", day, month), m.span()))
    return out


def _numbers(text: str, taken: list[tuple[int, int]]) -> list[tuple[tuple, tuple[int, int]]]:
    out = []
    for m in NUMBERS.finditer(text):
        n = _number(m.group("n"))
        if n is not None and not any(a <= m.start() < b for a, b in taken):
            out.append((("number", n), m.span()))
    return out


def values_in(text: str, kind: str) -> list[tuple[tuple, tuple[int, int]]]:
    """The values of ``kind`` (``time``, ``date``, ``number``) the text says, each with its span."""
    times, dates = _times(text), _dates(text)
    if kind == "time":
        return times
    if kind == "date":
        return dates
    return _numbers(text, [s for _, s in times + dates])


def _same(a: tuple, b: tuple) -> bool:
    """One value: a date without its month is the same day of any month."""
    if a[0] == "date" and b[0] == "date":
        return a[1] == b[1] and (a[2] is None or b[2] is None or a[2] == b[2])
    return a == b


@dataclass(frozen=True)
class Option:
    text: str  # as the question says it ("3 working days", "row 11", "2pm")
    value: tuple


def options(question: str) -> list[Option]:
    """The two values the question offers, "or" between them, or nothing."""
    if not re.search(r"(?i)\bor\b", question):
        return []
    for kind in ("time", "date", "number"):
        found = values_in(question, kind)
        for (a, (s1, e1)), (b, (s2, e2)) in zip(found, found[1:], strict=False):
            between = question[e1:s2]
            if _same(a, b) or not re.search(r"(?i)\bor\b", between) or len(between.split()) > 6:
                continue
            first = question[s1:e1] + re.split(r"(?i)\s+or\b", between)[0]
            rest = re.split(r"[?!.,;]|\s+(?:or|and|on|at|in)\s+", question[e2:])[0]
            before = question[:s1].split()[-1:] + question[e1:s2].split()[-1:]
            # "row 11 or row 12": the word both values follow is said with them
            lead = before[0] + " " if len(before) == 2 and before[0].lower() == before[1].lower() else ""
            return [Option(lead + first.strip(), a), Option(lead + (question[s2:e2] + rest).strip(), b)]
    return []


def chosen(question: str, notes: Sequence, told: Sequence) -> tuple[Option, object] | None:
    """The option the user's statement says and that statement. Among the user's statements sharing a
    word with the question (``notes`` and ``told``), the newest that says exactly one option: a later
    one corrects an earlier ("update: the party now starts at 3pm"). Else the first of ``notes``, then
    of ``told`` (newest first), that says one ("can i grab my bike from 4:30 ...?" and "guy there said
    i can collect it any time after half four")."""
    offered = options(question)
    if not offered:
        return None
    asked = set(words(question))
    mine = {c.number: c for c in [*told, *notes] if c.role == "user" and not c.content.rstrip().endswith("?")}
    said = {n: hit for n, c in mine.items() if len(hit := _said(c.content, offered)) == 1}
    sharing = [n for n in said if asked & set(words(mine[n].content))]
    if sharing:
        n = max(sharing)
        return said[n][0], mine[n]
    if offered[0].value[0] == "number":
        return None  # a bare number in a statement on another topic says nothing of the options
    for c in [*notes, *reversed(list(told))]:
        if c.number in said:
            return said[c.number][0], mine[c.number]
    return None


def _said(text: str, offered: Sequence[Option]) -> list[Option]:
    """The options the text says, with the values it takes back in its own breath left out."""
    fixed = self_fixed(text, alone=True)
    values = [v for v, _ in values_in(fixed.text if fixed else text, offered[0].value[0])]
    return [o for o in offered if any(_same(o.value, v) for v in values)]
