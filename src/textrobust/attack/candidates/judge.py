"""A judge trained on the labelled substitution set: does this substitute keep the meaning here?

The validated source's hand-set checks (part of speech, antonym, polarity, sense rank,
cosine) remove what is plainly wrong; what is left is mostly a question of sense and
collocation in context, which no single threshold answers (issue 28: AUC 0.58-0.78 per
feature). This judge is a logistic regression over the evidence the source already has and
the target-visible scores of :mod:`textrobust.attack.candidates.contextual` (Zhou et al.
2019's validation score and target-visible probability; the reverse reading as a
collocation check), trained on the **dev half** of the labelled set, cross-validated by
sentence (``benchmarks/validity/tune_judge.py``); its probability is one more check,
``min_judge`` in the settings (the operating point named there, chosen on dev).

Two kinds ship as JSON (``resources/substitutions/judge.json``), both trained offline with
scikit-learn and applied with numpy only: :class:`TrainedJudge`, a plain logistic
regression, and :class:`BoostedJudge`, gradient-boosted trees over the same features
(scikit-learn's ``HistGradientBoostingClassifier``, Friedman 2001's gradient boosting with
the histogram splits of Ke et al. 2017, LightGBM), stored as node tables. :func:`load_judge`
reads either.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from textrobust.errors import ConfigError
from textrobust.validity.trees import NODE_COLUMNS, Tree, check_trees, sklearn_trees, tree_probability

__all__ = ["FEATURES", "BoostedJudge", "Judge", "TrainedJudge", "default_judge_path", "feature_row", "load_judge"]

#: The judge's inputs, in order (what :func:`feature_row` computes from one verdict's evidence).
FEATURES = (
    "visible", "reverse", "visible_missing", "validation", "target", "context", "context_missing", "cosine",
    "first_sense", "sense_rank", "in_wordnet", "in_vectors", "zipf", "zipf_gap", "valence_gap",
    "noun", "verb", "adjective", "adverb",
)


def feature_row(e: Mapping[str, Any], word_zipf: float) -> list[float]:
    """The :data:`FEATURES` of one candidate from its evidence (an ``Evidence.as_dict()``
    or the same keys) and the original word's Zipf frequency; missing scores get a fixed
    value and an indicator."""
    visible, reverse, context = e.get("visible"), e.get("reverse"), e.get("context")
    rank = e.get("sense_rank")
    valence = e.get("valence") or (None, None)
    routes = e.get("routes") or ()
    pos = e.get("pos") or ""
    return [
        -15.0 if visible is None else float(visible),
        15.0 if reverse is None else float(reverse),
        float(visible is None or reverse is None),
        float(e.get("validation") or 0.0),
        float(e.get("target") or 0.0),
        -15.0 if context is None else float(context),
        float(context is None),
        float(e.get("cosine") or 0.0),
        float(rank == 0),
        10.0 if rank is None else float(min(rank, 10)),
        float("wordnet" in routes),
        float("vectors" in routes),
        float(e.get("zipf") or 0.0),
        float(e.get("zipf") or 0.0) - word_zipf,
        abs(float(valence[0] or 0.0) - float(valence[1] or 0.0)),
        float(pos == "n"), float(pos == "v"), float(pos in ("a", "s")), float(pos == "r"),
    ]


def default_judge_path() -> Path:
    return Path(str(resources.files("textrobust").joinpath("resources", "substitutions", "judge.json")))


class Judge(Protocol):
    """What the validated source asks of a judge."""

    @property
    def record(self) -> Mapping[str, Any]: ...

    def probability(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray: ...

    @property
    def version(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


def read_model_file(path: Path, fmt: str, features: Sequence[str], what: str, fix: str) -> dict[str, Any]:
    """The JSON of a stored tree model (the judge, the second judge), checked for its format
    and feature list; ``what`` names it and ``fix`` says how to make one in the errors."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"Cannot read the {what} {path}: {exc}. {fix}") from None
    if data.get("format") != fmt or list(data.get("features", ())) != list(features):
        raise ConfigError(f"{path} is not a {what} for these features ({', '.join(features)}). {fix}")
    return dict(data)


def _read(path: str | Path | None) -> tuple[Path, dict[str, Any]]:
    path = Path(path) if path is not None else default_judge_path()
    return path, read_model_file(path, "textrobust-judge", FEATURES, "trained judge",
                                 "Reinstall textrobust, or retrain one with benchmarks/validity/tune_judge.py.")


