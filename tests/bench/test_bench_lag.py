"""`--lag` reaches every policy the LoCoMo benchmark runs, and the JSON records the lag each ran with."""

import json

import pytest

from bench import locomo, protocol
from cli import bench as bench_cli
from memory import layer as layer_mod
from memory.policies import POLICIES
from tests.bench.test_bench_cli import synthetic


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_given_lag_is_the_layers_lag(name, monkeypatch, tmp_path):
    """The layer inside a run is built with the given lag and keeps it (no policy overrides it)."""
    from tests.bench.test_bench_locomo import _tiny

    seen = []
    real = layer_mod.MemoryLayer

    class Spy(real):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            seen.append(self)

    monkeypatch.setattr(protocol, "MemoryLayer", Spy)
    convs = locomo.load(_tiny(tmp_path))
    protocol.run(convs, protocol.spec(name, lag=3), 50, 0, locomo.token_scale("words"))
    assert seen and all(layer.lag == 3 for layer in seen)
    assert protocol.ran_lag(protocol.spec(name, lag=3)) == 3


def test_accumulate_default_lag_is_zero_and_a_given_lag_changes_its_run(tmp_path):
    from tests.bench.test_bench_locomo import _tiny

    assert protocol.ran_lag(protocol.spec("accumulate")) == 0
    convs = locomo.load(_tiny(tmp_path))
    scale = locomo.token_scale("words")
    # budget: two of the three turns; with lag 0 the arriving turn can go at once, with lag 2 it cannot
    lag0 = protocol.run(convs, protocol.spec("accumulate"), 9, 0, scale, "end")
    lag2 = protocol.run(convs, protocol.spec("accumulate", lag=2), 9, 0, scale, "end")
    assert [r.kept for r in lag0] != [r.kept for r in lag2]


def test_cli_json_records_the_lag_each_policy_ran_with(tmp_path):
    from tests.bench.test_bench_locomo import _tiny

    out = tmp_path / "r.json"
    assert (
        bench_cli.main(
            [
                "bench",
                "locomo",
                "--data",
                str(_tiny(tmp_path)),
                "--budgets",
                "5",
                "--seeds",
                "0",
                "--jobs",
                "1",
                "--lag",
                "2",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    lags = {p["policy"]: p["lag"] for p in res["settings"]["policies"]}
    assert lags == {
        "fifo": 2,
        "lru": 2,
        "accumulate": 2,
        "window": 2,
        "userfirst": 2,
        "largest": 2,
        "measured": 2,
        "oracle": 0,
    }
    assert {r["policy"]: r["lag"] for r in res["results"]} == lags


def test_synthetic_runs_every_policy_at_one_lag_and_takes_a_confirmation_delay(tmp_path):
    res = synthetic(tmp_path, "--lags", "2", "--confirm", "1,8", "--no-text")
    from bench.synthetic import SYNTHETIC_LAG

    assert {r["lag"] for r in res["trace_results"]} == {SYNTHETIC_LAG} and res["results"] == []
    assert res["settings"]["confirm"] == [1, 8]
    with pytest.raises(SystemExit, match="confirm"):
        bench_cli.main(["bench", "synthetic", "--seeds", "0", "--turns", "50", "--confirm", "3,1"])
