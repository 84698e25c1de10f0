"""The calibration of judges' scores (textrobust.validity.calibration)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from textrobust.errors import ConfigError
from textrobust.validity.calibration import (
    Calibration,
    expected_calibration_error,
    format_table,
    reliability_table,
)


def _synthetic(n: int = 2000, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Scores whose true probability of validity is score**2 (over-confident raw scores)."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0, 1, n)
    labels = (rng.uniform(0, 1, n) < scores ** 2).astype(float)
    return scores, labels


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_fit_recovers_the_true_probabilities(method: str) -> None:
    scores, labels = _synthetic()
    cal = Calibration.fit(scores, labels, method=method, bootstrap=20)
    probe = np.array([0.2, 0.5, 0.8, 0.95])
    assert np.max(np.abs(cal.probability(probe) - probe ** 2)) < 0.12
    # calibrated probabilities have a small ECE on fresh data, the raw scores a large one
    fresh_scores, fresh_labels = _synthetic(seed=2)
    assert expected_calibration_error(cal.probability(fresh_scores), fresh_labels) < 0.04
    assert expected_calibration_error(fresh_scores, fresh_labels) > 0.1


def test_the_map_is_monotone_and_within_bounds() -> None:
    scores, labels = _synthetic(300)
    cal = Calibration.fit(scores, labels, bootstrap=10)
    x = np.linspace(-0.5, 1.5, 200)
    p = cal.probability(x)
    assert np.all(np.diff(p) >= -1e-12)
    assert p.min() >= 0 and p.max() <= 1
    draws = cal.draws(x)
    assert draws.shape == (10, 200)
    assert np.all(np.diff(draws, axis=1) >= -1e-12)


def test_draws_spread_shrinks_with_more_data() -> None:
    small = Calibration.fit(*_synthetic(100), bootstrap=50)
    large = Calibration.fit(*_synthetic(4000), bootstrap=50)
    at = [0.6]
    assert small.draws(at).std() > 2 * large.draws(at).std()


def test_round_trip_through_json() -> None:
    cal = Calibration.fit(*_synthetic(200), bootstrap=5, method="platt")
    back = Calibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    x = np.linspace(0, 1, 17)
    assert np.allclose(back.probability(x), cal.probability(x), atol=1e-4)
    assert np.allclose(back.draws(x), cal.draws(x), atol=1e-3)
    assert back.method == "platt" and back.n == 200 and back.bootstrap == 5


def test_identity_keeps_scores() -> None:
    cal = Calibration.identity(draws=3)
    x = np.array([0.0, 0.3, 1.0])
    assert np.allclose(cal.probability(x), x)
    assert cal.draws(x).shape == (3, 3) and np.allclose(cal.draws(x), x)
    assert cal.draws([]).shape == (3, 0)


def test_one_class_only_gives_its_rate() -> None:
    cal = Calibration.fit([0.1, 0.5, 0.9], [1, 1, 1], bootstrap=3)
    assert np.allclose(cal.probability([0.0, 1.0]), 1.0)


@pytest.mark.parametrize(("scores", "labels", "match"), [
    ([0.1, 0.2], [1], "one label per score"),
    ([0.1, 0.2], [1, 2], "0 \\(invalid\\) or 1"),
    ([0.1, float("nan")], [1, 0], "finite"),
    ([0.1], [1], "at least 2"),
])
def test_bad_calibration_data_is_refused(scores: list[float], labels: list[float], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Calibration.fit(scores, labels, bootstrap=2)


def test_unknown_method_and_bad_stored_tables() -> None:
    with pytest.raises(ConfigError, match="'isotonic' or 'platt'"):
        Calibration.fit([0.1, 0.9], [0, 1], method="beta")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="lacks the field 'draws'"):
        Calibration.from_dict({"grid": [0, 1], "values": [0, 1]})
    with pytest.raises(ConfigError, match="strictly increasing"):
        Calibration.from_dict({"grid": [1, 0], "values": [0, 1], "draws": [[0, 1]]})
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        Calibration.from_dict({"grid": [0, 1], "values": [0, 2], "draws": [[0, 1]]})
    with pytest.raises(ConfigError, match="B rows of 2"):
        Calibration.from_dict({"grid": [0, 1], "values": [0, 1], "draws": [[0, 1, 1]]})


def test_reliability_table_and_ece_by_hand() -> None:
    p = [0.05, 0.15, 0.15, 0.95, 1.0]
    y = [0, 0, 1, 1, 1]
    rows = reliability_table(p, y, bins=10)
    assert [(r.low, r.n) for r in rows] == [(0.0, 1), (0.1, 2), (0.9, 2)]
    assert rows[1].observed == 0.5 and math.isclose(rows[1].predicted, 0.15)
    # |0.05-0|*1/5 + |0.15-0.5|*2/5 + |0.975-1|*2/5
    assert math.isclose(expected_calibration_error(p, y, bins=10), 0.01 + 0.14 + 0.01)
    assert math.isnan(expected_calibration_error([], []))
    assert "| 0.1-0.2 | 2 | 0.150 | 0.500 |" in format_table(rows)
    with pytest.raises(ConfigError, match="at least one bin"):
        reliability_table(p, y, bins=0)
