"""The pytest plugin: saved conversations as tests of what an assistant remembers.

Registered through the ``pytest11`` entry point (``pip install lagmem`` is enough); without
installing, load it with ``pytest -p assistant.testing.plugin``. It gives one fixture and one option:

    def test_trip_memory(lagmem_replay):
        memory = lagmem_replay("conversations/trip.jsonl", budget=600)
        assert memory.kept(1) and memory.evicted(3, at_step=12)
        assert memory.active_tokens <= memory.budget

``lagmem_replay(path, snapshot=True, **settings)`` replays the file (a relative path is taken from
the test file's folder) with ``assistant.testing.replay`` and checks the memory's timeline against
the snapshot beside the file (``trip.timeline.json``, or ``trip.NAME.timeline.json`` when settings
are overridden or ``snapshot="NAME"``). ``pytest --lagmem-update`` writes the snapshots instead;
afterwards a different memory fails the test with a readable diff (turn, step, what changed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant import testing  # light: the library loads on first use


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lagmem", "lagmem saved-conversation memory tests")
    group.addoption(
        "--lagmem-update",
        action="store_true",
        default=False,
        help="write the expected memory timelines of replayed conversations instead of checking them",
    )


def _snapshot_name(snapshot: bool | str, settings: dict) -> str | None:
    if isinstance(snapshot, str):
        return snapshot
    given = {k: v for k, v in sorted(settings.items()) if v is not None and k != "counter"}
    return ",".join(f"{k}={v}" for k, v in given.items()) or None


@pytest.fixture
def lagmem_replay(request: pytest.FixtureRequest):
    """Replay a saved conversation; returns an ``assistant.testing.ReplayedMemory``."""
    update = request.config.getoption("lagmem_update")
    here = Path(str(request.path)).parent

    def _replay(path, *, snapshot: bool | str = True, **settings) -> testing.ReplayedMemory:
        path = Path(path)
        memory = testing.replay(path if path.is_absolute() else here / path, **settings)
        if snapshot:
            name = _snapshot_name(snapshot, settings)
            if update:
                testing.write_snapshot(memory, name)
            else:
                problem = None
                try:
                    testing.check_snapshot(memory, name)
                except (FileNotFoundError, testing.SnapshotMismatch) as exc:
                    problem = str(exc)
                if problem:  # failed outside the except block: the diff is shown once, without a traceback
                    pytest.fail(problem, pytrace=False)
        return memory

    return _replay
