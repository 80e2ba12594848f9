"""The bench command parses, helps, and runs small configurations end to end."""

import json

import pytest

from cli import bench as bench_cli


def test_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit):
        bench_cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    assert "locomo" in out and "synthetic" in out and "speed" in out


def test_locomo_small_run(tmp_path, capsys):
    from tests.test_bench_locomo import _tiny

    data = _tiny(tmp_path)
    out = tmp_path / "r.json"
    plot = tmp_path / "r.png"
    assert bench_cli.main(["bench", "locomo", "--data", str(data), "--budgets", "5,10", "--seeds", "0",
                           "--jobs", "1", "--json", str(out), "--plot", str(plot), "--noise", "1"]) == 0
    res = json.loads(out.read_text())
    keys = {"policy", "budget", "recall", "per_question", "all_evidence", "gap_closed", "by_category"}
    assert keys <= set(res["results"][0]) and res["settings"]["noise"] == 1
    assert plot.stat().st_size > 0


def test_synthetic_small_run(tmp_path):
    out = tmp_path / "s.json"
    assert bench_cli.main(["bench", "synthetic", "--seeds", "0", "--turns", "120", "--lags", "0,4",
                           "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert {r["policy"] for r in res["results"]} >= {"measured", "accumulate"}


def test_speed_small_run(tmp_path):
    from bench.speed import run_size

    r = run_size(200, persisted=False, naive_steps=3)
    assert r["pure_median_ms"] > 0 and r["turns"] == 200
