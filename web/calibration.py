"""The inspector's caption for the conversation's own calibration of the need prior: per role, how
often this conversation came back to its turns against what their priors expected, and the factor
``measured`` puts on their prior odds now; the same for a turn already cited and for the turns beside
one (``memory.arrivals.Arrivals.calibration``)."""

from __future__ import annotations

import numpy as np

from memory.policies import Measured


def calibration_text(layer) -> str | None:
    """One sentence for a ``measured`` memory whose turns have priors, else None."""
    policy = layer.policy
    if not isinstance(policy, Measured) or not policy.recalibrate:
        return None
    cal = layer.evidence.calibration(
        layer.step,
        policy.calibration_strength,
        np.array(layer.active_numbers(), dtype=np.int64),
        *policy.reuse_prior(layer.evidence),
        policy.nearby_prior(layer.evidence)[0],
    )
    rows = cal.rows()
    if not rows:
        return None
    if len(rows) == 1:
        r = rows[0]
        return (
            f"Calibration from this conversation: the {r['turns']} turns in memory past their lag window are all "
            f"{r['role']} turns ({r['cited later']} cited later, {r['expected by the prior']:.1f} expected by "
            "the need prior), so their priors are used as they are."
        )
    parts = [
        f"{r['role']} ×{r['factor']:.2f} ({r['cited later']} of {r['turns']} cited later, "
        f"{r['expected by the prior']:.1f} expected)"
        for r in rows
    ]
    return (
        f"Calibration from this conversation (the turns in memory, step {cal.start}): the need prior's odds by role, "
        + "; ".join(parts)
        + ". Turns this conversation comes back to more than their priors said count more."
        + _reuse(cal)
        + _nearby(cal)
        + _confirmed(layer, policy)
    )


def _confirmed(layer, policy: Measured) -> str:
    """The factor on the evidence of the turns this conversation's lag windows confirmed (else nothing)."""
    conf = policy.confirmation_now(layer.candidates(), layer.evidence, layer.step)
    if conf is None or not conf.confirmed:
        return ""
    return (
        f" Evidence counts ×{conf.gain**policy.confirmations:.2f}: {conf.back} of the {conf.confirmed} turns "
        f"their lag window confirmed were cited again later, {conf.expected:.1f} expected at the others' rate."
    )


def _reuse(cal) -> str:
    """The factor on a turn already shown needed, when the conversation has any (else nothing)."""
    if not cal.needed or cal.reuse == 1.0:
        return ""
    r = cal.reuse_row()
    return (
        f" A turn already cited counts ×{r['factor']:.2f}: {r['cited again']} later cites of the {r['shown needed']} "
        f"cited turns, {r['expected at the first-cite rate']:.1f} expected at the rate of first cites."
    )


def _nearby(cal) -> str:
    """The factor on the turns beside a cited one, when it acts on some turn in memory (else nothing)."""
    if not cal.beside or cal.nearby == 1.0:
        return ""
    r = cal.nearby_row()
    return (
        f" A turn beside a cited one counts ×{r['factor']:.2f}: {r['cited after it']} of the "
        f"{r['beside a cited turn']} turns beside one were cited after it, "
        f"{r['expected at the first-cite rate']:.1f} expected at the rate of first cites."
    )
