"""The two ends of an event: a flight lands or takes off, a child is dropped off or picked up, a
shop opens or closes, a shift starts or finishes, a hotel is checked into or out of.

People tell one end and later ask the other ("flight lands at 7:20" / "what time does our flight
take off?"). The clause holds a value of the asked kind and says the asked thing, yet its value is
the other end's: no answer, and no guess either. A clause that says both ends, or a range ("open 6
till 10"), holds the asked end too and is left to the other rules.
"""

from __future__ import annotations

import re

# each event's two ends, as people type them (a verb in any tense, or its noun)
ENDS = (
    (
        r"land(?:s|ed|ing)?|arriv(?:e|es|ed|ing|al)|touch(?:es|ed)? down|gets? in",
        r"take(?:s)? off|taking off|took off|take-?off|depart(?:s|ed|ing|ure)?|fl(?:y|ies|ew) out|leav(?:e|es|ing)",
    ),
    (
        r"drop(?:s|ped|ping)? (?:\w+ ){0,2}(?:off|back)|drop-?off",
        r"pick(?:s|ed|ing)? (?:\w+ ){0,2}up|pick-?up|collect(?:s|ed|ing|ion)?",
    ),
    (r"open(?:s|ed|ing)?", r"clos(?:e|es|ed|ing)"),
    (r"start(?:s|ed|ing)?|begin(?:s|ning)?|began|kicks? off", r"finish(?:es|ed|ing)?|end(?:s|ed|ing)?"),
    (r"check(?:s|ed|ing)? in|check-in", r"check(?:s|ed|ing)? out|check-?out"),
)
_ENDS = [tuple(re.compile(rf"(?i)\b(?:{e})\b") for e in pair) for pair in ENDS]
# two values joined as a span ("6 till 10", "9am-5pm", "from 8 to 4"): both ends said
SPAN = re.compile(r"(?i)\d\S*\s*(?:-|–|to|till|til|until)\s*\d")


def other_end(clause: str, question: str) -> bool:
    """Does the clause say only the other end of an event whose one end the question asks about?"""
    if SPAN.search(clause):
        return False
    for first, second in _ENDS:
        for asked, other in ((first, second), (second, first)):
            if asked.search(question) and not other.search(question):
                if other.search(clause) and not asked.search(clause):
                    return True
    return False
