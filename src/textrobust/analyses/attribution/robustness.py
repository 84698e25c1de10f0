"""The attribution-robustness constant k and its area under the rho curve.

Ivankay et al. (../shared/papers/attribution-robustness-tea.txt):

- Eq. 2: ``k(s) = max_{s~ in N(s)} d[A(s~), A(s)] / d_s(s~, s)``, subject to Eq. 3 (the
  prediction of ``s~`` is the prediction of ``s``). The attack's best text estimates the
  max; :func:`lipschitz_k` returns None when the prediction changed (k is never computed
  then), when the text distance is absent, or not positive for a changed text, and 0
  when the attack changed no word (no admissible perturbation was found: nothing moved).
  A Lipschitz quotient divides by a *distance* (the neighbourhood ``N(s) = {s~ :
  d_s(s~, s) < eps}`` of Eq. 2 and the paper's "the relative *increase* of perplexity"),
  so k is never negative: Eq. 6's relative perplexity is below 0 when the perturbed text
  reads *more* fluently than the original (often with TEA, whose fill-in asks the same
  language model), and then no perplexity-based k exists for that text. It is left out
  of the mean (Eq. 4) and counted (``CurvePoint.k_perplexity_undefined``) instead of
  entering as a negative ratio, which made AUC_k(PP) negative and meaningless;
- Eq. 4: ``k(A, F) = E_s[k(s)]``, the mean over the examples where k is defined;
- ``AUC_k = integral of k(A, F) d rho``, by the trapezoid rule over the swept
  ``rho_max`` values (the paper integrates over the true perturbed ratio; our sweep
  fixes ``rho_max``, and the mean true ratio of each point is reported beside it);
- the relative increase of TEA over TEF: ``(AUC_TEA - AUC_TEF) / AUC_TEF`` (Figure 3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["auc", "lipschitz_k", "mean_std", "relative_increase"]


def lipschitz_k(attribution_distance: float, text_distance: float | None, *, prediction_kept: bool,
                changed_words: int) -> float | None:
    """``d_attr / d_s`` for one perturbed text (Eq. 2 with the constraint of Eq. 3);
    None where it is undefined: prediction changed, distance absent, or distance not
    positive (``d_s <= 0``, e.g. a relative perplexity that fell; see the module docstring)."""
    if not prediction_kept:
        return None
    if changed_words == 0:
        return 0.0
    if text_distance is None or not math.isfinite(text_distance) or text_distance < 1e-12:
        return None
    if not math.isfinite(attribution_distance):
        return None
    return float(attribution_distance) / float(text_distance)


def mean_std(values: Sequence[float | None]) -> tuple[float, float, int]:
    """Mean, standard deviation and count of the values that are defined (NaN, 0 if none)."""
    kept = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if kept.size == 0:
        return math.nan, math.nan, 0
    return float(kept.mean()), float(kept.std()), int(kept.size)


def auc(rhos: Sequence[float], values: Sequence[float]) -> float:
    """The trapezoid area under ``values`` over ``rhos`` (sorted); NaN if a point is NaN
    or there are fewer than two points."""
    pairs = sorted(zip(rhos, values))
    if len(pairs) < 2 or any(not math.isfinite(v) for _, v in pairs):
        return math.nan
    x = np.array([p[0] for p in pairs], dtype=np.float64)
    y = np.array([p[1] for p in pairs], dtype=np.float64)
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2.0))


def relative_increase(new: float, baseline: float) -> float:
    """``(new - baseline) / |baseline|`` (NaN when the baseline is 0 or NaN)."""
    if not (math.isfinite(new) and math.isfinite(baseline)) or baseline == 0:
        return math.nan
    return (new - baseline) / abs(baseline)
