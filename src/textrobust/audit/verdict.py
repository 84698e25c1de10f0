"""The one-screen verdict of an audit: how far the model can be trusted.

Each analysis's report section may carry a ``risk`` in [0, 1] (the share of examples on
which robustness failed: attack success rate, second-order success rate, the adversarial
share of the perturbation space) and a one-line ``point``. The verdict's level is read
from the largest risk: below 0.25 ``good``, below 0.6 ``fair``, else ``poor``; with no
risk at all, ``unknown``. The thresholds are a reading aid, stated in the report, not a
standard.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["THRESHOLDS", "verdict"]

#: (upper bound of risk, level), checked in order.
THRESHOLDS: tuple[tuple[float, str], ...] = ((0.25, "good"), (0.6, "fair"), (math.inf, "poor"))

_HEADLINES = {
    "good": "Robust on what was tested: attacks rarely change its answers.",
    "fair": "Partly robust: a substantial share of its answers can be changed by word substitutions.",
    "poor": "Not robust: most of its answers can be changed by word substitutions.",
    "unknown": "No robustness analysis ran; only the figures below are known.",
}


def verdict(sections: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"level", "headline", "points"}`` from the sections' risks and points."""
    risks = [(float(s["risk"]), s) for s in sections
             if s.get("risk") is not None and not math.isnan(float(s["risk"]))]
    points = [str(s["point"]) for s in sections if s.get("point")]
    if not risks:
        return {"level": "unknown", "headline": _HEADLINES["unknown"], "points": points}
    worst, _ = max(risks, key=lambda pair: pair[0])
    level = next(name for bound, name in THRESHOLDS if worst < bound)
    points.append("Level from the largest failure share above: below 25% good, below 60% fair, else poor.")
    return {"level": level, "headline": _HEADLINES[level], "points": points}
