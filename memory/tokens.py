"""Token counting, as the memory layer sees it: a ``TokenCounter`` prices a turn in tokens of the
model in use (the budget is counted in tokens, never in turns).

Only the protocol and a pure word-based estimate live here; counters that need files (tiktoken's
offline encodings, a model's own tokenizer) are in ``assistant/models/tokens.py``.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable


@runtime_checkable
class TokenCounter(Protocol):
    """What the memory layer needs to price a turn. ``exact`` is False for estimates."""

    name: str
    exact: bool

    def count(self, text: str) -> int: ...

    def describe(self) -> str: ...


class WordsCounter:
    """A crude estimate (words x 1.3, rounded up) for benchmarks that must not depend on tiktoken."""

    name = "words*1.3"
    exact = False

    def count(self, text: str) -> int:
        return math.ceil(len(text.split()) * 1.3)

    def describe(self) -> str:
        return "estimated token counts: words x 1.3"
