"""The verdict of a turn's settled cites: whether the answers that leaned on it after its lag window stood.

Inside the lag window the evidence multiplies the answers' correctness into a belief (``Evidence.measure``);
after it, a cite adds its correctness to the settled sum, so a wrong answer there adds nothing, and
said nothing against the turn. ``SettledBelief`` keeps, per turn, the same product over the cites
after the window: 1 while every answer that leaned on the turn later stood, ``wrong ** weight`` per
answer judged wrong. A wrong answer is then evidence against a turn whenever it comes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memory.types import Citation


class SettledBelief:
    """Per turn: (wrong weight, cites read, product), extended in log order as cites arrive.

    The product is taken in the log's order and only extended, so a layer rebuilt from the
    database computes the same floats; feedback on an answer drops the entries of the turns it cited
    (``forget``). A decision costs the candidates' cites not read before.
    """

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[int, tuple[float, int, float]] = {}

    def forget(self, turn: int) -> None:
        self._cache.pop(turn, None)

    def of(
        self,
        numbers: np.ndarray,
        wrong: float,
        lag: int,
        by_turn: Mapping[int, Sequence[Citation]],
        belief: Callable[[Citation, float], float],
    ) -> np.ndarray:
        """The product, per turn in ``numbers``, over its cites at steps >= arrival + ``lag`` (turn n
        arrives at step n) of ``belief(cite, wrong)``: 1 for a turn without such cites."""
        out = np.ones(len(numbers))
        cache = self._cache
        for k, turn in enumerate(numbers.tolist()):
            cites = by_turn.get(turn)
            if not cites:
                continue
            memo = cache.get(turn)
            read, product = (memo[1], memo[2]) if memo is not None and memo[0] == wrong else (0, 1.0)
            n = len(cites)
            if read < n:
                end = turn + lag
                for c in cites[read:]:
                    if c.step >= end:
                        product *= belief(c, wrong)
                cache[turn] = (wrong, n, product)
            out[k] = product
        return out
