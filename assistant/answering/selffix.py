"""A turn that corrects itself: the value it takes back and the value it gives.

People take a value back in the same message they said it in: "he quoted me £340 for new pads and
discs. no sorry, £430, i misread his handwriting", "my phone contract is $38 a month - no wait, they
raised it, it's $42 now", "dessert will be a lemon tart. oh wait, my partner vetoed that, we're doing
a crumble instead". Quoted whole, the answer carries the old value beside the new one and reads as
both; quoted up to the first sentence, it gives the old one. So:

* **The cue** (``TAKE_BACK``) comes after something said, at a sentence or clause boundary ("no
  wait", "oh wait", "no sorry", "oh no actually", "sorry,", "wait,", "hang on", "scratch that", "i
  mean", "make that", "my mistake", "but correction:", "typo sorry,", "ignore that number", "well it
  was, i switched it to"), and words
  follow it; a two-word cue may follow a number or code with no mark at all ("its thursday at 10:15 no wait
  sorry 11:40", ``TAKE_BACK_AFTER_VALUE``).
* **The part taken back** is the last part before the cue (``parts.marked_parts``: a sentence,
  or a clause cut at a comma, dash, semicolon): what was said just before is what is corrected ("it's on
  the 29th, and it's 35 a head. no hang on, 38 a head": the 29th stands).
* **Only what the fix replaces**: a part that says a name when the fix gives none (a name beside the
  number or day corrected: "an Airbnb in Alfama for 6 nights... actually no, 8 nights", "my son Mateo
  has his school play on the 22nd, no sorry, the 23rd") says more than is taken back, and the turn is
  left whole; numbers and days beside the corrected one go with it ("dentist is tuesday at 10...
  wait no, wednesday").
* ``self_fixed`` gives the turn without that part, and the names and numbers only that part said (the
  stale values a model's answer may not carry).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.answering.note import salient
from assistant.answering.parts import marked_parts
from assistant.retrieval.lexical import words

# a take-back cue at a boundary: after a sentence end, a comma, semicolon, colon or dash
TAKE_BACK = re.compile(
    r"(?i)(?:(?<=[.!?,;:\u2013\u2014])|(?<=\s-)|(?<=\s--))\s*"
    r"(?P<cue>(?:(?:but|and)\s+)?(?:oh,?\s+|typo,?\s+|actually,?\s+(?=ignore))?(?:no,?\s+(?:wait|sorry|hang\s+on|hold\s+on|actually)|"
    r"wait,?\s+no|actually,?\s+no|hang\s+on|hold\s+on|scratch\s+that|i\s+mean[t]?|make\s+that|or\s+rather|correction|"
    r"my\s+(?:mistake|bad)|ignore\s+that(?:\s+number|\s+one|\s+bit)?|"
    # "its the big grey one, well it was, i switched it to teal": what it was, then what changed it
    r"(?:well,?\s+)?(?:it|that)\s+was(?=,?\s+(?:but\s+)?(?:i|we|they)\s+(?:switched|changed|swapped)\b)|"
    # alone, "wait", "sorry", "apologies" and a sentence's opening "actually" take back only when a mark
    # follows ("sorry, the 18th", "Actually, I've just checked the email again and it says 9:15"), not in
    # a sentence of their own ("wait for me at the gate", "sorry for the spam")
    r"(?:wait|sorry|apologies)(?=\s*[,.;:!\u2026-])|(?<=[.!?]\s)actually(?=,)))\b"
)
# the cues that may open a sentence saying something else ("Sorry, I'm all over the place today."):
# they take back only when the fix gives a value of its own
WEAK = re.compile(r"(?i)^(?:(?:but|and)\s+)?(?:oh,?\s+)?(?:sorry|apologies|actually)$")


# a cue typed straight after the value it takes back, with no mark ("its thursday at 10:15 no wait
# sorry 11:40", "QX48817 no sorry QX48871", "they quoted £45 scratch that £65", "its coming tuesday no
# wait wednesday"): only the two-word cues, only after a number, a code or a day
TAKE_BACK_AFTER_VALUE = re.compile(
    r"(?i)(?:(?<=\d)|(?<=day))\s+(?P<cue>no,?\s+(?:wait|sorry|actually)|wait,?\s+no|actually,?\s+no|sorry,?\s+no|"
    r"scratch\s+that|i\s+mean[t]?)\b"
)


@dataclass(frozen=True)
class Fixed:
    """``text``: the turn without the part taken back; ``stale``: the names and numbers (lower case)
    only that part said."""

    text: str
    stale: frozenset[str]


def self_fixed(text: str, alone: bool = False) -> Fixed | None:
    """The turn without the part its own correction takes back, or None when it takes nothing back
    (no cue after something said, or nothing said after the cue). A part taken back that also says a
    name the fix does not ("Staying at an Airbnb in Alfama for 6 nights... actually no, 8 nights")
    leaves the turn whole (None), unless ``alone``: then the fix by itself, with the numbers and days
    it replaces as stale ("actually no, 8 nights"), for a question that asks the number."""
    cues = sorted([*TAKE_BACK.finditer(text), *TAKE_BACK_AFTER_VALUE.finditer(text)], key=lambda m: m.start())
    for m in cues:
        before, after = text[: m.start()].rstrip(), text[m.end() :]
        if not (words(before) or _values(before)) or not (words(after) or _values(after)):
            continue
        if WEAK.match(m.group("cue")) and not _values(after):
            continue
        spans = marked_parts(before)
        while len(spans) > 1 and not spans[-1][0].strip():
            spans.pop()  # the cue's own mark ends ``before``: its last part is empty
        taken = spans[-1][0]
        kept = "".join(p + mark for p, mark in spans[:-1])
        fix = text[m.start() :].strip()
        stale = _values(taken) - _values(fix) - _values(kept)
        if any(_named(v) for v in stale) and not any(_named(v) for v in _values(fix)):
            # "an Airbnb in Alfama for 6 nights... actually no, 8 nights": Alfama stands
            numbers = frozenset(v for v in stale if not _named(v))
            return Fixed(fix, numbers) if alone and numbers else None
        return Fixed(f"{kept}{fix}" if kept else fix, frozenset(stale))
    return None


def _named(value: str) -> bool:
    """A name, not a number ("alfama", not "6" or "18th")."""
    return not any(ch.isdigit() for ch in value)


def _values(text: str) -> set[str]:
    """The names and numbers of a text, lower case, with a currency sign or "k" stripped ("£430",
    "5k" say 430 and 5)."""
    return {w.lstrip("$\u00a3\u20ac").removesuffix("k") for w in salient(text)} | {
        w.lower() for w in re.findall(r"\d[\d,.]*\d|\d", text)
    }
