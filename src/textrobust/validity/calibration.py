"""Calibration: from a judge's raw score to the probability that a substitution is valid.

A judge's score ranks substitutions; a figure needs probabilities: "of the findings given
0.7, seven in ten keep the meaning". :class:`Calibration` is a monotone map fitted on
held-apart human judgements (SWORDS, the labelled sets), either by isotonic regression
(pool-adjacent-violators; Zadrozny and Elkan 2002) or by Platt scaling (a logistic
regression on the score's logit; Platt 1999), both from scikit-learn. The map is stored as a
piecewise-linear table over a fixed grid of scores, so applying it needs numpy only.

**Calibration uncertainty.** The map is fitted on a few hundred or thousand judgements, so
it is itself uncertain. :meth:`Calibration.fit` refits it on ``bootstrap`` resamples of the
calibration pairs (Efron's nonparametric bootstrap) and keeps each refit on the same grid:
:meth:`Calibration.draws` gives, for any scores, one probability per resample. A figure that
sums probabilities (the expected valid success rate) recomputes itself under each draw to
carry this uncertainty into its interval.

:func:`expected_calibration_error` and :func:`reliability_table` measure a calibration on
held-out judgements (equal-width bins, as Guo et al. 2017).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from textrobust.errors import ConfigError

__all__ = ["Calibration", "ReliabilityRow", "expected_calibration_error", "format_table", "reliability_table"]

#: Scores are clipped to this range before a logit (Platt scaling).
_EPS = 1e-6


def _as_scores(raw: ArrayLike, what: str = "scores") -> np.ndarray:
    values = np.asarray(raw, dtype=float).reshape(-1)
    if values.size and not np.all(np.isfinite(values)):
        raise ConfigError(f"The {what} to calibrate must be finite numbers; got {values[~np.isfinite(values)][:3]}.")
    return values


def _labels(labels: ArrayLike, n: int) -> np.ndarray:
    values = np.asarray(labels, dtype=float).reshape(-1)
    if values.size != n:
        raise ConfigError(f"Calibration needs one label per score: got {n} scores and {values.size} labels.")
    if not np.all((values == 0) | (values == 1)):
        raise ConfigError("Calibration labels must be 0 (invalid) or 1 (valid).")
    return values


def _fit_once(scores: np.ndarray, labels: np.ndarray, method: str, grid: np.ndarray) -> np.ndarray:
    """One fitted map, evaluated on ``grid``."""
    if labels.min() == labels.max():  # one class only: the rate itself, everywhere
        return np.full(grid.shape, float(labels[0]))
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression  # type: ignore[import-untyped]

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(scores, labels)
        return np.asarray(iso.predict(grid), dtype=float)
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    def logit(x: np.ndarray) -> np.ndarray:
        x = np.clip(x, _EPS, 1 - _EPS)
        return np.log(x / (1 - x)).reshape(-1, 1)

    model = LogisticRegression(C=1e4)
    model.fit(logit(scores), labels)
    return np.asarray(model.predict_proba(logit(grid))[:, 1], dtype=float)


@dataclass(frozen=True, eq=False)
class Calibration:
    """A monotone map from raw scores in [0, 1] to probabilities, with bootstrap refits.

    ``grid`` holds increasing scores, ``values`` the fitted probability at each, ``draws``
    (B x len(grid)) the bootstrap refits; between grid points the map is linear, outside it
    constant. ``method`` and ``n`` (calibration pairs) say how it was made."""

    grid: np.ndarray
    values: np.ndarray
    draws_table: np.ndarray
    method: str = "isotonic"
    n: int = 0

    def __post_init__(self) -> None:
        grid = np.asarray(self.grid, dtype=float)
        values = np.asarray(self.values, dtype=float)
        draws = np.asarray(self.draws_table, dtype=float)
        if grid.ndim != 1 or grid.size < 1 or values.shape != grid.shape:
            raise ConfigError("A calibration needs a 1-D grid of scores and one value per grid point.")
        if grid.size > 1 and not np.all(np.diff(grid) > 0):
            raise ConfigError("A calibration's grid of scores must be strictly increasing.")
        if draws.ndim != 2 or draws.shape[1] != grid.size:
            raise ConfigError(f"A calibration's draws must be a table of B rows of {grid.size} values; "
                              f"got shape {draws.shape}.")
        for table in (values, draws):
            if table.size and (not np.all(np.isfinite(table)) or table.min() < 0 or table.max() > 1):
                raise ConfigError("A calibration's probabilities must lie in [0, 1].")
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "draws_table", draws)

    # ---- making one ------------------------------------------------------------------------
    @classmethod
    def fit(cls, scores: ArrayLike, labels: ArrayLike, *, method: Literal["isotonic", "platt"] = "isotonic",
            bootstrap: int = 200, seed: int = 0, grid_size: int = 101) -> Calibration:
        """Fit on ``scores`` (a judge's raw outputs) and 0/1 ``labels`` (people's verdicts),
        with ``bootstrap`` resampled refits for the uncertainty."""
        if method not in ("isotonic", "platt"):
            raise ConfigError(f"The 'method' of a calibration must be 'isotonic' or 'platt'. Got {method!r} instead.")
        if bootstrap < 1 or grid_size < 2:
            raise ConfigError("A calibration needs bootstrap >= 1 and grid_size >= 2.")
        x = _as_scores(scores)
        y = _labels(labels, x.size)
        if x.size < 2:
            raise ConfigError(f"A calibration needs at least 2 judged pairs; got {x.size}.")
        lo, hi = float(min(0.0, x.min())), float(max(1.0, x.max()))
        inner = np.quantile(x, np.linspace(0, 1, grid_size))
        grid = np.unique(np.concatenate([[lo, hi], inner, np.linspace(lo, hi, 11)]))
        values = _fit_once(x, y, method, grid)
        rng = np.random.default_rng(seed)
        draws = np.empty((bootstrap, grid.size))
        for b in range(bootstrap):
            pick = rng.integers(0, x.size, x.size)
            draws[b] = _fit_once(x[pick], y[pick], method, grid)
        return cls(grid, np.clip(values, 0, 1), np.clip(draws, 0, 1), method=method, n=int(x.size))

    @classmethod
    def identity(cls, draws: int = 1) -> Calibration:
        """The map that takes a score as its probability, with no uncertainty (``draws``
        identical rows): for judges whose scores are already probabilities, and tests."""
        grid = np.array([0.0, 1.0])
        return cls(grid, grid.copy(), np.tile(grid, (max(1, draws), 1)), method="identity", n=0)

    # ---- using one -------------------------------------------------------------------------
    def probability(self, raw: ArrayLike) -> np.ndarray:
        """The calibrated probability of each raw score."""
        return np.interp(_as_scores(raw), self.grid, self.values)

    def draws(self, raw: ArrayLike) -> np.ndarray:
        """(B, n): each raw score's probability under each bootstrap refit."""
        x = _as_scores(raw)
        return np.stack([np.interp(x, self.grid, row) for row in self.draws_table]) if x.size else \
            np.zeros((self.draws_table.shape[0], 0))

    @property
    def bootstrap(self) -> int:
        return int(self.draws_table.shape[0])

    # ---- storing one -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "n": self.n, "grid": [round(float(v), 6) for v in self.grid],
                "values": [round(float(v), 5) for v in self.values],
                "draws": [[round(float(v), 4) for v in row] for row in self.draws_table]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        try:
            return cls(np.asarray(data["grid"], dtype=float), np.asarray(data["values"], dtype=float),
                       np.asarray(data["draws"], dtype=float), method=str(data.get("method", "isotonic")),
                       n=int(data.get("n", 0)))
        except KeyError as exc:
            raise ConfigError(f"A stored calibration lacks the field {exc.args[0]!r} "
                              "(it needs 'grid', 'values' and 'draws').") from None
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"A stored calibration is malformed: {exc}.") from None

    def __repr__(self) -> str:
        return f"Calibration(method={self.method!r}, n={self.n}, grid={self.grid.size}, bootstrap={self.bootstrap})"


