"""Gradient-boosted trees stored as node tables and applied with numpy.

Judges trained offline with scikit-learn's ``HistGradientBoostingClassifier`` (Friedman
2001's gradient boosting with the histogram splits of Ke et al. 2017, LightGBM) ship as
JSON node tables, so applying one needs numpy only (no scikit-learn import at run time,
and no pickle). Shared by the labelled-set judge
(:mod:`textrobust.attack.candidates.judge`) and the judge learned from people
(:mod:`textrobust.validity.people_judge`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from textrobust.errors import ConfigError

__all__ = ["NODE_COLUMNS", "Tree", "check_trees", "sklearn_trees", "tree_probability", "tree_raw"]

#: The columns of one tree's node table in :class:`BoostedJudge` (a leaf has feature -1).
NODE_COLUMNS = ("feature", "threshold", "left", "right", "value")

#: One tree: its nodes ``(feature, threshold, left, right, value)``, node 0 the root.
Tree = tuple[tuple[int, float, int, int, float], ...]


def check_trees(trees: Sequence[Tree], baseline: float, n: int, what: str) -> None:
    """Raise :class:`ConfigError` unless every node of ``trees`` is well formed for ``n``
    features (children inside the tree, a leaf's feature -1, finite numbers)."""
    for t, tree in enumerate(trees):
        size = len(tree)
        for feature, threshold, left, right, value in tree:
            inner_ok = 0 <= feature < n and 0 < left < size and 0 < right < size
            if not (feature == -1 or inner_ok) or not (math.isfinite(threshold) or feature == -1) \
                    or not math.isfinite(value):
                raise ConfigError(f"Tree {t} of the {what} has a bad node ({feature}, {threshold}, {left}, "
                                  f"{right}, {value}): features run 0..{n - 1}, children inside the tree, a "
                                  "leaf has feature -1; retrain it with benchmarks/validity/tune_judge.py.")
    if not trees or not math.isfinite(baseline):
        raise ConfigError(f"A {what} needs at least one tree and a finite baseline.")


def tree_raw(trees: Sequence[Tree], baseline: float, x: np.ndarray) -> np.ndarray:
    """``baseline + sum of each tree's leaf value`` (the log-odds) for each row of ``x``; at
    a node a row goes left when its feature is at most the threshold (scikit-learn's rule)."""
    raw = np.full(len(x), baseline)
    every = np.arange(len(x))
    for tree in trees:
        table = np.asarray(tree, dtype=float)
        feature, threshold = table[:, 0].astype(int), table[:, 1]
        left, right, value = table[:, 2].astype(int), table[:, 3].astype(int), table[:, 4]
        node = np.zeros(len(x), dtype=int)
        for _ in range(len(tree)):  # a path is at most as long as the tree
            inner = feature[node] >= 0
            if not inner.any():
                break
            f = np.where(inner, feature[node], 0)
            step = np.where(x[every, f] <= threshold[node], left[node], right[node])
            node = np.where(inner, step, node)
        raw += value[node]
    return raw


def tree_probability(trees: Sequence[Tree], baseline: float, x: np.ndarray) -> np.ndarray:
    """``sigmoid`` of :func:`tree_raw`."""
    return 1.0 / (1.0 + np.exp(-np.clip(tree_raw(trees, baseline, x), -50, 50)))


def sklearn_trees(model: Any) -> tuple[tuple[Tree, ...], float]:
    """The trees and baseline of a fitted binary ``HistGradientBoostingClassifier``
    (numeric features, no missing values)."""
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        trees.append(tuple(
            (-1 if leaf else int(f), 0.0 if leaf else float(t), int(a), int(b), float(v) if leaf else 0.0)
            for f, t, a, b, v, leaf in zip(nodes["feature_idx"], nodes["num_threshold"], nodes["left"],
                                           nodes["right"], nodes["value"], nodes["is_leaf"])))
    return tuple(trees), float(np.asarray(model._baseline_prediction).ravel()[0])


