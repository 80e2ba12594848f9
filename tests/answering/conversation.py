"""Stand-ins for stored turns and a retrieval step, shared by the answer-path tests."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Turn:
    number: int
    role: str
    content: str
    vector: None = None


@dataclass
class Step:
    cited: list
    ranked: tuple


def turns(*texts: str) -> list[Turn]:
    """User turns at odd numbers, each followed by an assistant's 'Noted.'."""
    out = []
    for i, t in enumerate(texts):
        out += [Turn(2 * i + 1, "user", t), Turn(2 * i + 2, "assistant", "Noted.")]
    return out
