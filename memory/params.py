"""A policy's parameters, each declared once: ``param(default, low, high)`` makes a dataclass field
that carries its kind (the default's type, int or float) and the closed range it may take.

The parameter list (``Policy.params``), the checks a saved file or a setting goes through
(``memory.policies.check_params``) and the property test that runs every parameter at both ends of
its range all read that declaration. A range is one the policy survives: nothing overflows at
either end. To add a parameter to a policy: ``name: float = param(default, low, high)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real


@dataclass(frozen=True)
class ParamSpec:
    """What one policy parameter may be: ``kind`` int or float (an int is a fine float; a float,
    even ``2.0``, is not an int), and the closed range [low, high] it must lie in."""

    kind: type
    low: float
    high: float

    def check(self, policy: str, key: str, value) -> None:
        """A ``ValueError`` naming the parameter and its range unless ``value`` is one it may take."""
        wanted = "an integer" if self.kind is int else "a number"
        if (
            isinstance(value, bool)
            or not isinstance(value, Real)
            or (self.kind is int and not isinstance(value, Integral))
        ):
            raise ValueError(f"{policy} parameter {key!r} must be {wanted}, got {short(value)}")
        # compare before any float(): a huge int stays exact, and float(10**4300) would raise
        if not (isinstance(value, Integral) or math.isfinite(value)) or not self.low <= value <= self.high:
            raise ValueError(
                f"{policy} parameter {key!r} must be {wanted} in [{self.low:g}, {self.high:g}], got {short(value)}"
            )


def param(default: int | float, low: float, high: float):
    """Declare a policy parameter (a dataclass field): its default, and the closed range [low, high]
    the policy survives. Its kind is the default's type: write ``0.0``, not ``0``, for a float."""
    if type(default) not in (int, float) or not low <= default <= high:
        raise TypeError(f"a parameter's default must be an int or a float in [{low}, {high}], got {default!r}")
    return field(default=default, metadata={"param": ParamSpec(type(default), low, high)})


def short(value) -> str:
    """A value as an error message may quote it (a 4,300-digit int or a long string, shortened)."""
    if isinstance(value, int) and value.bit_length() > 64:  # repr() of a 4,300-digit int raises
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"
