"""Eviction policies: small objects that *measure* importance when a decision is made.

A policy gets the candidate turns (active, unprotected, unpinned), the evidence (the raw citation
log and the correctness signals) and ``now``; it returns one importance per candidate (higher means
"keep"). It keeps no state between decisions and deletes nothing: the layer evicts the lowest first.
The base class and the baselines (fifo, lru, accumulate, window, userfirst, largest,
userfirst_largest, userlru) live in ``memory/baselines.py``, ``measured`` in ``memory/measured.py``;
here are the registry ``POLICIES`` and the parameter checks.
Each parameter is declared once, with its range (``memory/params.py``).
"""

from __future__ import annotations

from memory.baselines import (
    Accumulate,
    Fifo,
    Largest,
    Lru,
    Policy,
    Userfirst,
    UserfirstLargest,
    Userlru,
    Window,
)
from memory.measured import Measured
from memory.params import short

__all__ = [
    "POLICIES",
    "Accumulate",
    "Fifo",
    "Largest",
    "Lru",
    "Measured",
    "Policy",
    "Userfirst",
    "Window",
    "check_params",
    "make_policy",
]


POLICIES: dict[str, type[Policy]] = {
    "fifo": Fifo,
    "lru": Lru,
    "accumulate": Accumulate,
    "window": Window,
    "userfirst": Userfirst,
    "largest": Largest,
    "userfirst_largest": UserfirstLargest,
    "userlru": Userlru,
    "measured": Measured,
}


def check_params(name: str, params) -> dict:
    """The parameters, checked against the policy's declarations (``param``): a ``ValueError`` that
    names an undeclared parameter, or a parameter and its allowed range."""
    if not isinstance(params, dict):
        raise ValueError(f"policy parameters must be an object of name: number, got {type(params).__name__}")
    specs = POLICIES[name].param_specs()
    for key, value in params.items():
        if not isinstance(key, str):
            raise ValueError(f"policy parameter names must be strings, got {short(key)}")
        if key not in specs:
            known = ", ".join(specs) or "none"
            raise ValueError(f"{name} has no parameter {short(key)} (its parameters: {known})")
        specs[key].check(name, key, value)
    return params


def make_policy(name: str, **params) -> Policy:
    """Build a policy by name; unknown names and parameters, and values out of their declared
    range (``param``), are clear errors."""
    try:
        factory = POLICIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown policy {short(name)}; choose one of {', '.join(POLICIES)}") from None
    check_params(name, params)
    try:
        return factory(**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for policy {name!r}: {exc}") from None
