"""The one-screen verdict of an audit: how far the model can be trusted.

Each analysis's report section may carry a ``risk`` in [0, 1] (the share of examples on
which robustness failed: attack success rate, second-order success rate, the adversarial
share of the perturbation space) and a one-line ``point``. The verdict's level is read
from the largest risk: below 0.25 ``good``, below 0.6 ``fair``, else ``poor``; with no
risk at all, ``unknown``. The thresholds are a reading aid, stated in the report, not a
standard.

Robustness means robustness to substitutions that keep the meaning, so a section whose
settings say ``candidates = "paper"`` (the paper's own substitutes, most of which change
the meaning: ``benchmarks/results/validity.md``) keeps its point but does not set the
level; a point says so. So does a second-order section whose findings, read blind by LLM reader agents,
were not natural enough or whose patch did not keep the sentiment often enough (issue 38).

**The level follows the interval** (issue 47). A section whose findings carry probabilities
of keeping the meaning reports its risk as the expected valid success rate with a 95%
interval (``risk_low`` .. ``risk_high``, :mod:`textrobust.validity.estimate`; once findings
are reviewed, the reviewed figure: confirmed findings count 1, rejected 0, the rest by their
probability); a section without one has a point and no interval. The level is set only when
the largest low end and the largest high end over the counted sections fall in the same
band; otherwise the level is ``inconclusive``, and ``settle`` names the findings whose review
would settle it (:func:`textrobust.validity.estimate.settling_reviews`: greedy, not the exact
smallest set; it assumes each review agrees with the judge), which ``textrobust review``
shows first. When even reviewing every finding could not settle it (the interval of the
sampled examples alone spans two bands), ``settle`` is empty and a point says that more
examples would.

Each section's point that used the validated synonyms ends with what "robust" covers (the
substitutes tried per content word, :func:`textrobust.attack.candidates.choice.coverage`);
the front page says it once, as the verdict's first point, and drops it from the others
(issue 39 item 4; the sections themselves keep their own count).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["GATED", "NEIGHBOURHOOD", "THRESHOLDS", "Gate", "interval_of", "verdict"]

#: A section's settings -> (may it set the level, a sentence saying why).
Gate = Callable[[Mapping[str, Any]], tuple[bool, str]]

#: Analyses whose level needs evidence that their findings are believed (issue 38): a
#: second-order section sets the level only when people's reading of findings made with its
#: settings met the targets (:func:`textrobust.analyses.second_order.evidence.gate`).
GATED = ("second-order",)

#: (upper bound of risk, level), checked in order.
THRESHOLDS: tuple[tuple[float, str], ...] = ((0.25, "good"), (0.6, "fair"), (math.inf, "poor"))

_HEADLINES = {
    "good": "Robust on what was tested: attacks rarely change its answers.",
    "fair": "Partly robust: a substantial share of its answers can be changed by word substitutions.",
    "poor": "Not robust: most of its answers can be changed by word substitutions.",
    "unknown": "No robustness analysis ran; only the figures below are known.",
    "inconclusive": "Inconclusive: the evidence cannot yet decide between {low} and {high}.",
}


#: Analyses whose risk is about sentences near the test set, not the model's answers on
#: it: when one of them sets the level, the headline says so, and a point gives the level
#: of the analyses of its own answers (a second-order success flips a nearby sentence,
#: often one the model barely decides, not a test sentence).
NEIGHBOURHOOD = {"second-order": ("Not robust near its test data: for most test sentences a nearby natural "
                                  "sentence flips under one synonym swap (second-order).",
                                  "Partly robust near its test data: for a substantial share of test sentences "
                                  "a nearby natural sentence flips under one synonym swap (second-order).")}


def _level(worst: float) -> str:
    return next(name for bound, name in THRESHOLDS if worst < bound)


def interval_of(section: Mapping[str, Any]) -> tuple[float, float, float]:
    """A section's risk with its interval ``(point, low, high)``; ends equal to the point
    when the section gives none."""
    point = float(section["risk"])
    low, high = section.get("risk_low"), section.get("risk_high")
    if low is None or high is None or math.isnan(float(low)) or math.isnan(float(high)):
        return point, point, point
    return point, float(low), float(high)


def _settle(counted: Sequence[Mapping[str, Any]]) -> list[str] | None:
    """The findings whose review would settle the level (None: no review can), from the
    counted sections' ``validity`` blocks."""
    from textrobust.validity.estimate import Estimate, settling_reviews, units_from_dicts

    figures = {}
    fixed: list[tuple[float, float]] = []
    for i, s in enumerate(counted):
        block = s.get("validity")
        if isinstance(block, Mapping) and block.get("units") is not None and block.get("examples"):
            figures[str(i)] = (units_from_dicts(block["units"]), int(block["examples"]))
        else:
            _, low, high = interval_of(s)
            fixed.append((low, high))
    if not figures:
        return None

    def settled(estimates: Mapping[str, Estimate]) -> bool:
        lows = [e.low for e in estimates.values()] + [low for low, _ in fixed]
        highs = [e.high for e in estimates.values()] + [high for _, high in fixed]
        return _level(max(lows)) == _level(max(highs))

    return settling_reviews(figures, settled)


