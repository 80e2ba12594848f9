"""The verdicts on a turn: its arrival episode's, and its settled cites'; both read an answer's
correctness, ``credit`` (the feedback on it as a factor).

**The arrival episode.** The cites a turn gets while the conversation is still on it (inside its lag
window, and each later cite within ``burst`` steps of the one before, the turn's arrival counting as
the first) are one piece of evidence, not one per cite: the retrieval step follows the topic, so a
turn cited three times in a burst after it was said was needed once, as one cited once was. The
episode is judged as a whole (``Evidence.measure``): its belief is the product of its answers'
correctness, whatever the number of cites. ``joins`` says which cites belong to it; it is a function
of the cites' steps only, so feedback never moves it and a rebuilt layer finds the same episode.
With lag 0 there is no lag window's verdict, and no arrival episode: every cite is settled.

**The settled cites.** After the episode, a cite adds its correctness to the settled sum, so a wrong
answer there adds nothing, and said nothing against the turn. ``SettledBelief`` keeps, per turn, the
product over the cites after the episode: 1 while every answer that leaned on the turn later stood,
``wrong ** weight`` per answer judged wrong. A wrong answer is then evidence against a turn whenever
it comes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memory.types import Citation


def credit(value: float | None, wrong: float) -> float:
    """How much a citation counts given the feedback on the answer that made it (``correctness``).

    No feedback or feedback >= 0: 1 (the answer stood). Feedback -1 (wrong): ``wrong``. Feedback in
    (-1, 0), an answer that was partly right (it had some of what it needed), gets partial credit
    in proportion: ``wrong + (1 - wrong) * (1 + value)``; -0.5 is halfway between wrong and right.
    """
    if value is None or value >= 0:
        return 1.0
    if value <= -1.0:
        return wrong
    return wrong + (1.0 - wrong) * (1.0 + value)


def episode_burst(lag: int, burst: int) -> int:
    """The burst a turn's arrival episode extends by: ``burst`` steps, none at lag 0 (no verdict)."""
    return burst if lag > 0 and burst > 0 else 0


def joins(step: int, prev: int, end: int, burst: int) -> bool:
    """Whether a cite at ``step`` belongs to its turn's arrival episode, ``prev`` being the step of
    the episode's last cite so far (the turn's arrival when none), ``end`` the first step after the
    lag window and ``burst`` from ``episode_burst``: inside the lag window, or within ``burst`` steps
    of the episode's last cite. Cites are read in step order and the first that does not join ends
    the episode."""
    return step < end or (burst > 0 and step - prev <= burst)


def episode_closes(end: int, prev: int, burst: int) -> int:
    """The first step at which no new cite can join the episode (so its verdict is final)."""
    return max(end, prev + burst + 1) if burst else end


class SettledBelief:
    """Per turn: (wrong weight and burst, cites read, product, episode's last step or -1 once ended),
    extended in log order as cites arrive.

    The product is taken in the log's order and only extended, so a layer rebuilt from the
    database computes the same floats; feedback on an answer drops the entries of the turns it cited
    (``forget``). A decision costs the candidates' cites not read before.
    """

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[int, tuple[tuple, int, float, int]] = {}

    def forget(self, turn: int) -> None:
        self._cache.pop(turn, None)

    def of(
        self,
        numbers: np.ndarray,
        wrong: float,
        lag: int,
        by_turn: Mapping[int, Sequence[Citation]],
        belief: Callable[[Citation, float], float],
        burst: int = 0,
    ) -> np.ndarray:
        """The product, per turn in ``numbers``, over its cites after its arrival episode (``joins``;
        turn n arrives at step n) of ``belief(cite, wrong)``: 1 for a turn without such cites."""
        out = np.ones(len(numbers))
        cache = self._cache
        burst = episode_burst(lag, burst)
        key = (wrong, burst)
        for k, turn in enumerate(numbers.tolist()):
            cites = by_turn.get(turn)
            if not cites:
                continue
            memo = cache.get(turn)
            read, product, prev = (memo[1], memo[2], memo[3]) if memo is not None and memo[0] == key else (0, 1.0, turn)
            n = len(cites)
            if read < n:
                end = turn + lag
                for c in cites[read:]:
                    if prev >= 0 and joins(c.step, prev, end, burst):
                        prev = c.step
                        continue
                    prev = -1  # the episode has ended: this cite and every later one are settled
                    product *= belief(c, wrong)
                cache[turn] = (key, n, product, prev)
            out[k] = product
        return out