def load_judge(path: str | Path | None = None) -> TrainedJudge | BoostedJudge:
    """The shipped judge (or the one at ``path``): a :class:`BoostedJudge` when the file's
    ``model`` says ``boosted``, else a :class:`TrainedJudge`."""
    _, data = _read(path)
    return BoostedJudge.load(path) if data.get("model") == "boosted" else TrainedJudge.load(path)


@dataclass(frozen=True)
class TrainedJudge:
    """A logistic regression over standardised :data:`FEATURES`: ``p = sigmoid(bias +
    weights . (x - mean) / scale)``. ``record`` says how it was trained and measured."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    record: Mapping[str, Any]

    def __post_init__(self) -> None:
        n = len(FEATURES)
        if not len(self.mean) == len(self.scale) == len(self.weights) == n:
            raise ConfigError(f"A trained judge needs {n} means, scales and weights (one per feature of FEATURES); "
                              f"got {len(self.mean)}, {len(self.scale)}, {len(self.weights)}.")

    def probability(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """P(valid) for each feature row."""
        x = np.asarray(rows, dtype=float).reshape(-1, len(FEATURES))
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.weights) + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50)))

    @property
    def version(self) -> str:
        """A hash of the weights (part of the verdict cache's key)."""
        blob = json.dumps([self.mean, self.scale, self.weights, self.bias], default=float)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"format": "textrobust-judge", "features": list(FEATURES), "mean": list(self.mean),
                "scale": list(self.scale), "weights": list(self.weights), "bias": self.bias,
                "record": dict(self.record)}

    @classmethod
    def load(cls, path: str | Path | None = None) -> TrainedJudge:
        """The shipped judge (or the one at ``path``)."""
        path, data = _read(path)
        if data.get("model", "logistic") != "logistic":
            raise ConfigError(f"{path} holds a {data.get('model')!r} judge, not a logistic one; read it with load_judge.")
        values = [float(v) for v in (*data["mean"], *data["scale"], *data["weights"], data["bias"])]
        if not all(math.isfinite(v) for v in values):
            raise ConfigError(f"{path} holds a weight that is not a finite number.")
        n = len(FEATURES)
        return cls(tuple(values[:n]), tuple(values[n : 2 * n]), tuple(values[2 * n : 3 * n]), values[-1],
                   dict(data.get("record", {})))


@dataclass(frozen=True)
class BoostedJudge:
    """Gradient-boosted regression trees over the raw :data:`FEATURES`: ``p = sigmoid(
    baseline + sum of each tree's leaf value)``; at a node, a row goes left when its feature
    is at most the threshold (scikit-learn's rule). Each tree is a tuple of nodes
    ``(feature, threshold, left, right, value)`` (:data:`NODE_COLUMNS`), node 0 the root, a
    leaf's feature -1. ``record`` says how it was trained and measured."""

    trees: tuple[Tree, ...]
    baseline: float
    record: Mapping[str, Any]

    def __post_init__(self) -> None:
        check_trees(self.trees, self.baseline, len(FEATURES), "boosted judge")

    def probability(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """P(valid) for each feature row."""
        return tree_probability(self.trees, self.baseline, np.asarray(rows, dtype=float).reshape(-1, len(FEATURES)))

    @property
    def version(self) -> str:
        """A hash of the trees (part of the verdict cache's key)."""
        blob = json.dumps([self.trees, self.baseline], default=float)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"format": "textrobust-judge", "model": "boosted", "features": list(FEATURES),
                "node_columns": list(NODE_COLUMNS), "baseline": self.baseline,
                "trees": [[list(node) for node in tree] for tree in self.trees], "record": dict(self.record)}

    @classmethod
    def from_sklearn(cls, model: Any, record: Mapping[str, Any]) -> BoostedJudge:
        """The trees of a fitted binary ``HistGradientBoostingClassifier`` (numeric features,
        no missing values)."""
        trees, baseline = sklearn_trees(model)
        return cls(trees, baseline, dict(record))

    @classmethod
    def load(cls, path: str | Path | None = None) -> BoostedJudge:
        path, data = _read(path)
        if data.get("model") != "boosted" or list(data.get("node_columns", ())) != list(NODE_COLUMNS):
            raise ConfigError(f"{path} is not a boosted judge with nodes ({', '.join(NODE_COLUMNS)}).")
        try:
            trees = tuple(tuple((int(f), float(t), int(a), int(b), float(v)) for f, t, a, b, v in tree)
                          for tree in data["trees"])
            baseline = float(data["baseline"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path} holds a malformed boosted judge ({exc}); retrain it with "
                              "benchmarks/validity/tune_judge.py.") from None
        return cls(trees, baseline, dict(data.get("record", {})))
