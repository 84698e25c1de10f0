"""Counterfactual-bias tables and figures from the anchor records of a run.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 4.2: per pair ``p``, ``B_{p,k}`` for
k = 0..3 on ``X_test`` and on ``X_filter``, the counts of Table 5 (original sentences at
k = 0 and perturbed sentences at the largest k, in ``X_filter``), the histograms of
``F_soft`` (Figure 6, left and middle) and ``B`` against k (Figure 5 and Figure 6, right).

Everything here is a pure function of the typed anchor records
(:class:`~textrobust.analyses.bias.counterfactual.AnchorMeasure`), except :func:`write_bias_report`
which writes JSON, Markdown and PNG/SVG files (matplotlib, imported there; the ``bias``
analysis puts the same tables and figures in the audit report instead).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from textrobust.analyses.bias.counterfactual import AnchorMeasure, PairMeasure

__all__ = ["SUBSETS", "PairRow", "bias_table", "markdown_table", "pair_histogram", "write_bias_report"]

#: The two test sets B is reported on.
SUBSETS = ("test", "filter")


@dataclass(frozen=True)
class PairRow:
    """One pair: per subset ("test" = X_test, "filter" = X_filter) and k, the number of
    test sentences (``originals``), of neighbour sentences (``texts``), ``B`` and the
    standard deviation of F_soft."""

    pair: str
    group: str
    originals: dict[str, int]
    texts: dict[str, dict[int, int]] = field(default_factory=dict)
    b: dict[str, dict[int, float]] = field(default_factory=dict)
    std: dict[str, dict[int, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pair": self.pair,
            "group": self.group,
            "originals": dict(self.originals),
            "texts": {s: {str(k): v for k, v in d.items()} for s, d in self.texts.items()},
            "B": {s: {str(k): _json_float(v) for k, v in d.items()} for s, d in self.b.items()},
            "std": {s: {str(k): _json_float(v) for k, v in d.items()} for s, d in self.std.items()},
        }

    def table5(self, max_k: int) -> tuple[int, int]:
        """(# original at k = 0, # perturbed at k = max_k) in X_filter (Table 5)."""
        return self.originals.get("filter", 0), self.texts.get("filter", {}).get(max_k, 0)


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _partners(records: Iterable[AnchorMeasure]) -> Iterable[tuple[AnchorMeasure, PairMeasure]]:
    for record in records:
        for partner in record.partners:
            yield record, partner


def bias_table(records: Sequence[AnchorMeasure], *, max_k: int) -> list[PairRow]:
    """B_{p,k} per pair, k = 0..max_k, on X_test and X_filter; pairs sorted by group, then
    by how many test sentences they have (most first)."""
    acc: dict[str, dict[str, Any]] = {}
    for _, partner in _partners(records):
        entry = acc.setdefault(partner.pair, {"group": partner.group, "originals": dict.fromkeys(SUBSETS, 0),
                                              "n": {}, "sum": {}, "sumsq": {}})
        subsets = ("test", "filter") if partner.in_filter else ("test",)
        for subset in subsets:
            entry["originals"][subset] += 1
            for k, stats in enumerate(partner.by_k):
                if k > max_k:
                    continue
                key = (subset, k)
                entry["n"][key] = entry["n"].get(key, 0) + stats.count
                entry["sum"][key] = entry["sum"].get(key, 0.0) + stats.total
                entry["sumsq"][key] = entry["sumsq"].get(key, 0.0) + stats.total_squares
    rows = []
    for pair, entry in acc.items():
        texts: dict[str, dict[int, int]] = {s: {} for s in SUBSETS}
        b: dict[str, dict[int, float]] = {s: {} for s in SUBSETS}
        std: dict[str, dict[int, float]] = {s: {} for s in SUBSETS}
        for subset in SUBSETS:
            for k in range(max_k + 1):
                n = entry["n"].get((subset, k), 0)
                texts[subset][k] = n
                if n:
                    mean = entry["sum"][(subset, k)] / n
                    var = max(entry["sumsq"][(subset, k)] / n - mean * mean, 0.0)
                    b[subset][k], std[subset][k] = mean, math.sqrt(var)
                else:
                    b[subset][k] = std[subset][k] = float("nan")
        rows.append(PairRow(pair, entry["group"], entry["originals"], texts, b, std))
    rows.sort(key=lambda r: (r.group, -r.originals["test"], r.pair))
    return rows


def pair_histogram(
    records: Sequence[AnchorMeasure], pair: str, k: int, *, subset: str = "filter", bins: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(edges, counts) of F_soft for ``pair`` at distance ``k`` on ``subset``, on the fixed
    bins the records were made with (``bins`` only for records that do not say)."""
    from textrobust.analyses.bias.counterfactual import BINS, histogram_edges
    from textrobust.errors import ConfigError

    sizes = {int(r.bins or bins or BINS) for r in records}
    if len(sizes) > 1:
        raise ConfigError(f"The records were made with different histogram bins {sorted(sizes)}; measure them alike.")
    n_bins = sizes.pop() if sizes else int(bins or BINS)
    counts = np.zeros(n_bins, dtype=np.int64)
    for _, partner in _partners(records):
        if partner.pair != pair or (subset == "filter" and not partner.in_filter) or k >= len(partner.by_k):
            continue
        for index, count in partner.by_k[k].histogram:
            counts[index] += count
    return histogram_edges(n_bins), counts


def _fmt(value: float, digits: int = 4) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:+.{digits}f}"


def markdown_table(rows: Sequence[PairRow], *, max_k: int, subset: str = "filter") -> str:
    """A Markdown table: pair, # original, # perturbed (Table 5), B for each k."""
    ks = list(range(max_k + 1))
    head = ["pair", f"# original ({subset})", f"# perturbed k={max_k}"] + [f"B k={k}" for k in ks]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row.pair, str(row.originals.get(subset, 0)), str(row.texts.get(subset, {}).get(max_k, 0))]
        cells += [_fmt(row.b.get(subset, {}).get(k, float("nan"))) for k in ks]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_bias_report(
    records: Sequence[AnchorMeasure],
    out: Path,
    *,
    max_k: int,
    bins: int | None = None,
    title: str = "counterfactual token bias",
    max_pairs: int = 12,
    formats: Sequence[str] = ("png", "svg"),
) -> dict[str, str]:
    """Write ``bias.json``, ``bias.md``, ``bias_vs_k.<fmt>`` (B against k per pair, X_filter
    and X_test) and ``histograms.<fmt>`` (F_soft at k = 0 and k = max_k, X_filter) into
    ``out``; return the paths written by name. Figures show the ``max_pairs`` pairs with
    the most test sentences."""
    out.mkdir(parents=True, exist_ok=True)
    rows = bias_table(records, max_k=max_k)
    paths: dict[str, str] = {}
    payload = {"title": title, "max_k": max_k, "rows": [r.to_dict() for r in rows]}
    (out / "bias.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    paths["json"] = str(out / "bias.json")
    md = [f"# {title}", "", "## X_filter (|F_soft(x0)| < eps)", "", markdown_table(rows, max_k=max_k),
          "", "## X_test", "", markdown_table(rows, max_k=max_k, subset="test"), ""]
    (out / "bias.md").write_text("\n".join(md))
    paths["markdown"] = str(out / "bias.md")
    if not rows:
        return paths
    shown = sorted(rows, key=lambda r: -r.originals["test"])[:max_pairs]
    paths.update(_plot_b_vs_k(shown, out, max_k, title, formats))
    paths.update(_plot_histograms(records, shown, out, max_k, bins, formats))
    return paths


def _plot_b_vs_k(rows: Sequence[PairRow], out: Path, max_k: int, title: str, formats: Sequence[str]) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ks = list(range(max_k + 1))
    colours = plt.get_cmap("tab20")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, subset, name in zip(axes, ("filter", "test"), ("X_filter", "X_test")):
        for i, row in enumerate(rows):
            values = [row.b[subset].get(k, float("nan")) for k in ks]
            if all(math.isnan(v) for v in values):
                continue
            ax.plot(ks, values, marker="o", color=colours(i % 20), label=f"{row.pair} ({row.originals[subset]})")
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xticks(ks)
        ax.set_xlabel("neighbourhood distance k")
        ax.set_title(f"{name} (test sentences per pair in brackets)", fontsize=9)
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    axes[0].set_ylabel("B_{p,k} = mean F_soft")
    fig.suptitle(title)
    fig.tight_layout()
    written = {}
    for fmt in formats:
        path = out / f"bias_vs_k.{fmt}"
        fig.savefig(path)
        written[f"bias_vs_k_{fmt}"] = str(path)
    plt.close(fig)
    return written


def _plot_histograms(
    records: Sequence[AnchorMeasure], rows: Sequence[PairRow], out: Path, max_k: int, bins: int | None,
    formats: Sequence[str],
) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    cols = min(3, len(rows))
    lines = math.ceil(len(rows) / cols)
    fig, axes = plt.subplots(lines, cols, figsize=(4.2 * cols, 3.0 * lines), squeeze=False)
    for ax, row in zip(axes.flat, rows):
        for k, colour in ((0, "tab:blue"), (max_k, "tab:orange")):
            edges, counts = pair_histogram(records, row.pair, k, subset="filter", bins=bins)
            if counts.sum() == 0:
                edges, counts = pair_histogram(records, row.pair, k, subset="test", bins=bins)
            if counts.sum() == 0:
                continue
            used = np.flatnonzero(counts)
            lo, hi = max(used[0] - 2, 0), min(used[-1] + 3, len(counts))
            density = counts[lo:hi] / counts.sum()
            ax.stairs(density, edges[lo : hi + 1], color=colour, label=f"k={k}", fill=k == max_k, alpha=0.6)
        ax.axvline(0.0, color="grey", linewidth=0.8)
        ax.set_title(row.pair, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(rows):]:
        ax.axis("off")
    fig.suptitle("F_soft(x; p) histograms (X_filter; X_test where X_filter is empty)")
    fig.tight_layout()
    written = {}
    for fmt in formats:
        path = out / f"histograms.{fmt}"
        fig.savefig(path)
        written[f"histograms_{fmt}"] = str(path)
    plt.close(fig)
    return written