def _inconclusive(counted: Sequence[Mapping[str, Any]], points: list[str]) -> dict[str, Any]:
    """The verdict when the counted sections' intervals span two bands."""
    spans = [(interval_of(s), s) for s in counted]
    low = max(lows for (_, lows, _), _ in spans)
    (point, _, high), driver = max(spans, key=lambda pair: pair[0][2])
    points.append(f"Level from the largest failure share's 95% interval (below 25% good, below 60% fair, else poor): "
                  f"the low ends reach {low:.1%}, the high ends {high:.1%} ({driver.get('name', '?')}, point "
                  f"{point:.1%}), which spans {_level(low)} and {_level(high)}.")
    settle = _settle(counted)
    if settle:
        points.append(f"Reviewing {len(settle)} finding(s) would settle it if the readers agree with the judge "
                      f"(`textrobust review` shows them first): {', '.join(settle[:12])}"
                      + (f" and {len(settle) - 12} more" if len(settle) > 12 else "") + ". The list is greedy "
                      "(findings whose review moves the interval most first), not proved smallest.")
    else:
        points.append("Reviews alone cannot settle it: even with every finding read as the judge expects, the "
                      "interval of the examples attacked spans two bands; attack more examples (--n). The widest "
                      f"interval is {driver.get('name', '?')}'s: its own command takes a larger --n, and an audit's "
                      "--profile paper runs every analysis at the papers' sizes (an audit's --n only lowers a "
                      "profile's sizes).")
    headline = _HEADLINES["inconclusive"].format(low=_level(low), high=_level(high))
    return {"level": "inconclusive", "headline": headline, "points": points, "settle": settle or []}


