"""Lock down what an assistant remembers: replay a saved conversation and assert on its memory.

    from assistant.testing import replay

    memory = replay("tests/conversations/trip.jsonl", budget=600)
    assert memory.kept(1) and memory.evicted(3, at_step=12)

The library lives in ``replayed``; the pytest plugin (``plugin``: the ``lagmem_replay`` fixture and
``--lagmem-update``) imports it only when a test uses it, so registering the plugin costs nothing.
"""

from __future__ import annotations

import importlib

__all__ = ["ReplayedMemory", "SnapshotMismatch", "check_snapshot", "replay", "snapshot_path", "write_snapshot"]


def __getattr__(name: str):
    # the library imports the memory layer and the replay path: loaded on first use only
    if name in __all__:
        return getattr(importlib.import_module("assistant.testing.replayed"), name)
    raise AttributeError(f"module 'assistant.testing' has no attribute {name!r}")
