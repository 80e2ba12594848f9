"""Words and numbers that say when: days, months, dates, times of day. Kept apart from ``kinds`` so
that the modules ``kinds`` itself imports (``referents``) may read them too."""

from __future__ import annotations

import re

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_DAYS = " ".join(sorted(WEEKDAYS)) + " weekend tomorrow tonight today yesterday"
_PERIODS = "morning afternoon evening night week weekend month year spring summer autumn fall winter"
# a day, a date or a time of day; an ordinal before a birthday is an age ("her 60th birthday")
TIME_WORDS = re.compile(
    rf"(?i)\b({'|'.join((_MONTHS + ' ' + _DAYS).split())})s?\b"
    r"|\b\d{1,2}(:\d\d|\s?[ap]\.?m\b|(?:st|nd|rd|th)(?!\s+(?:birthday|bday|anniversary)))\b"
    rf"|\b(this|next|last|every|each|in the)\s+({'|'.join(_PERIODS.split())})\b|\b(ago|19\d\d|20\d\d)\b"
)
# a stretch of time, no day: "next month", "this week", "in the spring", "2019"
PERIOD = re.compile(
    rf"(?i)\b(?:this|next|last|every|each|in the)\s+(?:{'|'.join(_PERIODS.split())})\b|\b(?:ago|19\d\d|20\d\d)\b"
)
# an hour of the day and its minutes ("8:45", "6.05"): "88.50" is a price, not a time; "at 8" is an hour,
# and "at 08:30" is one time, not "at 08" and a number ":30"
CLOCK = re.compile(
    r"(?i)\b(?:[01]?\d|2[0-3])[:.][0-5]\d\b|\b\d{1,2}\s?[ap]\.?m\b|o'clock|\b(noon|midday|midnight)\b|\bhalf past\b"
    r"|\bquarter (past|to)\b|\bat (\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b(?![:.]\d)"
)
TIME_NAMES = frozenset((_MONTHS + " " + _DAYS).split())
