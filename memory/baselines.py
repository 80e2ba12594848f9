"""The policy base and the baselines every benchmark table compares ``measured`` with.

A policy gets the candidate turns (active, unprotected, unpinned), the evidence (the raw citation
log and the correctness signals) and ``now``; it returns one importance per candidate (higher means
"keep"). It keeps no state between decisions and deletes nothing: the layer evicts the lowest first,
ties older turn first (``MemoryLayer._ranked``).

* ``fifo``, ``lru``: recency of arrival, of the last citation.
* ``accumulate`` (H2O-like), ``window`` (TOVA/SnapKV-like): citation counts, all or recent.
* ``userfirst``, ``largest``: one-line rules that read no evidence at all, the strongest such rules
  for a person talking with an assistant (there, nearly all the evidence a later question needs is
  in the person's own turns, which are a fraction of the size of the answers). A memory that
  measures must at least match them.
* ``userfirst_largest``, ``userlru``: the same split by role, then within the assistant's turns the
  largest first (the user's oldest first), or ``lru`` within each role. Of the one-line rules tried
  beside them (``docs/bench/one_line_rules.txt``) these two were the only ones above both
  ``userfirst`` and ``largest`` somewhere; ``userlru`` is ``lru`` where every turn is the user's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, is_dataclass

import numpy as np

from memory.evidence import Evidence
from memory.params import ParamSpec, param
from memory.types import TurnState


class Policy:
    """Base: subclasses override ``scores``. ``lag`` overrides the conversation's lag when set."""

    name: str = "policy"
    lag: int | None = None
    description: str = ""

    def scores(self, candidates: Sequence[TurnState], evidence: Evidence, now: int) -> list[float]:
        raise NotImplementedError

    def importances(
        self,
        numbers: np.ndarray,
        arrived: np.ndarray,
        tokens: np.ndarray,
        evidence: Evidence,
        now: int,
        turn_at: Callable[[int], TurnState],
    ) -> np.ndarray:
        """``scores`` for candidates given as columns, as the layer has them (numbers, arrival
        steps, tokens, in candidate order; ``turn_at(k)`` is candidate k's ``TurnState``).

        The default builds the candidates and calls ``scores``; a policy that can score the columns
        directly overrides it (``Measured``), and must then give exactly what ``scores`` gives.
        """
        candidates = [turn_at(k) for k in range(len(numbers))]
        return np.array(self.scores(candidates, evidence, now), dtype=np.float64)

    @classmethod
    def param_specs(cls) -> dict[str, ParamSpec]:
        """The policy's parameters and what each may be, read from its fields declared with ``param``."""
        if not is_dataclass(cls):
            return {}
        return {f.name: f.metadata["param"] for f in fields(cls) if "param" in f.metadata}

    def params(self) -> dict:
        """The parameters in force, by name, in declaration order."""
        return {name: getattr(self, name) for name in self.param_specs()}

    def parts(self, candidates: Sequence[TurnState], evidence: Evidence, now: int) -> list[tuple[float, float]] | None:
        """Each candidate's importance split as (prior part, evidence part), summing to ``scores``;
        None for a policy whose importance has no prior (every part is evidence or recency)."""
        return None


class Fifo(Policy):
    name = "fifo"
    description = "evicts the turn that entered memory first"

    def scores(self, candidates, evidence, now):
        return [float(t.protected_since) for t in candidates]


class Lru(Policy):
    name = "lru"
    description = "evicts the turn least recently cited (or arrived)"

    def scores(self, candidates, evidence, now):
        out = []
        for t in candidates:
            last = t.protected_since
            for c in evidence.of(t.number):
                if c.step > last:
                    last = c.step
            out.append(float(last))
        return out


@dataclass
class Accumulate(Policy):
    """H2O-like: total citation weight ever received; no provisional buffer (lag 0)."""

    lag: int | None = param(0, 0, 1_000_000)
    name = "accumulate"
    description = "evicts the turn with the fewest citations ever (H2O-like, no lag)"

    def scores(self, candidates, evidence, now):
        return [float(sum(c.weight for c in evidence.of(t.number))) for t in candidates]


@dataclass
class Window(Policy):
    """TOVA/SnapKV-like: only citations from the last ``window`` steps count."""

    window: int = param(64, 1, 1_000_000_000)
    name = "window"
    description = "evicts the turn with the fewest recent citations"

    def scores(self, candidates, evidence, now):
        since = now - self.window
        return [float(sum(c.weight for c in evidence.of(t.number) if c.step > since)) for t in candidates]


class Userfirst(Policy):
    """Evicts what the user did not write first (answers, system notes), oldest first; then the
    user's own turns, oldest first. "Oldest" is entered memory first, as in ``fifo``: a restored
    turn counts from its restore. Reads no evidence."""

    name = "userfirst"
    description = "evicts the assistant's turns first, oldest first; then the user's, oldest first"

    def scores(self, candidates, evidence, now):
        # every user turn above every other: now + 1 exceeds any step a turn entered memory at
        user = float(now + 1)
        return [float(t.protected_since) + (user if t.role == "user" else 0.0) for t in candidates]


class Largest(Policy):
    """Evicts the largest turn (most tokens) first; among equals the older (lower turn number),
    by the layer's tie rule. Reads no evidence."""

    name = "largest"
    description = "evicts the largest turn first (the oldest among equals)"

    def scores(self, candidates, evidence, now):
        return [-float(t.tokens) for t in candidates]


class UserfirstLargest(Policy):
    """Evicts what the user did not write first, the largest first; then the user's own turns,
    oldest first ("oldest" as in ``fifo``: entered memory first). Reads no evidence."""

    name = "userfirst_largest"
    description = "evicts the assistant's turns first, largest first; then the user's, oldest first"

    def scores(self, candidates, evidence, now):
        # every other turn scores at most 0, every user turn at least 1
        return [float(t.protected_since) + 1.0 if t.role == "user" else -float(t.tokens) for t in candidates]


class Userlru(Policy):
    """Evicts what the user did not write first, the least recently cited (or arrived) first; then
    the user's own turns, the same way: ``lru`` within each group."""

    name = "userlru"
    description = "evicts the assistant's turns first, least recently cited first; then the user's, the same way"

    def scores(self, candidates, evidence, now):
        last = Lru().scores(candidates, evidence, now)
        user = float(now + 1)  # every step a turn entered memory or was cited at is at most now
        return [v + (user if t.role == "user" else 0.0) for t, v in zip(candidates, last)]
