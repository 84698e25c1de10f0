"""The report section of an ACCS analysis (Morris, BlackboxNLP 2020, Figures 2, 4 and 5).

- :func:`curve_figure`: the constraint robustness curves, one line per constraint model
  (second-order rate on x, first-order rate on y, through (0, 0)), drawn as the
  pessimistic staircase that ACCS integrates;
- :func:`rates_figure`: both success rates against the threshold;
- :func:`best_examples`: successful first- and second-order examples, the most
  convincing first (the strictest threshold at which each was found);
- :func:`accs_section`: headline figures, tables, figures and examples.

Charts come from :mod:`textrobust.analyses.figures` (SVG text, embedded by the report);
the matplotlib PNG files the earlier ``textrobust accs`` command wrote beside its run are
replaced by these.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from textrobust.analyses.accs.curve import Interpolation, RobustnessCurve
from textrobust.analyses.accs.measures import FIRST, SECOND, AccsRecord, AccsSummary
from textrobust.analyses.accs.sweep import PointResult
from textrobust.sections import Section
from textrobust.text import Text

__all__ = ["accs_section", "best_examples", "curve_figure", "perturbed_text", "rates_figure", "staircase"]

#: Successful examples shown per attack and constraint model.
EXAMPLES_PER_TABLE = 5


def staircase(curve: RobustnessCurve) -> tuple[list[float], list[float]]:
    """The pessimistic curve ``f(x) = max{TP(eps) : FP(eps) <= x}`` through (0, 0) as
    polyline vertices (x = second-order rate, y = first-order rate)."""
    order = sorted(range(len(curve.epsilons)), key=lambda i: (curve.second_order[i], curve.first_order[i]))
    xs = [0.0] + [curve.second_order[i] for i in order]
    ys = [0.0] + [curve.first_order[i] for i in order]
    best = [max(ys[: i + 1]) for i in range(len(ys))]
    out_x, out_y = [xs[0]], [best[0]]
    for i in range(1, len(xs)):
        out_x += [xs[i], xs[i]]
        out_y += [best[i - 1], best[i]]
    return out_x, out_y


def _label(constraint: str, curve: RobustnessCurve) -> str:
    score = curve.accs(Interpolation.PESSIMISTIC)
    return f"{constraint} (ACCS n/a)" if math.isnan(score) else f"{constraint} (ACCS {score:.3f})"


def curve_figure(by_constraint: Mapping[str, RobustnessCurve]) -> str:
    """The constraint robustness curves as SVG text."""
    from textrobust.analyses.figures import line_chart

    series = {_label(c, curve): staircase(curve) for c, curve in by_constraint.items()}
    title = "Constraint robustness curve" + ("" if len(series) > 1 else f": {next(iter(series))}")
    return line_chart(series, title=title, xlabel="second-order success rate (fools the constraint)",
                      ylabel="first-order success rate", percent=True)


def rates_figure(by_constraint: Mapping[str, RobustnessCurve]) -> str:
    """First- and second-order success rates against the threshold, as SVG text."""
    from textrobust.analyses.figures import line_chart

    series: dict[str, tuple[Sequence[float], Sequence[float]]] = {}
    for c, curve in by_constraint.items():
        series[f"{c}: first order"] = (curve.epsilons, curve.first_order)
        series[f"{c}: second order"] = (curve.epsilons, curve.second_order)
    return line_chart(series, title="Success rates against the threshold", xlabel="threshold epsilon",
                      ylabel="attack success rate", percent=True)


def best_examples(records: Sequence[AccsRecord], *, kind: str, constraint: str,
                  limit: int = EXAMPLES_PER_TABLE) -> list[tuple[AccsRecord, PointResult]]:
    """Up to ``limit`` successful examples of one attack and constraint model, the most
    convincing first: for each, its success at the strictest threshold."""
    found = []
    for record in records:
        if record.kind != kind or record.constraint != constraint:
            continue
        points = [p for p in record.points if p.success and p.perturbed]
        if points:
            found.append((record, max(points, key=lambda p: p.epsilon)))
    found.sort(key=lambda rp: (-rp[1].epsilon, -(rp[1].similarity or 0.0), rp[0].example))
    return found[:limit]


def perturbed_text(original: Text, perturbed: str) -> Text:
    """``perturbed`` (a string) as ``original`` with the differing words swapped in, so
    sentence pairs keep their columns; the plain string when the word counts differ."""
    words = Text.from_string(perturbed).words
    if len(words) != len(original.words):
        return Text.from_string(perturbed)
    changes = {p: w for p, (a, w) in enumerate(zip(original.words, words)) if a != w}
    return original.replace(changes) if changes else original


def _interval(summary: AccsSummary, constraint: str) -> tuple[float, float]:
    for item in summary.bootstrap.per_curve:
        if item.constraint == constraint:
            return item.low, item.high
    return math.nan, math.nan


def _span(low: float, high: float) -> str | None:
    return None if math.isnan(low) or math.isnan(high) else f"{low:.2f}-{high:.2f}"


def accs_section(summary: AccsSummary, records: Sequence[AccsRecord], label_names: Sequence[str]) -> Section:
    """The report section of an ACCS analysis."""
    from textrobust.analyses.sections import example_row, figure, headline, table

    heads = []
    for row in summary.rows:
        span = _span(*_interval(summary, row.constraint))
        heads.append(headline(f"ACCS, {row.constraint}", row.accs, "float",
                              "how well this similarity model works as an attack's constraint: 1 = as its "
                              "threshold loosens it admits the victim's adversarial examples before any "
                              "meaning-flipping antonym swap, 0 = both at once; "
                              f"{summary.bootstrap.level:.0%} bootstrap interval {span or 'n/a'}"))
    first_row = summary.rows[0] if summary.rows else None
    heads += [headline("sentences", summary.examples, "int", "test sentences attacked at every threshold"),
              headline("victim right (first order attacked)",
                       first_row.attacked_first_order if first_row else None, "int",
                       "sentences the victim classifies right: the first-order attack runs on these"),
              headline("thresholds", len(summary.epsilons), "int",
                       "similarity thresholds eps swept to draw each constraint robustness curve")]
    tables = [
        table("ACCS per constraint model", ["model", "ACCS", "95% interval", "trapezoid", "max 1st", "max 2nd"],
              [[r.constraint, r.accs, _span(*_interval(summary, r.constraint)), r.accs_trapezoid,
                r.max_first_order, r.max_second_order] for r in summary.rows],
              note="ACCS: the area under the staircase curve (see the figure); trapezoid: the same area with "
                   "straight lines between the points (the released code's); max 1st, max 2nd: the largest "
                   "first-order (victim flipped) and second-order (antonym swap accepted) success rates, "
                   "by whose product the area is divided."),
        table("seconds per sentence", ["model", "1st order", "2nd order", "LM warm-up"],
              [[r.constraint, r.first_order_seconds_per_example, r.second_order_seconds_per_example,
                summary.lm_warm_seconds_per_example] for r in summary.rows]),
    ]
    if summary.bootstrap.differences:
        tables.append(table("paired ACCS differences", ["difference", "95% interval", "share > 0"],
                            [[f"{d.minus[0]} - {d.minus[1]}", _span(d.low, d.high), d.share_positive]
                             for d in summary.bootstrap.differences]))
    if summary.shortcut is not None:
        tables.append(table("monotone shortcut vs exact sweep", ["model", "exact", "shortcut", "gap 1st", "gap 2nd"],
                            [[c.constraint, c.accs_exact, c.accs_shortcut, c.max_gap_first_order,
                              c.max_gap_second_order] for c in summary.shortcut.per_curve]))
    figures = []
    if summary.curves:
        figures.append(figure("Constraint robustness curve", curve_figure(summary.curves),
                              "Each point is one threshold: the share of sentences whose meaning-changing "
                              "antonym swaps the constraint accepts (x) against the share of correctly "
                              "classified sentences the first-order attack flips (y). ACCS is the area "
                              "under the staircase over the largest x times the largest y."))
        figures.append(figure("Success rates against the threshold", rates_figure(summary.curves)))
    examples = []
    for row in summary.rows:
        for record, point in best_examples(records, kind=SECOND, constraint=row.constraint):
            examples.append(example_row(
                record.example, "fools the constraint", label_names, record.label, record.original,
                perturbed_text(record.original, point.perturbed or ""), None, None,
                _note("second order", row.constraint, point, "antonyms")))
        for record, point in best_examples(records, kind=FIRST, constraint=row.constraint):
            examples.append(example_row(
                record.example, "fools the victim", label_names, record.label, record.original,
                perturbed_text(record.original, point.perturbed or ""), record.label, point.prediction,
                _note("first order", row.constraint, point, "words")))
    # ACCS judges the similarity constraint the attacks rely on, not the victim: a low ACCS
    # says the attack's "successes" may be meaning changes, not that the victim is fragile.
    # So it gives no risk to the report's verdict (None), only a point.
    return Section(heads, tables, figures, examples, risk=None, point=_point(summary))


def _note(kind: str, constraint: str, point: PointResult, swapped: str) -> str:
    similarity = "n/a" if point.similarity is None else f"{point.similarity:.3f}"
    return f"{kind}: {constraint} {similarity} >= eps {point.epsilon:.2f}, {point.swapped} {swapped} swapped"


def _point(summary: AccsSummary) -> str | None:
    if not summary.rows:
        return None
    parts = []
    for row in summary.rows:
        if math.isnan(row.accs):
            parts.append(f"{row.constraint}: ACCS undefined (no first-order success)")
        else:
            parts.append(f"{row.constraint}: ACCS {row.accs:.2f}, antonym swaps accepted on up to "
                         f"{row.max_second_order:.0%} of sentences")
    return (f"Similarity constraint over {summary.examples} sentences (ACCS 1: as its threshold loosens, it "
            "lets the victim's adversarial examples through before any meaning-flipping antonym swap; 0: both "
            "at once): " + "; ".join(parts) + ".")
