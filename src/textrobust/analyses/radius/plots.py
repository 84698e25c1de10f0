"""Figures of the radius analysis (matplotlib with the Agg backend, written to files).

Yang et al. (2022), "Quantifying Robustness to Adversarial Word Substitutions"
(../shared/papers/robustness-radius-pdp-prover-pr.txt): Figure 3 (substitutions of PDP
against another method, one point per text), Figure 4 (share of ``Omega_r`` that does not
yield to each method, per radius; here with the prover's certified share added as a lower
bound) and Figure 5 (violin plots of PR_hat over a data set).

matplotlib is imported inside each function, never at import time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textrobust.errors import ConfigError

if TYPE_CHECKING:
    from textrobust.analyses.radius.method import RadiusResult, YieldCurves

__all__ = ["pr_violin", "substitution_scatter", "yield_plot"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def pr_violin(values: Mapping[str, Sequence[float]], path: str | Path, *, title: str = "PR_hat") -> Path:
    """Figure 5: one violin of PR_hat per entry of ``values`` (e.g. per victim), with
    the extremes marked."""
    groups = {k: list(v) for k, v in values.items() if len(v) > 0}
    if not groups:
        raise ConfigError("pr_violin needs at least one non-empty group of PR values.")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(groups), 3.6))
    parts = ax.violinplot(list(groups.values()), showextrema=True, showmedians=True)
    for body in parts["bodies"]:
        body.set_alpha(0.6)
    ax.set_xticks(range(1, len(groups) + 1), list(groups))
    ax.set_ylabel("PR_hat")
    ax.set_ylim(-0.02, 1.02)
    ax.axhline(0.9, color="grey", linestyle=":", linewidth=1)
    ax.set_title(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def yield_plot(curves: YieldCurves, path: str | Path, *, title: str = "") -> Path:
    """Figure 4: for each method, the percentage of examples whose ``Omega_r`` did not
    yield to it, against ``r`` (see :func:`~textrobust.analyses.radius.method.yield_curves`); the
    prover's certified share is drawn dashed."""
    if not curves.radii:
        raise ConfigError("yield_plot needs curves over at least one radius (see yield_curves).")
    plt = _pyplot()
    radii = list(curves.radii)
    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    for name, values in curves.methods.items():
        ax.plot(radii, list(values), label=name, marker="o", markersize=3)
    if curves.certified is not None:
        ax.plot(radii, list(curves.certified), label="certified (prover)", linestyle="--", color="black")
    ax.set_xlabel("radius r (words substituted)")
    ax.set_ylabel("% of regions not yielding")
    ax.set_ylim(-2, 102)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def substitution_scatter(
    results: Sequence[RadiusResult], path: str | Path, *, others: Sequence[str] = ("greedy", "pso"),
    title: str = "",
) -> Path:
    """Figure 3: substitutions of PDP (x) against each other method (y), one point per
    text where both succeeded; points above the diagonal are texts where PDP needed
    fewer words."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.2, 4.0))
    top = 1
    for other in others:
        xs: list[int] = []
        ys: list[int] = []
        for r in results:
            x, y = r.success_l0("pdp"), r.success_l0(other)
            if r.succeeded("pdp") and r.succeeded(other) and x is not None and y is not None:
                xs.append(x)
                ys.append(y)
        if xs:
            top = max(top, *xs, *ys)
            ax.scatter(xs, ys, s=12, alpha=0.5, label=other)
    ax.plot([0, top], [0, top], color="grey", linewidth=1)
    ax.set_xlabel("#S of PDP")
    ax.set_ylabel("#S of the other method")
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
