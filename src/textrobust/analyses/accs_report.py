"""Plots and example tables of an ACCS run (Morris, BlackboxNLP 2020, Figures 2, 4 and 5).

- :func:`plot_curves`: the constraint robustness curves, one panel per victim, one line
  per constraint model (second-order rate on x, first-order rate on y, through (0, 0)),
  with ACCS in the legend;
- :func:`plot_rates`: both success rates against the threshold;
- :func:`example_rows` / :func:`examples_markdown`: first- and second-order examples with
  their similarity, the strictest threshold at which each was found and the victim's labels.

matplotlib runs on its Agg backend (no display needed); figures are written as PNG and
SVG beside the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from textrobust.analyses.accs_curve import Interpolation, RobustnessCurve
from textrobust.text import Text

__all__ = ["example_rows", "examples_markdown", "mark_changes", "plot_curves", "plot_rates"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix in (".png", ".svg"):
        path = stem.with_suffix(suffix)
        fig.savefig(path, dpi=120, bbox_inches="tight")
        paths.append(path)
    return paths


def plot_curves(curves: Mapping[str, Mapping[str, RobustnessCurve]], stem: Path) -> list[Path]:
    """Constraint robustness curves (PNG and SVG at ``stem``); returns the files written."""
    plt = _pyplot()
    victims = list(curves)
    fig, axes = plt.subplots(1, max(1, len(victims)), figsize=(5.2 * max(1, len(victims)), 4.6), squeeze=False)
    for ax, victim in zip(axes[0], victims):
        for constraint, curve in curves[victim].items():
            order = sorted(range(len(curve.epsilons)), key=lambda i: (curve.second_order[i], curve.first_order[i]))
            xs = [0.0] + [curve.second_order[i] for i in order]
            ys = [0.0] + [curve.first_order[i] for i in order]
            score = curve.accs(Interpolation.PESSIMISTIC)
            label = f"{constraint} (ACCS n/a)" if math.isnan(score) else f"{constraint} (ACCS {score:.3f})"
            best = [max(ys[: i + 1]) for i in range(len(ys))]  # the pessimistic curve that ACCS integrates
            ax.step(xs, best, where="post", linewidth=2, label=label)
            ax.scatter(xs[1:], ys[1:], s=10)
        ax.set_title(f"victim: {victim}")
        ax.set_xlabel("second-order success rate (fools the constraint)")
        ax.set_ylabel("first-order success rate (fools the victim)")
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle("Constraint robustness curves (Morris 2020)")
    paths = _save(fig, stem)
    plt.close(fig)
    return paths


def plot_rates(curves: Mapping[str, Mapping[str, RobustnessCurve]], stem: Path) -> list[Path]:
    """First-order (solid) and second-order (dashed) success rates against epsilon."""
    plt = _pyplot()
    victims = list(curves)
    fig, axes = plt.subplots(1, max(1, len(victims)), figsize=(5.2 * max(1, len(victims)), 4.2), squeeze=False)
    for ax, victim in zip(axes[0], victims):
        for index, (constraint, curve) in enumerate(curves[victim].items()):
            colour = f"C{index}"
            ax.plot(curve.epsilons, curve.first_order, color=colour, linewidth=2, label=f"{constraint}: first order")
            ax.plot(curve.epsilons, curve.second_order, color=colour, linestyle="--", linewidth=2,
                    label=f"{constraint}: second order")
        ax.set_title(f"victim: {victim}")
        ax.set_xlabel("threshold epsilon")
        ax.set_ylabel("attack success rate")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    paths = _save(fig, stem)
    plt.close(fig)
    return paths


def mark_changes(original: str, perturbed: str, *, style: str = "markdown") -> str:
    """``perturbed`` with each changed word marked: ``**new**`` (markdown) or ``[new]``."""
    a, b = Text.from_string(original), Text.from_string(perturbed)
    if len(a) != len(b):
        return perturbed
    changes = {p: (f"**{b.words[p]}**" if style == "markdown" else f"[{b.words[p]}]") for p in a.diff(b)}
    if not changes:
        return perturbed
    # rebuild from the perturbed text's own spacing; the markers need not be words
    spans = b.word_spans()
    out, cursor = [], 0
    for position, (_, start, end) in enumerate(spans):
        if position in changes:
            out.append(perturbed[cursor:start])
            out.append(changes[position])
            cursor = end
    out.append(perturbed[cursor:])
    return "".join(out)


def example_rows(records: Sequence[Mapping[str, Any]], *, kind: str, constraint: str, victim: str | None = None,
                 limit: int = 5) -> list[dict[str, Any]]:
    """Up to ``limit`` successful examples of one attack and constraint model, the most
    convincing first: for each example the strictest threshold at which the attack
    succeeded, with the text, its similarity and swapped words (and, first order, labels)."""
    rows = []
    for record in records:
        if record["kind"] != kind or record["constraint"] != constraint or record.get("victim") != victim:
            continue
        found = [p for p in record["points"] if p["success"] and p.get("perturbed")]
        if not found:
            continue
        best = max(found, key=lambda p: p["epsilon"])
        rows.append(
            {
                "example_id": record["example_id"],
                "epsilon": best["epsilon"],
                "similarity": best["similarity"],
                "swapped": best["swapped"],
                "original": record["original"],
                "perturbed": best["perturbed"],
                "label": record.get("label"),
                "prediction": best.get("prediction"),
            }
        )
    rows.sort(key=lambda r: (-r["epsilon"], -(r["similarity"] or 0.0), r["example_id"]))
    return rows[:limit]


def examples_markdown(records: Sequence[Mapping[str, Any]], victims: Sequence[str], constraints: Sequence[str],
                      *, label_names: Sequence[str] = (), limit: int = 5) -> str:
    """Markdown tables of first- and second-order examples per constraint model."""

    def label(i: Any) -> str:
        return label_names[i] if isinstance(i, int) and 0 <= i < len(label_names) else str(i)

    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    lines = ["# ACCS examples", ""]
    for constraint in constraints:
        lines += [f"## {constraint}: second-order examples (the constraint is fooled)", ""]
        rows = example_rows(records, kind="second_order", constraint=constraint, limit=limit)
        if not rows:
            lines += ["(none found)", ""]
        else:
            lines += ["| eps | similarity | swapped | original | perturbed |", "|---|---|---|---|---|"]
            for r in rows:
                lines.append(
                    f"| {r['epsilon']:.2f} | {r['similarity']:.3f} | {r['swapped']} | {cell(r['original'])} | "
                    f"{cell(mark_changes(r['original'], r['perturbed']))} |"
                )
            lines.append("")
        for victim in victims:
            lines += [f"## {constraint}, victim {victim}: first-order examples (the victim is fooled)", ""]
            rows = example_rows(records, kind="first_order", constraint=constraint, victim=victim, limit=limit)
            if not rows:
                lines += ["(none found)", ""]
                continue
            lines += ["| eps | similarity | swapped | label -> prediction | original | perturbed |",
                      "|---|---|---|---|---|---|"]
            for r in rows:
                lines.append(
                    f"| {r['epsilon']:.2f} | {r['similarity']:.3f} | {r['swapped']} | "
                    f"{label(r['label'])} -> {label(r['prediction'])} | {cell(r['original'])} | "
                    f"{cell(mark_changes(r['original'], r['perturbed']))} |"
                )
            lines.append("")
    return "\n".join(lines)
