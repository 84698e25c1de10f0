"""Small, deterministic SVG charts for report sections (matplotlib, Agg canvas).

Every builder returns a complete SVG document as text, ready for the ``svg`` key of a
report figure. The page embeds it as an image (``data:image/svg+xml``), never as inline
markup, so words inside a chart can never run as script. The same inputs give
byte-identical SVG: a fixed ``svg.hashsalt`` and no date in the metadata.

Figures are built with :class:`matplotlib.figure.Figure` on an Agg canvas, not through
pyplot, so no global backend is switched and no figure is left open; text is drawn as
paths (no font is needed to view the SVG) and ``$`` in labels is literal, never mathtext.
matplotlib is imported inside each function, never at import time.

>>> svg = bar_chart(["a", "b"], [0.25, 0.5], title="Share", percent=True)  # doctest: +SKIP
>>> svg.startswith("<?xml")                                                # doctest: +SKIP
True
"""

from __future__ import annotations

import io
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from textrobust.errors import ConfigError

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = ["EMPTY_SVG", "bar_chart", "line_chart", "stacked_bar_chart", "svg_of", "violin_chart", "without_drawing"]

#: What a chart is inside :func:`without_drawing`: a complete, empty SVG document.
EMPTY_SVG = '<?xml version="1.0" encoding="utf-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"/>\n'
_DRAWING: ContextVar[bool] = ContextVar("textrobust_drawing", default=True)


@contextmanager
def without_drawing() -> Iterator[None]:
    """Inside this block every chart is :data:`EMPTY_SVG`, not drawn: for callers that
    need a section's figures and tables but not its charts (``textrobust compare`` reads
    the headline figures of every run; drawing them is most of its time)."""
    token = _DRAWING.set(False)
    try:
        yield
    finally:
        _DRAWING.reset(token)

#: Inches; the page shows figures two to a row at 1100 px.
SIZE = (6.0, 3.2)
HASH_SALT = "textrobust"
COLOURS = ("#3b6ea8", "#d9822b", "#4a9a5b", "#b84a4a", "#7a5ea8", "#8c7a4a", "#4a8c8c", "#a84a86")

_STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": HASH_SALT,
    "svg.fonttype": "path",
    "text.parse_math": False,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#666666",
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
}


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        yield


