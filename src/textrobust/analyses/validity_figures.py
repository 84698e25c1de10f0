"""The expected valid success rate of each analysis's findings (issue 47, item 3).

Every analysis that counts substitution findings stores, with each finding, its probability
of keeping the meaning (:func:`~textrobust.attack.candidates.swap_validity.finding_validity`,
as a dict: ``probability``, ``draws``, ``swaps``). This module turns a run's findings into
:class:`~textrobust.validity.estimate.Unit` values (one per finding, the item id the review
page uses), the summary's ``expected_valid_success_rate`` with ``_low`` and ``_high``
(:func:`~textrobust.validity.estimate.estimate`), and the section's ``validity`` block the
verdict reads. A figure with a finding that carries no probability (no judge could load)
is n/a: a rate that silently counted such findings as 0 or 1 would claim too much.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from textrobust.validity.estimate import Estimate, Unit, estimate

__all__ = ["EXPECTED", "LABEL", "expected_fields", "finding_note", "headline_note", "unit", "validity_block"]

#: The summary field (with ``_low`` and ``_high``) and its label.
EXPECTED = "expected_valid_success_rate"
LABEL = "expected valid success rate"


def unit(item: str, example: str, validity: Mapping[str, Any] | None, weight: float = 1.0) -> Unit | None:
    """The unit of one finding, None when it carries no probability."""
    if not validity or validity.get("probability") is None:
        return None
    return Unit(item, example, float(validity["probability"]), tuple(float(v) for v in validity.get("draws") or ()),
                float(weight))


def expected_fields(units: Sequence[Unit | None], examples: int) -> dict[str, float]:
    """``expected_valid_success_rate`` with ``_low`` and ``_high`` over ``examples``; NaN when
    any finding has no probability or there is no example."""
    if any(u is None for u in units) or examples <= 0:
        return Estimate(math.nan, math.nan, math.nan).fields(EXPECTED)
    return estimate([u for u in units if u is not None], examples).fields(EXPECTED)


def validity_block(figure: str, units: Sequence[Unit | None], examples: int) -> dict[str, Any] | None:
    """The section's ``validity`` block (the findings the verdict recomputes the interval
    from, as reviews come in); None when the figure is n/a."""
    if any(u is None for u in units) or examples <= 0:
        return None
    return {"figure": figure, "examples": examples, "units": [u.to_dict() for u in units if u is not None]}


def finding_note(validity: Mapping[str, Any] | None) -> str:
    """``P(valid) 0.83`` for a finding's row, with each swap's when there are several."""
    if not validity or validity.get("probability") is None:
        return "P(valid) n/a"
    swaps = validity.get("swaps") or []
    each = "" if len(swaps) < 2 else " (" + ", ".join(
        f"{s.get('word')}->{s.get('substitute')} {float(s.get('probability', math.nan)):.2f}" for s in swaps) + ")"
    return f"P(valid) {float(validity['probability']):.2f}{each}"


#: How a finding's record says its swaps were combined, in the words of the pages.
COMBINED = {"independent": "swaps independent",
            "measured": "swaps combined as measured on readers' findings (textrobust.validity.combination)"}


def combined_phrase(validity: Mapping[str, Any]) -> str:
    """The page's words for how a finding's swaps were combined (records before issue 47's
    measured combination say nothing: independent)."""
    name = str(validity.get("combined") or "independent")
    return COMBINED.get(name, f"swaps combined: {name}")


def headline_note(fields: Mapping[str, float], examples: int, what: str) -> str:
    """The note of the expected valid success rate's headline."""
    low, high = fields[f"{EXPECTED}_low"], fields[f"{EXPECTED}_high"]
    if math.isnan(fields[EXPECTED]):
        return (f"n/a: a finding carries no probability of keeping the meaning (the validated source's judge could "
                f"not load); {what}")
    return (f"95% interval {low:.1%} .. {high:.1%}; {what}, each weighted by its probability of keeping the meaning "
            f"(from the judge's calibrated probability of each swap; textrobust.validity.combination says how swaps "
            f"combine), over {examples} examples; the interval covers "
            "the sampling of examples and the calibration's uncertainty (textrobust.validity.estimate)")