@dataclass(frozen=True)
class ReliabilityRow:
    """One bin of a reliability table: predictions in [low, high), how many, their mean, and
    the observed share valid."""

    low: float
    high: float
    n: int
    predicted: float
    observed: float


def reliability_table(probabilities: ArrayLike, labels: ArrayLike, bins: int = 10) -> list[ReliabilityRow]:
    """Equal-width bins over [0, 1] (the last closed), the non-empty ones."""
    if bins < 1:
        raise ConfigError(f"A reliability table needs at least one bin; got {bins}.")
    p = _as_scores(probabilities, "probabilities")
    y = _labels(labels, p.size)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ConfigError("Probabilities must lie in [0, 1].")
    index = np.minimum((p * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        mask = index == b
        if mask.any():
            rows.append(ReliabilityRow(b / bins, (b + 1) / bins, int(mask.sum()), float(p[mask].mean()),
                                       float(y[mask].mean())))
    return rows


def expected_calibration_error(probabilities: ArrayLike, labels: ArrayLike, bins: int = 10) -> float:
    """Sum over bins of (share of items in the bin) x |mean prediction - observed rate|;
    NaN with no items."""
    rows = reliability_table(probabilities, labels, bins)
    total = sum(r.n for r in rows)
    if not total:
        return math.nan
    return float(sum(r.n / total * abs(r.predicted - r.observed) for r in rows))


def format_table(rows: Sequence[ReliabilityRow]) -> str:
    """A Markdown reliability table."""
    lines = ["| predicted | n | mean predicted | observed valid |", "|---|---:|---:|---:|"]
    lines += [f"| {r.low:.1f}-{r.high:.1f} | {r.n} | {r.predicted:.3f} | {r.observed:.3f} |" for r in rows]
    return "\n".join(lines)
