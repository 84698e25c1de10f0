"""Distances between two attribution maps over the same words (one value per word).

Ivankay et al., "Estimating the Adversarial Robustness of Attributions in Text with
Transformers" (../shared/papers/attribution-robustness-tea.txt), section 4.2: the
attribution distance of Eq. 2 is ``d = 1 - (1 + PCC) / 2``, the Pearson correlation
scaled to [0, 1] (0: the same ranking up to an affine map, 1: perfectly anti-correlated).
Kendall's tau and Spearman's rho are scaled the same way; the top-k distance is
``1 - |top_k(a) & top_k(b)| / k`` over the k words of largest attribution (by value, so a
word counted *for* the label differs from one counted against it).

Undefined correlations (a constant map, or a single word) are read as 0 (distance 0.5)
unless the two maps are equal (distance 0): an attack cannot gain by making a map
constant, and a NaN never reaches a search. SciPy computes the rank correlations.

>>> round(pcc_distance([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]), 6)
0.0
>>> round(pcc_distance([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]), 6)
1.0
>>> top_k_distance([3.0, 2.0, 1.0, 0.0], [0.0, 2.0, 1.0, 3.0], k=2)
0.5
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum

import numpy as np

from textrobust.errors import ConfigError

__all__ = [
    "AttributionDistance",
    "attribution_distance",
    "kendall_distance",
    "pcc",
    "pcc_distance",
    "spearman_distance",
    "top_k_distance",
]


class AttributionDistance(StrEnum):
    """The attribution distances (all in [0, 1], 0 = the same explanation)."""

    PCC = "pcc"
    KENDALL = "kendall"
    SPEARMAN = "spearman"
    TOP_K = "top_k"


def _pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=np.float64).reshape(-1)
    y = np.asarray(b, dtype=np.float64).reshape(-1)
    if x.shape != y.shape:
        raise ConfigError(
            f"Attribution maps must have one value per word of the same text. Got lengths {x.size} and {y.size}."
        )
    if x.size == 0:
        raise ConfigError("Attribution maps must have at least one value. Got empty maps.")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ConfigError("Attribution maps must be finite. Got NaN or infinite values.")
    return x, y


def _scaled(correlation: float, x: np.ndarray, y: np.ndarray) -> float:
    if not np.isfinite(correlation):  # a constant map or a single word
        return 0.0 if np.allclose(x, y) else 0.5
    return float(np.clip(1.0 - (1.0 + correlation) / 2.0, 0.0, 1.0))


def pcc(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Pearson's correlation of two maps; NaN when one of them is constant."""
    x, y = _pair(a, b)
    dx, dy = x - x.mean(), y - y.mean()
    norm = float(np.sqrt((dx * dx).sum() * (dy * dy).sum()))
    if norm <= 1e-300:
        return float("nan")
    return float(np.clip((dx * dy).sum() / norm, -1.0, 1.0))


def pcc_distance(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """``1 - (1 + PCC(a, b)) / 2`` (Ivankay et al., Eq. 2's attribution distance)."""
    x, y = _pair(a, b)
    return _scaled(pcc(x, y), x, y)


def spearman_distance(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """``1 - (1 + rho_s) / 2`` with Spearman's rank correlation (SciPy)."""
    from scipy.stats import spearmanr

    x, y = _pair(a, b)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return _scaled(float("nan"), x, y)
    return _scaled(float(spearmanr(x, y).statistic), x, y)


def kendall_distance(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """``1 - (1 + tau) / 2`` with Kendall's tau-b (SciPy)."""
    from scipy.stats import kendalltau

    x, y = _pair(a, b)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return _scaled(float("nan"), x, y)
    return _scaled(float(kendalltau(x, y).statistic), x, y)


def top_k_distance(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, k: int = 3) -> float:
    """``1 - |top_k(a) & top_k(b)| / k'`` with ``k' = min(k, len)``: the share of the k most
    attributed words (largest values, ties by position) that are no longer among them."""
    x, y = _pair(a, b)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"The 'k' parameter of top_k_distance must be an int >= 1. Got {k!r} instead.")
    k = min(k, x.size)
    top_x = set(np.argsort(-x, kind="stable")[:k].tolist())
    top_y = set(np.argsort(-y, kind="stable")[:k].tolist())
    return 1.0 - len(top_x & top_y) / k


def attribution_distance(
    name: AttributionDistance | str = AttributionDistance.PCC, *, k: int = 3
) -> Callable[[np.ndarray, np.ndarray], float]:
    """The distance function called ``name`` (``k`` is the top-k size)."""
    try:
        kind = AttributionDistance(name)
    except ValueError:
        raise ConfigError(
            f"The 'distance' parameter must be one of {[d.value for d in AttributionDistance]}. Got {name!r} instead."
        ) from None
    if kind is AttributionDistance.TOP_K:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of the top_k distance must be an int >= 1. Got {k!r} instead.")
        return lambda a, b: top_k_distance(a, b, k)
    return {
        AttributionDistance.PCC: pcc_distance,
        AttributionDistance.KENDALL: kendall_distance,
        AttributionDistance.SPEARMAN: spearman_distance,
    }[kind]
