"""The need estimator's models as the product evaluates them (numpy, from JSON) against the library
that trained them (scikit-learn, fitted in the test), the novelty features, and the model file's
validation."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from bench import need_train
from bench.need_data import TurnTable
from memory.need import FEATURES, NOVELTY_TURNS, ArrivalContext, content_words
from memory.need_models import NeedModel, TreeNeedModel, model_from_dict

NAMES = need_train.FEATURE_SETS["text+novelty"]


def _tables(seed=0, n=3, rows=150):
    """Random turns whose label depends on two features with an interaction (what trees can learn)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        X = rng.normal(size=(rows, len(FEATURES)))
        X[:, FEATURES.index("question")] = rng.integers(0, 2, rows)
        i, j = FEATURES.index("log_words"), FEATURES.index("log_new_words")
        z = 1.2 * X[:, i] + 0.8 * X[:, j] * (X[:, i] > 0) - 1.0
        y = (rng.random(rows) < 1 / (1 + np.exp(-z))).astype(float)
        out.append(TurnTable(f"c{k}", X, np.zeros((rows, 1)), y))
    return out


def _round_trip(model):
    return model_from_dict(json.loads(json.dumps(model.as_dict())))


def test_exported_trees_predict_what_scikit_learn_predicts():
    tables = _tables()
    spec = next(c for c in need_train.CANDIDATES if c["kind"] == "trees")
    model = _round_trip(need_train.fit(tables[:2], spec))
    assert isinstance(model, TreeNeedModel) and len(model.trees) == spec["trees"]
    cols = [FEATURES.index(n) for n in model.names]
    X_train = np.vstack([t.X[:, cols] for t in tables[:2]])
    y_train = np.concatenate([t.y for t in tables[:2]])
    reference = need_train.boosted(spec).fit(X_train, y_train)  # the library, fitted here
    X = tables[2].X[:, cols]
    expected = reference.predict_proba(X)[:, 1]
    assert model.predict_many(X) == pytest.approx(expected, abs=1e-12)
    one_by_one = [model.predict(dict(zip(model.names, row))) for row in X[:20]]
    assert one_by_one == pytest.approx(expected[:20], abs=1e-12)
    assert need_train.predict(model, tables[2]) == pytest.approx(expected, abs=1e-12)


def test_exported_logistic_predicts_what_scikit_learn_predicts():
    tables = _tables(seed=1)
    spec = {"kind": "logistic", "features": "text+novelty", "C": 0.3}
    model = _round_trip(need_train.fit(tables[:2], spec))
    assert isinstance(model, NeedModel)
    cols = [FEATURES.index(n) for n in NAMES]
    X_train = np.vstack([t.X[:, cols] for t in tables[:2]])
    mean, std = X_train.mean(0), X_train.std(0)
    reference = LogisticRegression(C=0.3, max_iter=5000).fit(
        (X_train - mean) / std, np.concatenate([t.y for t in tables[:2]])
    )
    X = tables[2].X[:, cols]
    expected = reference.predict_proba((X - mean) / std)[:, 1]
    assert model.predict_many(X) == pytest.approx(expected, abs=1e-9)
    assert [model.predict(dict(zip(NAMES, row))) for row in X[:10]] == pytest.approx(expected[:10], abs=1e-9)


def test_the_choice_is_made_by_held_out_log_loss():
    rows = [
        {"model": "simple", "log_loss": 0.450},
        {"model": "richer", "log_loss": 0.4495},
        {"model": "richest", "log_loss": 0.4470},
    ]
    assert need_train.choose(rows)["model"] == "richest"  # gains more than SIMPLER_BY over "simple"
    rows[2]["log_loss"] = 0.4485
    assert need_train.choose(rows)["model"] == "simple"  # within SIMPLER_BY: the simplest wins


def test_a_bad_tree_file_is_refused_with_the_reason():
    tables = _tables(seed=2)
    spec = next(c for c in need_train.CANDIDATES if c["kind"] == "trees")
    good = need_train.fit(tables[:2], spec).as_dict()
    broken = json.loads(json.dumps(good))
    broken["trees"][0]["left"][0] = 0  # a node that points at itself
    with pytest.raises(ValueError, match="points outside"):
        model_from_dict(broken)
    broken = json.loads(json.dumps(good))
    broken["trees"][0]["value"] = broken["trees"][0]["value"][:-1]
    with pytest.raises(ValueError, match="same length"):
        model_from_dict(broken)
    with pytest.raises(ValueError, match="not a lagmem need model"):
        model_from_dict({"format": "lagmem-need-trees/9"})


def test_novelty_counts_content_words_the_recent_turns_did_not_use():
    ctx = ArrivalContext()
    first = ctx.features("I adopted a beagle named Oscar in Boston.")
    assert content_words("I adopted a beagle named Oscar in Boston.") == {
        "adopted",
        "beagle",
        "named",
        "oscar",
        "boston",
    }
    assert first["log_new_words"] == pytest.approx(math.log(6)) and first["frac_new"] == 1.0
    again = ctx.features("Oscar the beagle loves Boston!")  # only "loves" is new
    assert again["log_new_words"] == pytest.approx(math.log(2)) and again["frac_new"] == pytest.approx(1 / 4)
    assert ctx.features("Yeah, that's so great!")["frac_new"] == 0.0  # no content words at all
    for k in range(NOVELTY_TURNS):
        ctx.features(f"filler{k}")
    back = ctx.features("Oscar the beagle")  # last used more than NOVELTY_TURNS turns ago: new again
    assert back["frac_new"] == 1.0


def test_the_product_computes_a_prior_without_scikit_learn():
    code = (
        "import sys; from assistant import need; "
        "p = need.prior_for('I moved to Boston in May 2022.', [need.Previous('Hi!')]); "
        "assert 0 < p < 1; print('sklearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_model_file_reads_back_the_same_model_one_tree_per_line():
    from memory.need_models import model_json

    tables = _tables(seed=3)
    spec = next(c for c in need_train.CANDIDATES if c["kind"] == "trees")
    model = need_train.fit(tables[:2], spec)
    text = model_json(model)
    assert model_from_dict(json.loads(text)) == model
    assert sum(1 for line in text.splitlines() if line.lstrip().startswith('{"feature"')) == len(model.trees)
    logistic = need_train.fit(tables[:2], {"kind": "logistic", "features": "text", "C": 0.03})
    assert model_from_dict(json.loads(model_json(logistic))) == logistic


def test_held_out_priors_leave_out_the_scored_conversation_whatever_its_name(monkeypatch):
    from bench.locomo import Conversation, Turn

    def conv(name, words):
        turns = [Turn(i + 1, f"D1:{i + 1}", 1, "user", f"user: {w} story number {i}") for i, w in enumerate(words)]
        return Conversation(name, turns, [], {1: len(turns)})

    a, b, c = conv("a", ["boston", "lisbon"]), conv("b", ["paris", "rome"]), conv("c", ["oslo", "bern"])
    renamed = conv("other-name", ["boston", "lisbon"])  # the same turns as "a"
    seen = []

    def train(tables):
        seen.append(sorted(t.sample_id for t in tables))
        return NeedModel(("log_words",), (0.0,), (1.0,), (0.5,), -1.0), []

    monkeypatch.setattr(need_train, "train", train)
    got = need_train.heldout_priors([renamed, b], [a, b, c])
    assert seen == [["b", "c"], ["a", "c"]]
    assert len(got) == 2 and len(got[0]) == 2 and all(0 < p < 1 for p in got[0])
