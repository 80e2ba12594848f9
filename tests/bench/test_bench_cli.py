"""The bench command parses, helps, and runs small configurations end to end."""

import json

import pytest

from cli import bench as bench_cli


def test_help_lists_subcommands(capsys):
    with pytest.raises(SystemExit):
        bench_cli.main(["bench", "--help"])
    out = capsys.readouterr().out
    assert all(
        name in out for name in ("locomo", "synthetic", "controlled", "controlled-write", "speed", "retrieval", "model")
    )


def test_locomo_small_run(tmp_path, capsys):
    from tests.bench.test_bench_locomo import _tiny

    data = _tiny(tmp_path)
    out = tmp_path / "r.json"
    plot = tmp_path / "r.png"
    assert (
        bench_cli.main(
            [
                "bench",
                "locomo",
                "--data",
                str(data),
                "--budgets",
                "5,10",
                "--seeds",
                "0",
                "--jobs",
                "1",
                "--json",
                str(out),
                "--plot",
                str(plot),
                "--noise",
                "1",
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    keys = {"policy", "budget", "recall", "per_question", "all_evidence", "gap_closed", "by_category"}
    assert keys <= set(res["results"][0]) and res["settings"]["noise"] == 1
    assert plot.stat().st_size > 0


def synthetic(tmp_path, *args: str) -> dict:
    """``lagmem bench synthetic`` on seed 0, 120 turns, with ``args``: its JSON report."""
    out = tmp_path / "s.json"
    assert bench_cli.main(["bench", "synthetic", "--seeds", "0", "--turns", "120", *args, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_synthetic_small_run(tmp_path, capsys):
    """The headline replays the traces as text through the product; the bare traces are the ablation."""
    res = synthetic(
        tmp_path, "--lags", "0,4", "--jobs", "1", "--text-policies", "accumulate,userfirst,measured,measured[need=0]"
    )
    assert [r["policy"] for r in res["results"]] == ["accumulate", "userfirst", "measured", "measured[need=0]"]
    assert all(r["reuses"] > 0 and 0 <= r["retention"] <= 1 for r in res["results"])
    assert {r["policy"] for r in res["trace_results"]} >= {"measured", "accumulate", "userfirst", "largest"}
    text = capsys.readouterr().out
    assert "as text through the replay" in text and "goal: measured as text >= 0.9" in text


def test_speed_small_run(tmp_path):
    from bench.speed import run_size

    r = run_size(200, persisted=False, naive_steps=3)
    assert r["pure_median_ms"] > 0 and r["turns"] == 200


def test_retrieval_small_run(capsys):
    """The real embedding model and the real retrieval step, a few runs per case."""
    assert bench_cli.main(["bench", "retrieval", "--reps", "3"]) == 0
    out = capsys.readouterr().out
    assert "embedding time per turn" in out
    assert "2,000 active tokens" in out and "200 active turns" in out and "3 runs" in out


@pytest.mark.llm
def test_model_small_run(capsys):
    """The embedded model's server, started and timed for one short round."""
    assert bench_cli.main(["bench", "model", "--rounds", "1", "--max-tokens", "4"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "SmolLM2-135M-Instruct" and out["server_start_s"] > 0
    assert [r["prompt"] for r in out["rounds"]] == ["short", "memory", "memory_warm"]
