"""The shipped defaults are the held-out protocol's final fit (``docs/bench/holdout.json``, written by
``lagmem bench holdout --json``): ``measured``'s tuned constants, the benchmark's lag, and a new
conversation's lag and budget."""

import json
from pathlib import Path

from bench import holdout, protocol
from memory.policies import Measured
from memory.types import MemorySettings

RUN = Path(__file__).parents[2] / "docs" / "bench" / "holdout.json"


def test_the_shipped_defaults_are_the_final_fit():
    final = json.loads(RUN.read_text())["final"]
    shipped = Measured()
    for name, value in final["params"].items():
        if name == "lag":
            assert protocol.MEASURED_BENCH_LAG == value
        else:
            assert getattr(shipped, name) == value, name
    assert set(final["params"]) == set(holdout.START)
    chosen = final["defaults"]
    assert MemorySettings().lag == chosen["lag"] and MemorySettings().budget == chosen["budget"]
