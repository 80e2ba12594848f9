"""Value types shared by the core, storage and the application layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from numbers import Integral, Real
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


# What made the memory go over budget, as data (``EvictionRecord.cause``). ``cause_turn`` names the
# turn that arrived, was pinned, unpinned or restored; a settings change and a bare enforcement
# ("budget") name none. ``auto_restore`` is the second chance (a miss restored by the service).
CAUSES: tuple[str, ...] = ("arrival", "pin", "unpin", "restore", "auto_restore", "settings", "budget")
TURN_CAUSES = frozenset({"arrival", "pin", "unpin", "restore", "auto_restore"})


def eviction_reason(cause: str, cause_turn: int | None, *, step: int, budget: int, policy: str) -> str:
    """The record's reason in words, composed from its cause (the one place the wording lives).

    Raises ``ValueError`` for an unknown cause, or a turn missing (or given) where the cause needs one
    (or none)."""
    if cause not in CAUSES:
        raise ValueError(f"unknown eviction cause {cause!r}; one of {', '.join(CAUSES)}")
    if (cause in TURN_CAUSES) != (cause_turn is not None):
        raise ValueError(f"eviction cause {cause!r} {'needs' if cause in TURN_CAUSES else 'takes no'} cause_turn")
    if cause == "arrival":
        return f"over budget after turn {cause_turn} arrived"
    if cause in TURN_CAUSES:
        action = "restore" if cause == "auto_restore" else cause
        return f"over budget after {action} of turn {cause_turn}"
    if cause == "settings":
        return f"over budget after settings changed (budget {budget}, policy {policy})"
    return f"over budget at step {step}"


@dataclass(frozen=True, slots=True)
class EvictionRecord:
    """What one eviction decided, and why: the inspector's history is this data, stored.

    ``cause`` / ``cause_turn`` say what pushed the memory over budget (see ``CAUSES``); ``reason``
    is the same in words, as written when the eviction happened. ``as_dict`` is the record as
    replays and ``lagmem ask --json`` print it (the cause is in its reason)."""

    turn: int
    step: int
    importance: float
    runners_up: tuple[tuple[int, float], ...]
    budget: int
    tokens_before: int
    tokens_after: int
    policy: str
    reason: str
    cause: str = "budget"
    cause_turn: int | None = None

    def __post_init__(self) -> None:
        if self.cause not in CAUSES:
            raise ValueError(f"unknown eviction cause {self.cause!r}; one of {', '.join(CAUSES)}")

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

    # a new conversation's budget and lag: what ``lagmem bench holdout`` chooses for a person and an
    # assistant (docs/bench/holdout.json, "defaults"); a model profile may lower the budget
    budget: int = 4000
    lag: int = 0
    policy: str = "measured"
    low_watermark: float = 1.0
    pin_share: float = 0.5
    policy_params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # types first: a bool, a string or a float where a count is expected is refused here,
        # not at the conversation's first eviction; a huge int is refused by its range.
        for name, value in (("budget", self.budget), ("lag", self.lag)):
            if isinstance(value, bool) or not isinstance(value, Integral):
                raise ValueError(f"{name} must be an integer, got {type(value).__name__}")
        for name, value in (("low_watermark", self.low_watermark), ("pin_share", self.pin_share)):
            if isinstance(value, bool) or not isinstance(value, Real):
                raise ValueError(f"{name} must be a number, got {type(value).__name__}")
        if not isinstance(self.policy, str):
            raise ValueError(f"policy must be a policy name, got {type(self.policy).__name__}")
        if not isinstance(self.policy_params, dict):
            raise ValueError(f"policy_params must be an object, got {type(self.policy_params).__name__}")
        if not 0 < self.budget <= MAX_BUDGET:
            raise ValueError(
                f"budget must be a positive number of tokens up to {MAX_BUDGET:,}, got {number_text(self.budget)}"
            )
        if not 0 <= self.lag <= MAX_LAG:
            raise ValueError(f"lag must be between 0 and {MAX_LAG:,} steps, got {number_text(self.lag)}")
        if not 0.0 < self.low_watermark <= 1.0:
            raise ValueError(f"low_watermark must be in (0, 1], got {number_text(self.low_watermark)}")
        if not 0.0 <= self.pin_share <= 1.0:
            raise ValueError(f"pin_share must be in [0, 1], got {number_text(self.pin_share)}")

    # ----- (de)serialising: the one place the settings become plain data and back ----------------
    def to_dict(self) -> dict:
        """The settings as plain data, in field order (``SETTING_KEYS``): a file's header, a
        conversation row's columns, JSON. ``policy_params`` is a copy."""
        out = {key: getattr(self, key) for key in SETTING_KEYS}
        out["policy_params"] = dict(self.policy_params)
        return out

    @classmethod
    def from_dict(cls, data: Mapping, *, defaults: MemorySettings | None = None) -> MemorySettings:
        """Settings from plain data (a file's header, a row's columns); other keys (a header's
        title) are ignored. A key it lacks comes from ``defaults``, except that ``policy_params``
        does only when the policy is ``defaults``' own (parameters belong to the policy they were
        written for). Checked as ``MemorySettings`` checks; the shares come out as floats."""
        base = defaults if defaults is not None else cls()
        values = {key: data[key] for key in SETTING_KEYS if key in data}
        if "policy_params" not in values:
            same = values.get("policy", base.policy) == base.policy
            values["policy_params"] = dict(base.policy_params) if same else {}
        else:
            values["policy_params"] = _copy(values["policy_params"])
        settings = replace(base, **values)  # checks types and ranges before float() below
        return replace(settings, low_watermark=float(settings.low_watermark), pin_share=float(settings.pin_share))

    def override(self, **changes) -> MemorySettings:
        """These settings with ``changes`` (a value of None keeps the current one). Another policy
        starts from its own default parameters unless ``policy_params`` is among the changes."""
        unknown = set(changes) - set(SETTING_KEYS)
        if unknown:
            raise ValueError(f"unknown setting {sorted(unknown)[0]!r}; the settings are {', '.join(SETTING_KEYS)}")
        changes = {key: value for key, value in changes.items() if value is not None}
        if changes.get("policy", self.policy) != self.policy and "policy_params" not in changes:
            changes["policy_params"] = {}
        return replace(self, **changes)

    @classmethod
    def of(cls, row) -> MemorySettings:
        """The settings an object carries as attributes of the same names (a conversation row)."""
        return cls.from_dict({key: getattr(row, key) for key in SETTING_KEYS})


def _copy(params):
    """A dict's copy (so settings never share a caller's mutable dict); anything else as it is, for
    ``MemorySettings`` to refuse with its message."""
    return dict(params) if isinstance(params, dict) else params


SETTING_KEYS: tuple[str, ...] = tuple(f.name for f in fields(MemorySettings))


MAX_BUDGET = 1_000_000_000
MAX_LAG = 1_000_000


def number_text(value) -> str:
    """A number for an error message (a 4,300-digit int has no repr)."""
    return (
        f"an integer of {value.bit_length()} bits"
        if isinstance(value, int) and value.bit_length() > 64
        else repr(value)
    )


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
