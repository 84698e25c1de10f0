"""The report section of the maximal-safe-radius analysis: headline figures, Tables 2-3
style rows per ``|I|``, per-word bound bars on a few texts, the gap plot, the position
plot (Figure 6) and the LIME comparison (Section 3.3).

Every normalised figure names its convention: "/ d" divides by Definition 1's diameter
(the distance to the farthest corner of the cube, per text), "/ sqrt(D)" by the
embedding's diameter as the paper's tables do (Table 4); see :mod:`.analysis`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from textrobust.analyses.msr.records import MsrRecord, MsrSummary
from textrobust.sections import Section

__all__ = ["msr_section"]


def msr_section(s: MsrSummary, records: Sequence[MsrRecord], label_names: Sequence[str]) -> Section:
    """The report section of the maximal-safe-radius analysis (see the module docstring)."""
    from textrobust.analyses.figures import bar_chart, line_chart, stacked_bar_chart
    from textrobust.analyses.sections import example_row, figure, headline, table

    single = next((row for row in s.sizes if row.size == 1), None)
    paper = next((row for row in s.sizes_embedding if row.size == 1), None)
    root = "1" if s.norm == "linf" else "sqrt(D)"
    by_d = "/ d: Definition 1, the distance to the farthest corner of the cube (1.0 = any substitution is safe)"
    by_root = (f"/ {root} = {s.embedding_diameter:.3g}: the embedding's diameter, as the paper's Tables 2-6 "
               "(Table 4); compare with the paper in this one")
    heads = [headline("texts analysed", s.texts, "int",
                      "MSR: how far the words' embeddings can move before the prediction can change"),
             headline(f"texts with a lower bound ({s.lower_method})", s.with_lower, "int",
                      "texts whose safe radius was certified by linear bounds" if s.with_lower == s.texts
                      else s.lower_status)]
    if single is not None:
        heads += [headline(f"mean lower bound / d, one word ({s.norm})", single.mean_lower, "float", by_d)]
        if paper is not None:
            heads += [headline(f"mean lower bound / {root}, one word ({s.norm})", paper.mean_lower, "float", by_root)]
        heads += [headline("mean upper bound / d, one word (MCTS; none found = 1.0)", single.mean_upper, "float",
                           "distance of the closest word substitution MCTS found that flips the prediction"),
                  headline("words with a successful substitution", single.found_per_set, "%",
                           "share of the words where replacing that one word can flip the prediction"),
                  headline("words certified against any substitution", single.certified_any, "%",
                           "share of the words whose certified lower bound reached d: no substitute, however far, flips it")]
    heads += [headline("LIME agreement (mean Spearman, |LIME| vs -lower bound)", s.lime_spearman, "float",
                       f"do the words LIME calls important have small safe radii? 1 = same ranking; "
                       f"{s.lime_texts} texts"),
              headline("contradictions (MCTS success inside a certified ball; must be 0)", s.contradictions, "int",
                       "a flip found inside a radius the bounds certified would mean an unsound bound")]
    columns = ["|I|", "sets", "lower", "lower sd", "upper", "upper (found)", "% texts", "% sets", "% certified",
               "gap"]

    def rows(sizes: Sequence[Any]) -> list[list[Any]]:
        return [[r.size, r.sets, r.mean_lower, r.std_lower, r.mean_upper, r.mean_upper_found,
                 100.0 * r.found_per_text, 100.0 * r.found_per_set, 100.0 * r.certified_any, r.mean_gap]
                for r in sizes]

    tables = [table(f"Bounds by |I| / d (Definition 1, farthest corner), {s.norm}", columns, rows(s.sizes))]
    if s.sizes_embedding:
        tables.append(table(f"Bounds by |I| / {root} = {s.embedding_diameter:.3g} (the paper's tables), {s.norm}",
                            columns, rows(s.sizes_embedding)))
    tables.append(table("cost", ["metric", "value"],
                        [["seconds per lower bound (bisection)", s.seconds_per_lower_bound],
                         ["seconds per text, MCTS", s.seconds_per_text_upper], ["queries", s.queries],
                         ["lower bound", s.lower_status], ["errors", s.errors],
                         ["MCTS budget exhausted", s.budget_exhausted]]))
    lime_rows = [[r.example_id, len(r.words), r.spearman] for r in records if r.spearman is not None]
    if lime_rows:
        tables.append(table("LIME against the bounds: Spearman per text", ["text", "words", "Spearman"], lime_rows[:20]))
    figures = []
    for r in [r for r in records if r.words][:3]:
        labels = [f"{w.word}" for w in r.words]
        lower = [w.lower if w.lower is not None else math.nan for w in r.words]
        base = [0.0 if math.isnan(lo) else lo for lo in lower]
        gap = [w.upper - b if w.upper is not None else 0.0 for w, b in zip(r.words, base)]
        open_gap = [1.0 - b if w.upper is None else 0.0 for w, b in zip(r.words, base)]
        figures.append(figure(f"Per-word bounds: {r.example_id}", stacked_bar_chart(
            labels, {"certified lower bound": lower, "gap to the MCTS upper bound": gap,
                     "no substitution found (up to the diameter)": open_gap},
            title="normalised MSR bounds per word (/ d, Definition 1)", ylabel="bound / d"),
            "Each bar: the certified radius (lower bound), then the gap to the closest substitution MCTS "
            "found (upper bound); where MCTS found none, the bar runs to 1.0, the diameter d."))
    if s.sizes:
        figures.append(figure("Gap between the bounds", line_chart(
            {"lower bound": ([r.size for r in s.sizes], [r.mean_lower for r in s.sizes]),
             "upper bound (found only)": ([r.size for r in s.sizes], [r.mean_upper_found for r in s.sizes])},
            title="mean normalised bounds by |I| (/ d, Definition 1)", xlabel="|I| (words perturbed)",
            ylabel="bound / d"),
            "The MSR lies between the two curves; the gap is what neither method can settle."))
    if s.by_position:
        figures.append(figure("Lower bound by word position (Figure 6)", bar_chart(
            [str(p.position) for p in s.by_position], [p.mean_lower for p in s.by_position],
            title="mean normalised lower bound by position (/ d)", xlabel="word position", ylabel="bound / d"),
            "The paper finds LSTMs weaker on the first words and CNNs flat."))
    examples = []
    for r in records:
        if r.closest is None:
            continue
        examples.append(example_row(r.example_id, "substitution found", label_names, r.label, r.text, r.closest,
                                    r.predicted, r.closest_prediction, f"{r.successes} successful substitution(s) found by MCTS"))
        if len(examples) >= 10:
            break
    return Section(heads, tables, figures, examples)
