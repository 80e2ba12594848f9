"""A layer rebuilt from another's stored state alone (turn rows, citation log, feedback, step): what a
restart does, for the tests that check a rebuilt layer decides as the live one did."""

from __future__ import annotations

from memory.layer import MemoryLayer


def rebuilt(layer: MemoryLayer, settings=None, policy=None) -> MemoryLayer:
    """``layer`` rebuilt by ``MemoryLayer.from_state`` (its own settings unless ``settings``; the
    settings' policy unless ``policy``)."""
    return MemoryLayer.from_state(
        settings or layer.settings,
        layer.turns(),
        layer.citations(),
        layer.feedback_values(),
        step=layer.step,
        policy=policy,
    )
