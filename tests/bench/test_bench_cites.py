"""`lagmem bench cites` on a tiny LoCoMo-format file: the JSON shape, sane metric ranges, the
openai retriever skipped with a clear line when nothing is configured; ``--fit --out`` writing a
ranker file the ranker reads, in the shipped file's format."""

from __future__ import annotations

import json

import pytest

from cli.main import main

TINY = [
    {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1 May 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy called Biscuit."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! What breed is Biscuit?"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "A beagle, very noisy."},
            ],
            "session_2_date_time": "8 May 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I started pottery classes on Tuesdays."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "Pottery sounds relaxing."},
            ],
        },
        "qa": [
            {"question": "What is the name of Ana's puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
            {"question": "When does Ben go to pottery?", "answer": "Tuesdays", "evidence": ["D2:1"], "category": 2},
            {"question": "Broken evidence", "answer": "-", "evidence": ["D9:99"], "category": 1},
        ],
    }
]


def test_bench_cites_json_shape(tmp_path, monkeypatch, capsys):
    data, out = tmp_path / "tiny.json", tmp_path / "out.json"
    data.write_text(json.dumps(TINY))
    monkeypatch.setenv("LAGMEM_BENCH_CACHE", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LAGMEM_LLM"):
        monkeypatch.delenv(var, raising=False)
    assert (
        main(
            [
                "bench",
                "cites",
                "--data",
                str(data),
                "--retrievers",
                "embeddings,hybrid,openai",
                "--seeds",
                "0,1",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "openai: skipped" in printed
    doc = json.loads(out.read_text())
    assert [r["retriever"] for r in doc["results"]] == ["embeddings", "hybrid"]
    for r in doc["results"]:
        assert r["questions"] == 4  # 2 questions with evidence x 2 seeds
        for key in ("precision", "recall", "f1"):
            assert 0.0 <= r[key] <= 1.0
        assert set(r["recall_at"]) == {"5", "10", "20"}
        assert r["recall_at"]["20"] == 1.0  # at most 5 candidates: everything is in the top 20
        assert set(r["latency_ms"]) == {"median", "p95"} and r["latency_ms"]["p95"] >= r["latency_ms"]["median"]
        assert set(r["by_category"]) == {"2", "4"}
    assert list((tmp_path / "cache").glob("*.npy"))  # embeddings cached outside the repo
    assert doc["settings"]["skipped"] == {
        "openai": "skipped: no model configured (set OPENAI_API_KEY and/or OPENAI_BASE_URL)"
    }


def _cites(tmp_path, monkeypatch, *extra):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY))
    monkeypatch.setenv("LAGMEM_BENCH_CACHE", str(tmp_path / "cache"))
    return main(["bench", "cites", "--data", str(data), "--seeds", "0,1", *extra])


def test_fit_out_writes_a_ranker_file_the_ranker_reads(tmp_path, monkeypatch, capsys):
    from assistant.retrieval import hybrid

    out = tmp_path / "ranker.json"
    assert _cites(tmp_path, monkeypatch, "--fit", "--out", str(out)) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    doc = hybrid.read(out)
    params = hybrid.params_from(doc)
    assert len(params.weights) == len(hybrid.rank_features.NAMES) and 0 < params.threshold < 1
    assert (params.bm25_k1, params.bm25_b) == (hybrid.DEFAULT_PARAMS.bm25_k1, hybrid.DEFAULT_PARAMS.bm25_b)
    prov = doc["provenance"]
    assert prov["fitted_on"] == {
        "data": "tiny.json",
        "conversations": ["tiny-1"],
        "placement": "random",
        "seeds": [0, 1],
        "limit": None,
    }
    assert prov["command"].endswith(f"--seeds 0,1 --fit --out {out}")
    assert prov["in_sample"]["questions"] == 4 and prov["held_out"] is None
    assert prov["bm25"] == hybrid.read()["provenance"]["bm25"]  # k1 and b are kept, so is their story


def test_the_shipped_ranker_file_is_what_the_fit_writer_writes(tmp_path):
    from assistant.retrieval import hybrid
    from bench import calibrate

    shipped = hybrid.read()
    out = tmp_path / "ranker.json"
    calibrate.write(out, hybrid.params_from(shipped), shipped["provenance"])
    assert out.read_bytes() == hybrid.RANKER_FILE.read_bytes()
    assert hybrid.params_from(hybrid.read(out)) == hybrid.DEFAULT_PARAMS


def test_out_without_fit_is_refused(tmp_path, monkeypatch):
    with pytest.raises(SystemExit, match="--fit"):
        _cites(tmp_path, monkeypatch, "--retrievers", "embeddings", "--out", str(tmp_path / "r.json"))
