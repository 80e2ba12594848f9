"""`lagmem bench cites` on a tiny LoCoMo-format file: the JSON shape, sane metric ranges, the
openai retriever skipped with a clear line when nothing is configured."""

from __future__ import annotations

import json

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