def _figure() -> tuple[Any, Any]:
    """A figure on an Agg canvas with one axes (call inside ``_style()``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=SIZE, dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def svg_of(fig: Any) -> str:
    """``fig`` as a complete SVG document; the figure is closed (if pyplot holds it).

    Deterministic: the SVG hash salt is fixed and the metadata carries no date. Inside
    :func:`without_drawing`, :data:`EMPTY_SVG` (the figure is not drawn).
    """
    import matplotlib

    if not _DRAWING.get():
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close(fig)
        return EMPTY_SVG
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": HASH_SALT}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # only a figure made with pyplot is held open by it
        pyplot.close(fig)
    return buffer.getvalue()


def _floats(values: Sequence[float | None], name: str) -> list[float]:
    """``values`` as floats, None and non-finite values as NaN (a gap in the chart)."""
    out = []
    for value in values:
        if value is None:
            out.append(math.nan)
            continue
        try:
            out.append(float(value))
        except (TypeError, ValueError):
            raise ConfigError(f"The chart values '{name}' must be numbers. Got {value!r} instead.") from None
    return out


def _same_length(labels: Sequence[Any], values: Sequence[Any], name: str) -> None:
    if len(labels) != len(values):
        raise ConfigError(f"The chart has {len(labels)} labels but '{name}' has {len(values)} values; "
                          "give one value per label.")


def _finish(ax: Any, title: str, xlabel: str, ylabel: str, percent: bool) -> None:
    ax.set_title(title, loc="left")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if percent:
        from matplotlib.ticker import PercentFormatter

        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))


def _no_data(ax: Any) -> None:
    ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="#888888")
    ax.set_xticks([])
    ax.set_yticks([])


def _categories(ax: Any, labels: Sequence[Any]) -> None:
    names = [str(label) for label in labels]
    long = max((len(n) for n in names), default=0) > 10 or len(names) > 8
    ax.set_xticks(range(len(names)), names, rotation=30 if long else 0, ha="right" if long else "center")
    ax.grid(False, axis="x")


def bar_chart(labels: Sequence[Any], values: Sequence[float | None], *, title: str, xlabel: str = "",
              ylabel: str = "", percent: bool = False) -> str:
    """Vertical bars, one per label, each with its value written above it (up to 12
    bars). With ``percent`` the values are fractions, shown as percentages."""
    _same_length(labels, values, "values")
    heights = _floats(values, "values")
    with _style():
        fig, ax = _figure()
        if not labels:
            _no_data(ax)
        else:
            bars = ax.bar(range(len(heights)), heights, color=COLOURS[0], width=0.65)
            if len(heights) <= 12:
                shown = [("n/a" if math.isnan(h) else f"{h:.1%}" if percent else f"{h:,.3g}") for h in heights]
                ax.bar_label(bars, labels=shown, padding=2, fontsize=8, color="#333333")
                ax.margins(y=0.12)
            _categories(ax, labels)
        _finish(ax, title, xlabel, ylabel, percent)
        return svg_of(fig)


def stacked_bar_chart(labels: Sequence[Any], stacks: Mapping[str, Sequence[float | None]], *, title: str,
                      ylabel: str = "", percent: bool = False) -> str:
    """Bars stacked by series, one bar per label (e.g. certified / unknown / falsified
    per radius); ``stacks`` maps a series name to one value per label."""
    for name, values in stacks.items():
        _same_length(labels, values, str(name))
    with _style():
        fig, ax = _figure()
        if not labels or not stacks:
            _no_data(ax)
        else:
            bottom = [0.0] * len(labels)
            for i, (name, values) in enumerate(stacks.items()):
                heights = [0.0 if math.isnan(h) else h for h in _floats(values, str(name))]
                ax.bar(range(len(labels)), heights, bottom=bottom, label=str(name), width=0.65,
                       color=COLOURS[i % len(COLOURS)])
                bottom = [b + h for b, h in zip(bottom, heights)]
            _categories(ax, labels)
            fig.legend(loc="outside right upper")
        _finish(ax, title, "", ylabel, percent)
        return svg_of(fig)


def line_chart(series: Mapping[str, tuple[Sequence[float], Sequence[float | None]]], *, title: str,
               xlabel: str = "", ylabel: str = "", percent: bool = False, steps: bool = False) -> str:
    """One line per series, ``name -> (xs, ys)``; a legend when there are several.
    ``steps``: each value holds until the next x (a step function, e.g. of a count), and
    whole-number xs get whole-number ticks."""
    with _style():
        fig, ax = _figure()
        drawn = 0
        for i, (name, (xs, ys)) in enumerate(series.items()):
            _same_length(xs, ys, str(name))
            if len(xs) == 0:
                continue
            ax.plot(_floats(xs, str(name)), _floats(ys, str(name)), marker="o", markersize=3, linewidth=1.5,
                    label=str(name), color=COLOURS[i % len(COLOURS)], drawstyle="steps-post" if steps else "default")
            drawn += 1
        if steps:
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if drawn == 0:
            _no_data(ax)
        elif len(series) > 1:
            fig.legend(loc="outside right upper")
        _finish(ax, title, xlabel, ylabel, percent)
        return svg_of(fig)


def violin_chart(groups: Mapping[str, Sequence[float | None]], *, title: str, ylabel: str = "",
                 percent: bool = False) -> str:
    """A violin (with its median) per group; a group with fewer than two distinct values
    is drawn as points, as a density of one value means nothing. Missing values are left
    out."""
    with _style():
        fig, ax = _figure()
        names = list(groups)
        for i, name in enumerate(names):
            values = [v for v in _floats(groups[name], str(name)) if not math.isnan(v)]
            colour = COLOURS[i % len(COLOURS)]
            if len(set(values)) >= 2:
                parts = ax.violinplot([values], positions=[i], showmedians=True, widths=0.7)
                for body in parts["bodies"]:
                    body.set_facecolor(colour)
                    body.set_edgecolor(colour)
                    body.set_alpha(0.45)
                for key in ("cbars", "cmins", "cmaxes", "cmedians"):
                    parts[key].set_color(colour)
            elif values:
                ax.scatter([i] * len(values), values, color=colour, s=16, zorder=3)
        if names:
            _categories(ax, names)
            ax.set_xlim(-0.6, len(names) - 0.4)
        else:
            _no_data(ax)
        _finish(ax, title, "", ylabel, percent)
        return svg_of(fig)
