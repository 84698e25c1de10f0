"""Small, deterministic SVG charts for report sections (matplotlib, Agg backend).

Every function returns a complete SVG document as text; the report embeds it as an image
(``data:image/svg+xml``), never as inline markup, so text inside a chart (user words) can
never run as script. The same inputs give byte-identical SVG (fixed hash salt, no date).

>>> svg = bar_chart(["a", "b"], [1, 2], title="t", xlabel="x", ylabel="y")   # doctest: +SKIP
>>> svg.startswith("<?xml")                                                   # doctest: +SKIP
True
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["bar_chart", "line_chart", "stacked_bar_chart", "svg_of", "violin_chart"]

_SIZE = (6.0, 3.2)
_COLOURS = ("#3b6ea8", "#d9822b", "#4a9a5b", "#b84a4a", "#7a5ea8", "#8c7a4a")


def _figure() -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "textrobust"
    fig, ax = plt.subplots(figsize=_SIZE, dpi=100)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(axis="y", alpha=0.3)
    return fig, ax


def svg_of(fig: Any) -> str:
    """The figure as SVG text; the figure is closed."""
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.tight_layout()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue()


def _labels(ax: Any, title: str, xlabel: str, ylabel: str, percent: bool) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    if percent:
        from matplotlib.ticker import PercentFormatter

        ax.yaxis.set_major_formatter(PercentFormatter(1.0))


def bar_chart(labels: Sequence[str], values: Sequence[float], *, title: str, xlabel: str = "", ylabel: str = "",
              percent: bool = False) -> str:
    """Vertical bars, one per label."""
    fig, ax = _figure()
    ax.bar(range(len(values)), [float(v) for v in values], color=_COLOURS[0])
    ax.set_xticks(range(len(labels)), [str(label) for label in labels], fontsize=8,
                  rotation=30 if max((len(str(x)) for x in labels), default=0) > 8 else 0)
    _labels(ax, title, xlabel, ylabel, percent)
    return svg_of(fig)


def stacked_bar_chart(labels: Sequence[str], stacks: Mapping[str, Sequence[float]], *, title: str,
                      ylabel: str = "", percent: bool = False) -> str:
    """Bars stacked by series (e.g. certified / unknown / falsified per radius)."""
    fig, ax = _figure()
    bottom = [0.0] * len(labels)
    for i, (name, values) in enumerate(stacks.items()):
        heights = [float(v) for v in values]
        ax.bar(range(len(labels)), heights, bottom=bottom, label=name, color=_COLOURS[i % len(_COLOURS)])
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(range(len(labels)), [str(label) for label in labels], fontsize=8)
    ax.legend(fontsize=8, frameon=False)
    _labels(ax, title, "", ylabel, percent)
    return svg_of(fig)


def line_chart(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, title: str, xlabel: str = "",
               ylabel: str = "", percent: bool = False) -> str:
    """One line per series: name -> (xs, ys)."""
    fig, ax = _figure()
    for i, (name, (xs, ys)) in enumerate(series.items()):
        ax.plot(list(xs), [float(y) for y in ys], marker="o", markersize=3, label=name,
                color=_COLOURS[i % len(_COLOURS)])
    if len(series) > 1:
        ax.legend(fontsize=8, frameon=False)
    _labels(ax, title, xlabel, ylabel, percent)
    return svg_of(fig)


def violin_chart(groups: Mapping[str, Sequence[float]], *, title: str, ylabel: str = "",
                 percent: bool = False) -> str:
    """A violin per group (groups with fewer than two values are drawn as points)."""
    fig, ax = _figure()
    names = list(groups)
    for i, name in enumerate(names):
        values = [float(v) for v in groups[name]]
        if len(set(values)) >= 2:
            parts = ax.violinplot([values], positions=[i], showmedians=True)
            for body in parts["bodies"]:
                body.set_facecolor(_COLOURS[0])
                body.set_alpha(0.5)
        elif values:
            ax.scatter([i] * len(values), values, color=_COLOURS[0], s=12)
    ax.set_xticks(range(len(names)), names, fontsize=8)
    _labels(ax, title, "", ylabel, percent)
    return svg_of(fig)
