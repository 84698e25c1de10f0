"""The report section of the attribution analysis: curves, AUC_k, coloured examples.

Example texts coloured by attribution are drawn as SVG images (matplotlib text with a
background per word: red for words counted towards the predicted label, blue against
it, as in the paper's Figure 1). The report embeds SVG as an image, never as markup, so
a word of the text can never run as script; the example table rows are plain strings,
escaped by the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from textrobust.analyses.attribution.records import AttributionRecord, AttributionSummary
from textrobust.sections import Section
from textrobust.text import Text

__all__ = ["attribution_map_svg", "attribution_section"]


def _colour(value: float, scale: float) -> tuple[float, float, float]:
    share = 0.0 if scale <= 0 else max(-1.0, min(1.0, value / scale))
    if share >= 0:  # white -> red
        return (1.0, 1.0 - 0.65 * share, 1.0 - 0.65 * share)
    return (1.0 + 0.65 * share, 1.0 + 0.65 * share, 1.0)  # white -> blue


def attribution_map_svg(rows: Sequence[tuple[str, Text, Sequence[float], Sequence[int]]], *, title: str) -> str:
    """An SVG of texts with each word on a background coloured by its attribution;
    ``rows`` are ``(caption, text, values, changed positions)``; changed words are bold."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from textrobust.analyses.figures import _style, svg_of

    per_line = 12
    lines: list[tuple[str, list[tuple[str, float, bool]], float]] = []
    for caption, text, values, changed in rows:
        words = [(w, float(v), i in set(changed)) for i, (w, v) in enumerate(zip(text.words, values))]
        scale = max([abs(v) for _, v, _ in words] + [1e-12])  # one colour scale per text
        chunks = [words[i : i + per_line] for i in range(0, len(words), per_line)] or [[]]
        for j, chunk in enumerate(chunks):
            lines.append((caption if j == 0 else "", chunk, scale))
    height = 0.5 + 0.32 * len(lines)
    with _style():
        fig = Figure(figsize=(9.0, height), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        ax.set_xlim(0, 1)
        ax.set_ylim(0, height)
        ax.text(0.01, height - 0.22, title, fontsize=10, fontweight="bold", va="center")
        for n, (caption, chunk, scale) in enumerate(lines):
            y = height - 0.55 - 0.32 * n
            ax.text(0.01, y, caption, fontsize=8, va="center", color="#444444")
            x = 0.16
            for word, value, bold in chunk:
                width = 0.0072 * (len(word) + 1)
                ax.text(x, y, word, fontsize=8.5, va="center", fontweight="bold" if bold else "normal",
                        bbox={"facecolor": _colour(value, scale), "edgecolor": "#333333" if bold else "none",
                              "boxstyle": "square,pad=0.15", "linewidth": 0.6})
                x += width + 0.008
        return svg_of(fig)


def attribution_section(s: AttributionSummary, records: Sequence[AttributionRecord],
                        label_names: Sequence[str]) -> Section:
    """The report section of the attribution analysis: Figure 2's curves, AUC_k, examples
    whose explanation moved most, and attribution-coloured maps of three of them."""
    from textrobust.analyses.figures import bar_chart, line_chart
    from textrobust.analyses.sections import example_row, figure, headline, table

    attacks = list(dict.fromkeys(p.attack for p in s.points))
    by_attack = {a: [p for p in s.points if p.attack == a] for a in attacks}
    auc = {a.attack: a for a in s.aucs}
    heads = [headline(f"AUC_k (MiniLM), {a.upper()}", auc[a].auc_k_semantic, "float",
                      f"how far {a.upper()} moves the explanation per unit of text change (k), summed over the "
                      "attack strengths rho_max; higher = less robust explanations") for a in attacks]
    if "tea" in auc and "tef" in auc:
        heads.append(headline("AUC_k increase TEA over TEF (MiniLM)", s.relative_increase_semantic, "%",
                              "(AUC_TEA - AUC_TEF) / AUC_TEF; the paper reports 30-50%"))
        heads.append(headline("AUC_k increase TEA over TEF (perplexity)", s.relative_increase_perplexity, "%",
                              "the same, with the relative perplexity increase as the text distance"))
    undefined = sum(p.k_perplexity_undefined for p in s.points)
    if undefined:
        heads.append(headline("perturbed texts without k_PP (perplexity fell)", undefined, "int",
                              "k_PP divides by the relative perplexity increase (Eq. 6), a distance only when "
                              "positive; these texts read more fluently than the original and are left out "
                              "of k_PP and AUC_k(PP)"))
    heads.append(headline("explanations moved (PCC < 0.5)", s.moved_share, "%",
                          f"{attacks[0].upper()} at the largest rho_max, prediction kept"))
    if "tef" in attacks:
        from textrobust.analyses.validity_figures import EXPECTED, headline_note

        heads.append(headline("TEF explanations moved, expected valid", s.expected_valid_success_rate, "%",
                              headline_note({k: getattr(s, k) for k in (EXPECTED, f"{EXPECTED}_low",
                                                                        f"{EXPECTED}_high")},
                                            len(records), "TEF's moved explanations at the largest rho_max")))
    heads.append(headline("predictions changed", s.prediction_changed, "int", "must be 0 (Eq. 3)"))
    rows = [[p.attack, p.rho_max, p.rho, p.runs, p.pcc_mean, p.pcc_std, p.similarity_mean,
             p.relative_perplexity_mean, p.grammar_increase_mean, p.k_semantic_mean, p.k_semantic_std,
             p.k_perplexity_mean, p.seconds_mean, p.attribution_share] for p in s.points]
    tables = [
        table("Figure 2: metrics per rho_max (means over examples; k undefined, and left out, when the text "
              "distance is not positive)",
              ["attack", "rho_max", "rho (true)", "runs", "PCC", "PCC std", "STS (MiniLM)", "relative PP",
               "grammar errors +", "k MiniLM", "k MiniLM std", "k PP", "seconds", "share in attribution"], rows,
              note="rho_max: the largest share of words the attack may change, rho (true): the share it changed; "
                   "PCC: Pearson correlation of the original and perturbed attributions (1 = unchanged); STS: "
                   "MiniLM cosine of the two texts; relative PP: relative perplexity increase; k: attribution "
                   "distance divided by text distance (MiniLM or PP); share in attribution: the share of the "
                   "time spent computing attributions."),
        table("AUC_k over rho_max (trapezoid)", ["attack", "AUC_k MiniLM", "AUC_k PP"],
              [[a.attack, a.auc_k_semantic, a.auc_k_perplexity] for a in s.aucs]),
    ]

    runs = [run for r in records for run in r.runs]

    def present(field: str) -> str:
        return "measured" if any(getattr(run, field) is not None for run in runs) else "absent (not installed or off)"

    tables.append(table("Text distances (the paper's USE, GPT-2 and LanguageTool are not offline)",
                        ["distance", "model", "status"],
                        [["semantic (Eq. 5)", "MiniLM sentence encoder", present("similarity")],
                         ["relative perplexity (Eq. 6)", "Gemma 3 270M (optional lm extra)", present("perplexity")],
                         ["grammar errors", "link-grammar unlinked words", present("grammar_errors")]]))

    def series(field: str) -> dict[str, tuple[list[float], list[float | None]]]:
        return {a.upper(): ([p.rho_max for p in by_attack[a]], [getattr(p, field) for p in by_attack[a]])
                for a in attacks}

    figures = [
        figure("PCC of original and perturbed attributions", line_chart(
            series("pcc_mean"), title="PCC (lower: explanation moved more)", xlabel="rho_max", ylabel="PCC")),
        figure("k (MiniLM semantic distance)", line_chart(
            series("k_semantic_mean"), title="k_MiniLM (higher: less robust)", xlabel="rho_max", ylabel="k")),
        figure("Semantic similarity", line_chart(
            series("similarity_mean"), title="STS (MiniLM cosine)", xlabel="rho_max", ylabel="cosine")),
        figure("Relative perplexity increase", line_chart(
            series("relative_perplexity_mean"), title="relative PP increase (Gemma)", xlabel="rho_max",
            ylabel="(PP' - PP) / PP")),
        figure("Grammar errors added", line_chart(
            series("grammar_increase_mean"), title="grammar errors + (link-grammar)", xlabel="rho_max",
            ylabel="errors")),
    ]
    if s.aucs:
        figures.append(figure("AUC_k", bar_chart([a.attack.upper() for a in s.aucs],
                                                 [a.auc_k_semantic for a in s.aucs],
                                                 title="AUC_k (MiniLM)", ylabel="AUC_k")))
    examples = []
    chosen = []
    for record in records:
        runs = [r for r in record.runs if r.prediction_kept and r.changed > 0]
        if not runs:
            continue
        best = max(runs, key=lambda r: (r.attack == attacks[0], r.rho_max))
        chosen.append((record, best))
        note = (f"{best.attack.upper()} rho_max {best.rho_max:g}: PCC "
                + ("n/a" if not math.isfinite(best.pcc) else f"{best.pcc:.2f}")
                + ("" if best.similarity is None else f", STS {best.similarity:.2f}")
                + ("" if best.k_semantic is None else f", k {best.k_semantic:.2f}"))
        examples.append(example_row(record.example_id, "moved" if best.pcc < 0.5 else "kept", label_names,
                                    record.label, record.original, best.perturbed, record.prediction,
                                    record.prediction, note))
        if len(examples) >= 12:
            break
    for record, best in chosen[:3]:
        svg = attribution_map_svg(
            [("original", record.original, record.original_attribution, ()),
             (f"{best.attack.upper()} {best.rho_max:g}", best.perturbed, best.attribution,
              record.original.diff(best.perturbed))],
            title=f"example {record.example_id}: attributions (red: for the predicted label, blue: against)")
        figures.append(figure(f"Attribution map, example {record.example_id}", svg,
                              "Changed words are bold and framed."))
    point = None if not math.isfinite(s.moved_share) else (
        f"attribution: {s.moved_share:.0%} of the explanations moved (Pearson correlation with the original "
        "below 0.5) while the prediction stayed the same.")
    return Section(heads, tables, figures, examples, risk=None if not math.isfinite(s.moved_share) else s.moved_share,
                   point=point)
