"""The need estimator's models: a feature vector in, a probability out, evaluated with numpy alone.

Two kinds, each a small versioned JSON document (``model_from_dict`` reads either):

* ``NeedModel`` (``lagmem-need-model/1``): logistic regression on standardised features, and
  optionally the turn's embedding;
* ``TreeNeedModel`` (``lagmem-need-trees/1``): gradient-boosted regression trees on the log-odds
  (scikit-learn's ``GradientBoostingClassifier``, exported node by node by ``bench/need_train.py``).
  Trees follow interactions a linear model misses (a long turn matters more at a session's start)
  and need no scaling. A split sends a row left when ``float32(x) <= threshold``, as scikit-learn
  compares, so the product's prior equals the training library's.

The product never imports scikit-learn: training happens in ``bench/``, and the product evaluates
the exported numbers. ``predict`` takes one turn's feature mapping (the arrival path);
``predict_many`` a matrix whose columns are ``names`` (the benchmarks).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

LOGISTIC_FORMAT = "lagmem-need-model/1"
TREES_FORMAT = "lagmem-need-trees/1"


def vector(features: Mapping[str, float], names: Sequence[str]) -> np.ndarray:
    return np.array([float(features.get(n, 0.0)) for n in names], dtype=np.float64)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


@dataclass(frozen=True)
class NeedModel:
    """Logistic regression on standardised features (and optionally the turn's embedding).

    ``p = sigmoid(intercept + sum_k coef_k * (x_k - mean_k) / scale_k + embedding . embedding_coef)``.
    ``version`` names the file's format and training run; ``meta`` holds how it was trained.
    """

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    embedding_coef: tuple[float, ...] = ()
    version: str = ""
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def uses_vectors(self) -> bool:
        """Whether the model reads embeddings (the similarity features or the vector itself)."""
        return bool(self.embedding_coef) or any(n.startswith("sim_") for n in self.names)

    def predict(self, features: Mapping[str, float], embedding: np.ndarray | None = None) -> float:
        x = (vector(features, self.names) - np.array(self.mean)) / np.array(self.scale)
        z = self.intercept + float(np.dot(x, np.array(self.coef)))
        if self.embedding_coef and embedding is not None:
            z += float(np.dot(np.asarray(embedding, dtype=np.float64), np.array(self.embedding_coef)))
        return _sigmoid(z)

    def predict_many(self, X: np.ndarray, E: np.ndarray | None = None) -> np.ndarray:
        z = self.intercept + ((X - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef)
        if self.embedding_coef and E is not None:
            z = z + E @ np.array(self.embedding_coef)
        return 1.0 / (1.0 + np.exp(-z))

    def as_dict(self) -> dict:
        return {
            "format": LOGISTIC_FORMAT,
            "version": self.version,
            "names": list(self.names),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "embedding_coef": list(self.embedding_coef),
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> NeedModel:
        if d.get("format") != LOGISTIC_FORMAT:
            raise ValueError(f"not a lagmem need model (format {d.get('format')!r}, expected {LOGISTIC_FORMAT!r})")
        names = tuple(d["names"])
        if not (len(names) == len(d["mean"]) == len(d["scale"]) == len(d["coef"])):
            raise ValueError("need model: names, mean, scale and coef must have the same length")
        return cls(
            names,
            tuple(map(float, d["mean"])),
            tuple(float(s) or 1.0 for s in d["scale"]),
            tuple(map(float, d["coef"])),
            float(d["intercept"]),
            tuple(map(float, d.get("embedding_coef", ()))),
            str(d.get("version", "")),
            dict(d.get("meta", {})),
        )


@dataclass(frozen=True)
class Tree:
    """One regression tree as parallel node arrays; a leaf has ``left == right == -1``."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def leaf(self, x32: Sequence[float]) -> float:
        """The leaf value for one row; ``x32`` holds the features already rounded to float32."""
        node = 0
        left, right, feature, threshold = self.left, self.right, self.feature, self.threshold
        while left[node] != -1:
            node = left[node] if x32[feature[node]] <= threshold[node] else right[node]
        return self.value[node]

    def leaves(self, X: np.ndarray) -> np.ndarray:
        X32 = X.astype(np.float32)
        feature, threshold = np.array(self.feature), np.array(self.threshold)
        left, right, value = np.array(self.left), np.array(self.right), np.array(self.value)
        node = np.zeros(len(X), dtype=np.int64)
        while True:
            inner = left[node] != -1
            if not inner.any():
                return value[node]
            f = np.where(inner, feature[node], 0)
            go_left = X32[np.arange(len(X)), f] <= threshold[node]
            node = np.where(inner, np.where(go_left, left[node], right[node]), node)

    @classmethod
    def from_dict(cls, d: Mapping, n_features: int) -> Tree:
        t = cls(
            tuple(map(int, d["feature"])),
            tuple(map(float, d["threshold"])),
            tuple(map(int, d["left"])),
            tuple(map(int, d["right"])),
            tuple(map(float, d["value"])),
        )
        n = len(t.value)
        if not n or not (len(t.feature) == len(t.threshold) == len(t.left) == len(t.right) == n):
            raise ValueError("need trees: a tree's node arrays must be non-empty and of the same length")
        for i in range(n):
            if (t.left[i] == -1) != (t.right[i] == -1):
                raise ValueError(f"need trees: node {i} has one child")
            if t.left[i] != -1 and not (i < t.left[i] < n and i < t.right[i] < n and 0 <= t.feature[i] < n_features):
                raise ValueError(f"need trees: node {i} points outside its tree or its features")
        return t

    def as_dict(self) -> dict:
        return {
            "feature": list(self.feature),
            "threshold": list(self.threshold),
            "left": list(self.left),
            "right": list(self.right),
            "value": list(self.value),
        }


@dataclass(frozen=True)
class TreeNeedModel:
    """Boosted trees: ``p = sigmoid(init + sum over trees of learning_rate * leaf value)``."""

    names: tuple[str, ...]
    init: float
    learning_rate: float
    trees: tuple[Tree, ...]
    version: str = ""
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def uses_vectors(self) -> bool:
        return any(n.startswith("sim_") for n in self.names)

    def raw(self, x: np.ndarray) -> float:
        x32 = np.asarray(x, dtype=np.float64).astype(np.float32).tolist()  # as scikit-learn rounds its input
        z, rate = self.init, self.learning_rate
        for t in self.trees:  # summed in tree order, as scikit-learn does
            z += rate * t.leaf(x32)
        return z

    def predict(self, features: Mapping[str, float], embedding: np.ndarray | None = None) -> float:
        return _sigmoid(self.raw(vector(features, self.names)))

    def predict_many(self, X: np.ndarray, E: np.ndarray | None = None) -> np.ndarray:
        z = np.full(len(X), self.init)
        for t in self.trees:
            z = z + self.learning_rate * t.leaves(X)
        return 1.0 / (1.0 + np.exp(-z))

    def as_dict(self) -> dict:
        return {
            "format": TREES_FORMAT,
            "version": self.version,
            "names": list(self.names),
            "init": self.init,
            "learning_rate": self.learning_rate,
            "trees": [t.as_dict() for t in self.trees],
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> TreeNeedModel:
        if d.get("format") != TREES_FORMAT:
            raise ValueError(f"not lagmem need trees (format {d.get('format')!r}, expected {TREES_FORMAT!r})")
        names = tuple(d["names"])
        trees = tuple(Tree.from_dict(t, len(names)) for t in d["trees"])
        return cls(
            names,
            float(d["init"]),
            float(d["learning_rate"]),
            trees,
            str(d.get("version", "")),
            dict(d.get("meta", {})),
        )


def model_json(model: NeedModel | TreeNeedModel) -> str:
    """The model file's text: indented JSON, one tree per line (a forest stays a few screens long)."""
    d = model.as_dict()
    trees = d.pop("trees", None)
    text = json.dumps(d, indent=1)
    if trees is None:
        return text + "\n"
    rows = ",\n".join("  " + json.dumps(t, separators=(",", ":")) for t in trees)
    return text[: -len("\n}")] + ',\n "trees": [\n' + rows + "\n ]\n}\n"


def model_from_dict(d: Mapping) -> NeedModel | TreeNeedModel:
    """Either kind of need model, by its ``format``; anything else is a clear error."""
    kinds = {LOGISTIC_FORMAT: NeedModel, TREES_FORMAT: TreeNeedModel}
    fmt = d.get("format") if isinstance(d, Mapping) else None
    if fmt not in kinds:
        raise ValueError(f"not a lagmem need model (format {fmt!r}, expected one of {', '.join(kinds)})")
    return kinds[fmt].from_dict(d)
