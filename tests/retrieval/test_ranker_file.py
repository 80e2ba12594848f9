"""The hybrid ranker's fitted constants come from ``assistant/retrieval/ranker.json``: the values the
ranker uses, the checks on reading a file, the provenance it carries."""

from __future__ import annotations

import json

import pytest

from assistant.retrieval import hybrid, rank_features


def test_the_shipped_file_gives_the_constants_the_ranker_was_fitted_to():
    # the values of `lagmem bench cites --conversations 1,2 --fit` on locomo_dev.json, bit for bit
    p = hybrid.DEFAULT_PARAMS
    assert (p.bm25_k1, p.bm25_b, p.threshold) == (0.9, 0.3, 0.25)
    assert p.weights == (
        0.5702,
        3.6422,
        0.0007,
        3.7075,
        2.818,
        1.2292,
        0.7716,
        -0.5361,
        0.3142,
        -0.318,
        0.776,
        1.0631,
        2.3719,
        8.9451,
    )
    assert p.calibration == (-1.7844, 0.1164, -0.7761, 0.3759, -0.2426, 0.4786)
    assert (p.max_cites, p.min_cosine_alone) == (5, 0.6)  # chosen, not fitted: not in the file
    assert hybrid.HybridParams() == p


def test_the_shipped_file_says_what_it_was_fitted_on_and_checked_with():
    prov = hybrid.read()["provenance"]
    assert prov["fitted_on"]["conversations"] == ["conv-26", "conv-30"]
    assert prov["command"].startswith("lagmem bench cites ") and "--fit" in prov["command"]
    held = prov["held_out"]
    assert held["conversations"] == ["conv-44", "conv-49"]
    assert not set(held["conversations"]) & set(prov["fitted_on"]["conversations"])
    assert 0 < held["recall_at_5"] <= held["recall_at_20"] <= 1


def test_a_document_reads_back_as_the_params_it_was_made_of():
    doc = json.loads(json.dumps(hybrid.document(hybrid.DEFAULT_PARAMS, {"note": "x"})))
    assert hybrid.params_from(doc) == hybrid.DEFAULT_PARAMS
    assert list(doc["weights"]) == list(rank_features.NAMES)  # named, in the features' order


def test_a_file_for_other_features_or_format_is_refused(tmp_path):
    doc = hybrid.document(hybrid.DEFAULT_PARAMS, {})
    del doc["weights"]["around"]
    with pytest.raises(ValueError, match="refit"):
        hybrid.params_from(doc)
    with pytest.raises(ValueError, match="lagmem-ranker/1"):
        hybrid.params_from({**hybrid.document(hybrid.DEFAULT_PARAMS, {}), "format": "other/2"})
