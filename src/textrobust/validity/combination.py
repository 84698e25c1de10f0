"""How a finding's swaps combine into its probability of keeping the meaning, as measured on
readings of whole findings (issue 47, items 1 and 5).

A finding changes a few words; the judge gives each swap a calibrated probability that it
keeps the meaning (:mod:`textrobust.attack.candidates.swap_validity`). Multiplying them (the
swaps independent) assumes two things that readings of real attack findings contradict:

- the judge's calibration holds for the swaps an attack *selects*. It was fitted on
  candidates as a source proposes them (SWORDS, CoInCo); an attack keeps the swaps that move
  the victim, which are rich in changes of sentiment and strength. On 420 findings of the
  default attack, each read by two readers, findings whose swaps multiply to 0.5-0.6 were read
  valid 18% of the time (``benchmarks/results/validity.md``, "Attack findings read by
  people-like readers");
- the swaps of a finding fail independently. Several swaps together break a sentence more
  often than one at a time.

:class:`MeasuredCombination` replaces the product by a monotone map of it, fitted on those
readings: Platt scaling (a logistic regression on the product's logit; Platt 1999) with
:class:`~textrobust.validity.calibration.Calibration`, and its bootstrap refits for the map's
own uncertainty. The map is monotone, so it never reorders findings: it changes what a
probability means (the share of such findings that careful readers accept), not which
finding is the most probably valid. It belongs to the judge it was fitted with (``judge``:
the first 12 hex digits of the judge file's sha1); ``benchmarks/validity/findings_readings.py
combine --ship`` refits it on the readings and writes the shipped one
(``resources/findings/combination.json``); its out-of-fold calibration error is measured by
the same command on sentences the fit did not see.

Departure: the papers (TextFooler, PWWS, ...) score no probability at all; this is ours.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from textrobust.errors import ConfigError
from textrobust.validity.calibration import Calibration

__all__ = ["MeasuredCombination", "default_combination_path", "file_sha", "load_combination"]


def default_combination_path() -> Path:
    """The shipped combination, fitted on the third labelled set (attack findings)."""
    return Path(__file__).resolve().parents[1] / "resources" / "findings" / "combination.json"


def file_sha(path: str | Path) -> str:
    """The first 12 hex digits of a file's sha1 (how a combination names its judge)."""
    return hashlib.sha1(Path(path).read_bytes()).hexdigest()[:12]


@dataclass(frozen=True, eq=False)
class MeasuredCombination:
    """The probability that a finding keeps the meaning, as a monotone map (``calibration``)
    of the product of its swaps' probabilities; ``judge`` names the judge whose swap
    probabilities it was fitted on, ``record`` says on what (items, valid, readers)."""

    calibration: Calibration
    judge: str
    record: Mapping[str, Any] = field(default_factory=dict)

    name = "measured"

    def __call__(self, probabilities: ArrayLike) -> np.ndarray:
        """(..., k) swap probabilities -> (...) finding probabilities (the fitted map)."""
        product = np.prod(np.asarray(probabilities, dtype=float), axis=-1)
        return np.asarray(self.calibration.probability(product), dtype=float).reshape(product.shape)

    def per_draw(self, draws: ArrayLike) -> np.ndarray:
        """(B, k) swap probabilities, one row per calibration draw -> (B,): row b through the
        map's bootstrap refit b (cycled when B exceeds the refits), so a figure's interval
        carries the map's uncertainty beside the judge's."""
        table = np.asarray(draws, dtype=float)
        if table.ndim != 2:
            raise ConfigError(f"per_draw needs a (draws x swaps) table; got shape {table.shape}.")
        product = np.prod(table, axis=-1)
        refits = self.calibration.draws_table
        grid = self.calibration.grid
        return np.asarray([np.interp(p, grid, refits[b % refits.shape[0]]) for b, p in enumerate(product)],
                          dtype=float)

    # ---- making and storing one --------------------------------------------------------------
    @classmethod
    def fit(cls, products: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray, *, judge: str,
            bootstrap: int = 200, seed: int = 0, record: Mapping[str, Any] | None = None) -> MeasuredCombination:
        """Fit the map on findings' products of swap probabilities and readers' 0/1 labels."""
        calibration = Calibration.fit(products, labels, method="platt", bootstrap=bootstrap, seed=seed)
        return cls(calibration, str(judge), dict(record or {}))

    def to_dict(self) -> dict[str, Any]:
        return {"format": "textrobust.combination/1", "judge": self.judge, "record": dict(self.record),
                "calibration": self.calibration.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "a stored combination") -> MeasuredCombination:
        if not isinstance(data, Mapping) or data.get("format") != "textrobust.combination/1":
            raise ConfigError(f"{where} is not a textrobust combination (its 'format' must be "
                              "'textrobust.combination/1'); refit it with benchmarks/validity/findings_readings.py "
                              "combine --ship.")
        if "calibration" not in data or "judge" not in data:
            raise ConfigError(f"{where} lacks its 'calibration' or its 'judge'.")
        record = data.get("record") or {}
        if not isinstance(record, Mapping):
            raise ConfigError(f"{where}: 'record' must be a table.")
        return cls(Calibration.from_dict(data["calibration"]), str(data["judge"]), dict(record))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict()) + "\n")

    def __repr__(self) -> str:
        return f"MeasuredCombination(judge={self.judge!r}, {self.calibration!r})"


def load_combination(path: str | Path | None = None) -> MeasuredCombination:
    """The combination stored at ``path`` (default: the shipped one)."""
    where = Path(path) if path is not None else default_combination_path()
    try:
        data = json.loads(where.read_text())
    except FileNotFoundError:
        raise ConfigError(f"No combination at {where}; fit one with benchmarks/validity/findings_readings.py "
                          "combine --ship.") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"The combination at {where} cannot be read: {exc}.") from None
    return MeasuredCombination.from_dict(data, where=str(where))
