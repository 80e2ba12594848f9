"""The sentences of a turn, and which of them answers a question.

A turn in chat often holds several things ("Radomir here. i work night shifts as a paramedic in
Olomouc"); a quote cut to its first sentence ("Radomir here.") answers nothing. The sentence that
answers holds a value of the asked kind (``assistant.answering.kinds``) and speaks of the question:
it shares a word with it (or a related one), else its embedding is the closest to the question's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assistant.answering.kinds import has_kind
from assistant.answering.message import SENTENCE
from assistant.answering.related import shares_word


def memo(embed: Callable[[str], np.ndarray], known: dict[str, np.ndarray]) -> Callable[[str], np.ndarray]:
    """``embed`` computing each text once, starting from the vectors already ``known`` (a stored turn's
    vector is its text's: a turn of one sentence costs nothing)."""
    cache = dict(known)

    def embedded(text: str) -> np.ndarray:
        if text not in cache:
            cache[text] = embed(text)
        return cache[text]

    return embedded


def sentences(text: str) -> list[str]:
    """The sentences of a text, in order ("Dr. Okafor" is not an end)."""
    return [s.strip() for s in SENTENCE.split(text.strip()) if s.strip()]


def answering(
    text: str, question: str, kind: str | None, embed: Callable[[str], np.ndarray] | None = None
) -> list[str]:
    """The sentences of ``text`` that answer ``question``, in their order: those holding a value of
    ``kind`` when some do, among them those sharing a word with the question, else the one closest to
    it by embedding (``embed``: a unit vector per text), else all of them."""
    found = sentences(text)
    if len(found) < 2:
        return found
    typed = [s for s in found if has_kind(s, kind)] or found
    shared = [s for s in typed if shares_word(question, s)]
    if shared:
        return shared
    if embed is None or len(typed) == 1:
        return typed
    q = embed(question)
    return [max(typed, key=lambda s: float(np.dot(q, embed(s))))]


def closeness(text: str, question: str, kind: str | None, embed: Callable[[str], np.ndarray]) -> float:
    """How close the text's sentences holding a value of ``kind`` come to the question (the greatest
    cosine of their embeddings; ``embed`` gives unit vectors): "been bouldering at a gym called
    Cragstone for 2 years now" answers "How long have I been going there?" better than "finally sent
    my first V5 yesterday!", though both hold a number."""
    found = [s for s in sentences(text) if has_kind(s, kind)] or sentences(text) or [text]
    q = embed(question)
    return max(float(np.dot(q, embed(s))) for s in found)