def _names(sections: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(str(s.get("name", "?")) for s in sections)


def _uncounted(sections: Sequence[Mapping[str, Any]], paper: Sequence[Mapping[str, Any]]) -> str:
    """The headline of an ``unknown`` level: which analyses ran but did not count toward
    it, and why (paper substitutes, or no failure share computed); else that none ran."""
    undefined = [s for s in sections if s.get("risk") is not None and s not in paper]  # NaN: counted no example
    if not paper and not undefined:
        return _HEADLINES["unknown"]
    why = []
    if paper:
        why.append(f"{_names(paper)} used the papers' own substitutes (--candidates paper), most of which change the "
                   "meaning, so a flip there is not a robustness failure")
    if undefined:
        why.append(f"{_names(undefined)} gave no failure share (no example counted)")
    hint = " Rerun with --candidates validated for a level." if paper else ""
    return f"No analysis counted toward the level: {'; '.join(why)}. The figures below are measured all the same.{hint}"


def _default_gates() -> dict[str, Gate]:
    from textrobust.analyses.second_order.evidence import gate

    return {name: gate for name in GATED}


def _tried_here(sections: Sequence[Mapping[str, Any]]) -> float | None:
    """The substitutes tried per content word in this run's own sentences (the first
    section that counted them: the attack's headline), or None."""
    for section in sections:
        for head in section.get("headline") or ():
            if head.get("label") == "substitutes tried per content word":
                value = head.get("value")
                if isinstance(value, (int, float)) and not math.isnan(float(value)):
                    return float(value)
    return None


def _coverage_once(points: list[str], sections: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """``points`` with the coverage clause said once: taken out of every point that carries
    it ("...; robust here means robust to the substitutes the validated source tries, which
    cover about N% of those people accept ...") and put first, as its own sentence, with the
    substitutes tried per content word in this run's own sentences where a section counted
    them (issue 46 item 6)."""
    from textrobust.attack.candidates.choice import coverage, per_word_note

    clause = coverage("validated")
    if not clause or not any(clause in p for p in points):
        return points
    here = per_word_note(_tried_here(sections))
    out = [f"{clause[:1].upper()}{clause[1:]}{f' ({here})' if here else ''}."]
    for point in points:
        for joined in (f"; {clause}", f"{clause}; ", clause):
            point = point.replace(joined, "")
        out.append(point)
    return out


def verdict(sections: Sequence[Mapping[str, Any]], gates: Mapping[str, Gate] | None = None) -> dict[str, Any]:
    """``{"level", "headline", "points"}`` (and ``settle`` when inconclusive) from the
    sections' risks, their intervals and points. ``gates``
    (default: :data:`GATED`) say, per analysis name, whether a section with its settings may
    set the level, and why; one that may not keeps its point, plus the reason."""
    gates = _default_gates() if gates is None else gates
    paper = [s for s in sections if (s.get("settings") or {}).get("candidates") == "paper"]
    points = _coverage_once([str(s["point"]) for s in sections if s.get("point")], sections)
    barred = []
    for s in sections:
        check = gates.get(str(s.get("name", "")))
        if check is not None and s not in paper and s.get("risk") is not None:
            allowed, why = check(s.get("settings") or {})
            if not allowed:
                barred.append(s)
                points.append(why)
    risks = [(float(s["risk"]), s) for s in sections if s.get("risk") is not None
             and not math.isnan(float(s["risk"])) and s not in paper and s not in barred]
    if paper and risks:  # without a counted risk the headline says it
        points.append(f"Not counted in the level: {', '.join(str(s.get('name', '?')) for s in paper)} used the "
                      "papers' own substitutes (--candidates paper), most of which change the meaning.")
    if not risks:
        headline = _uncounted([s for s in sections if s not in barred], paper)
        if barred:
            why = f"{_names(barred)} did not meet the bar that the readers' reading of its findings sets (see below)"
            headline = (f"No analysis counted toward the level: {why}." if headline == _HEADLINES["unknown"]
                        else f"{headline} Also, {why}.")
        return {"level": "unknown", "headline": headline, "points": points}
    counted = [s for _, s in risks]
    if _level(max(interval_of(s)[1] for s in counted)) != _level(max(interval_of(s)[2] for s in counted)):
        return _inconclusive(counted, points)
    worst, driver = max(risks, key=lambda pair: pair[0])
    level = _level(worst)
    points.append("Level from the largest failure share above: below 25% good, below 60% fair, else poor.")
    headline = _HEADLINES[level]
    name = str(driver.get("name", ""))
    if name in NEIGHBOURHOOD and level != "good":
        headline = NEIGHBOURHOOD[name][0 if level == "poor" else 1]
        own = [(risk, s) for risk, s in risks if str(s.get("name", "")) not in NEIGHBOURHOOD]
        if own:
            top, top_section = max(own, key=lambda pair: pair[0])
            points.append(f"On its own answers ({', '.join(str(s.get('name', '?')) for _, s in own)}), the level "
                          f"would be {_level(top)}: at most {top:.0%} fail ({top_section.get('name', '?')}).")
    return {"level": level, "headline": headline, "points": points}
