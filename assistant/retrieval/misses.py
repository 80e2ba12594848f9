"""Misses: evicted turns the retrieval step would have wanted for a message (closer to it than
anything offered), logged, or restored when the conversation allows a second chance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Miss:
    """An evicted turn the retrieval step would have wanted (closer to the message than anything
    offered); logged as a miss, or restored when the conversation allows a second chance."""

    turn: int
    similarity: float


def similarities(message_vec: np.ndarray, vectors: Sequence[np.ndarray]) -> np.ndarray:
    """Cosine of each (normalised) vector with the message's, as float32."""
    if not vectors:
        return np.zeros(0, dtype=np.float32)
    return np.vstack(vectors).astype(np.float32, copy=False) @ np.asarray(message_vec, np.float32)


def find_misses(
    message_vec: np.ndarray, evicted: Sequence, best_offered_sim: float | None, threshold: float
) -> list[Miss]:
    """Evicted turns closer to the message than every offered turn, and at least ``threshold``.

    Most similar first (ties: older first). With nothing offered, only the threshold applies.
    """
    sims = similarities(message_vec, [c.vector for c in evicted])
    misses = [
        Miss(c.number, round(float(s), 6))
        for c, s in zip(evicted, sims)
        if float(s) >= threshold and (best_offered_sim is None or float(s) > best_offered_sim)
    ]
    return sorted(misses, key=lambda m: (-m.similarity, m.turn))
