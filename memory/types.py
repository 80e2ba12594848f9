"""Value types shared by the core, storage and the application layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["user", "assistant", "system"]
ROLES: tuple[str, ...] = ("user", "assistant", "system")


@dataclass(slots=True)
class TurnState:
    """One stored turn as the memory layer sees it (no text: the layer only needs its cost).

    ``number`` is the turn's sequence number in its conversation (1, 2, 3 ...); turn n arrives at
    step n. ``protected_since`` is the step of arrival or of the last restore: the lag counts from it.
    """

    number: int
    role: str
    tokens: int
    arrived: int
    protected_since: int
    active: bool = True
    pinned: bool = False
    prior: float | None = None


@dataclass(frozen=True, slots=True)
class Citation:
    """One piece of evidence: the retrieval step at ``step`` cited ``turn``.

    ``answer_turn`` is the turn the citation was made for (feedback on it changes the citation's
    correctness); ``weight`` is the retrieval step's confidence (1 when unknown).
    """

    turn: int
    step: int
    weight: float = 1.0
    source: str = "retrieval"
    answer_turn: int | None = None


@dataclass(frozen=True, slots=True)
class EvictionRecord:
    """What one eviction decided, and why: the inspector's history is this data, stored."""

    turn: int
    step: int
    importance: float
    runners_up: tuple[tuple[int, float], ...]
    budget: int
    tokens_before: int
    tokens_after: int
    policy: str
    reason: str

    def as_dict(self) -> dict:
        return {
            "step": self.step,
            "turn": self.turn,
            "importance": self.importance,
            "runners_up": [{"turn": t, "importance": s} for t, s in self.runners_up],
            "budget": self.budget,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "policy": self.policy,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """A conversation's memory settings.

    budget: max tokens of active turns. lag: steps a new (or restored) turn stays protected.
    low_watermark: when over budget, evict down to this fraction of the budget (1.0 = just under).
    pin_share: pinned turns may hold at most this share of the budget.
    policy: policy name; policy_params: its parameters (e.g. decay, window).
    """

    budget: int = 2000
    lag: int = 4
    policy: str = "measured"
    low_watermark: float = 1.0
    pin_share: float = 0.5
    policy_params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.budget <= 0:
            raise ValueError(f"budget must be a positive number of tokens, got {self.budget}")
        if self.lag < 0:
            raise ValueError(f"lag must be >= 0 steps, got {self.lag}")
        if not 0.0 < self.low_watermark <= 1.0:
            raise ValueError(f"low_watermark must be in (0, 1], got {self.low_watermark}")
        if not 0.0 <= self.pin_share <= 1.0:
            raise ValueError(f"pin_share must be in [0, 1], got {self.pin_share}")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The layer's state at one moment, as turn numbers (for timelines and the inspector)."""

    step: int
    budget: int
    used_tokens: int
    active: tuple[int, ...]
    protected: tuple[int, ...]
    pinned: tuple[int, ...]
    evicted: tuple[int, ...]
    pinned_tokens: int
    protected_tokens: int

    @property
    def forced_over_budget(self) -> bool:
        """Over budget only because pinned + protected turns alone exceed it (shown, not hidden)."""
        return self.used_tokens > self.budget

    def as_timeline_entry(self) -> dict:
        return {
            "step": self.step,
            "used_tokens": self.used_tokens,
            "budget": self.budget,
            "active": list(self.active),
            "protected": list(self.protected),
            "pinned": list(self.pinned),
        }


class PinRefused(Exception):
    """A pin past the cap (a share of the budget); the message says why and what to do."""


class UnknownTurn(KeyError):
    """An operation named a turn the layer does not hold."""
