"""Issue 47: how a finding's swaps combine, measured on readings of whole findings
(textrobust.validity.combination), and the shipped combination's agreement with its judge."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from textrobust.attack.candidates.swap_validity import (
    FindingValidity,
    combination_name,
    combination_of,
    finding_validity,
    independent,
)
from textrobust.errors import ConfigError
from textrobust.report.reviewed import _valid_line
from textrobust.text import Text
from textrobust.validity.calibration import Calibration
from textrobust.validity.combination import (
    MeasuredCombination,
    default_combination_path,
    file_sha,
    load_combination,
)
from textrobust.validity.people_judge import default_people_judge_path
from tests.test_expected_validity import StubJudged


def _readings(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Products of swap probabilities, and readings that accept a finding with probability
    product**2 (readers stricter than the product says)."""
    rng = np.random.default_rng(seed)
    products = rng.uniform(0, 1, n)
    return products, (rng.uniform(0, 1, n) < products ** 2).astype(int)


def test_a_fitted_combination_is_monotone_and_follows_the_readings() -> None:
    products, labels = _readings()
    measured = MeasuredCombination.fit(products, labels, judge="abc", bootstrap=20)
    grid = np.linspace(0, 1, 21)
    mapped = measured.calibration.probability(grid)
    assert np.all(np.diff(mapped) >= -1e-12)
    # the readings accept product**2 of the time: at 0.5 about 0.25, well below the product
    assert 0.12 < float(measured.calibration.probability([0.5])[0]) < 0.38
    # __call__ multiplies the swaps first, then maps; any leading shape
    swaps = np.array([[0.5, 0.8], [1.0, 0.9]])
    assert measured(swaps).shape == (2,)
    assert measured(swaps) == pytest.approx(measured.calibration.probability(independent(swaps)))
    assert measured.name == "measured" and combination_name(measured) == "measured"
    assert combination_name(independent) == "independent"


def test_each_draw_goes_through_its_own_refit() -> None:
    grid = np.array([0.0, 1.0])
    calibration = Calibration(grid, np.array([0.0, 0.5]), np.array([[0.0, 0.2], [0.0, 0.4], [0.0, 0.6]]),
                              method="platt")
    measured = MeasuredCombination(calibration, judge="abc")
    draws = np.array([[1.0, 1.0], [1.0, 0.5], [1.0, 1.0], [0.5, 0.5]])  # 4 rows: the 4th cycles to refit 0
    assert measured.per_draw(draws) == pytest.approx([0.2, 0.4 * 0.5, 0.6, 0.2 * 0.25])
    with pytest.raises(ConfigError, match="draws x swaps"):
        measured.per_draw(np.array([0.5, 0.5]))


def test_a_combination_round_trips_and_a_bad_file_says_what_is_wrong(tmp_path: Path) -> None:
    products, labels = _readings(100)
    measured = MeasuredCombination.fit(products, labels, judge="abc123", bootstrap=5, record={"items": 100})
    path = tmp_path / "combination.json"
    measured.save(path)
    back = load_combination(path)
    assert back.judge == "abc123" and back.record == {"items": 100}
    assert back(np.array([0.3, 0.9])) == pytest.approx(measured(np.array([0.3, 0.9])), abs=1e-4)
    path.write_text(json.dumps({"judge": "x"}))
    with pytest.raises(ConfigError, match="not a textrobust combination"):
        load_combination(path)
    path.write_text(json.dumps({"format": "textrobust.combination/1", "judge": "x"}))
    with pytest.raises(ConfigError, match="lacks its 'calibration'"):
        load_combination(path)
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot be read"):
        load_combination(path)
    with pytest.raises(ConfigError, match="No combination at"):
        load_combination(tmp_path / "absent.json")


def test_a_finding_uses_its_sources_combination_and_says_so() -> None:
    text = Text.from_string("a good and great film")
    changed = text.replace({1: "fine", 3: "nice"})
    plain = StubJudged({}, {"fine": 1.0, "nice": 0.5})
    before = finding_validity(plain, text, changed)
    assert combination_of(plain) is independent
    assert before.probability == pytest.approx(0.5) and before.combined == "independent"

    grid = np.array([0.0, 1.0])
    measured = MeasuredCombination(Calibration(grid, np.array([0.0, 0.4]), np.array([[0.0, 0.2], [0.0, 0.6]]),
                                               method="platt"), judge="abc")
    judged = StubJudged({}, {"fine": 1.0, "nice": 0.5})
    judged.combination = measured  # type: ignore[attr-defined]
    after = finding_validity(judged, text, changed)
    assert combination_of(judged) is measured
    assert after.probability == pytest.approx(0.4 * 0.5)  # the map of the product 0.5
    # the stub's identity calibration has one draw: its product 0.5 through refit 0
    assert after.draws == pytest.approx((0.2 * 0.5,))
    assert after.combined == "measured"
    # an explicit combine wins over the source's
    assert finding_validity(judged, text, changed, combine=independent).probability == pytest.approx(0.5)
    # stored and read back; a record from before the field says independent
    assert FindingValidity.from_dict(after.to_dict()) == after
    old = after.to_dict()
    del old["combined"]
    assert FindingValidity.from_dict(old).combined == "independent"
    # the review page says how the swaps were combined
    assert "measured on readers' findings" in _valid_line(after.to_dict())[1]
    assert "swaps independent" in _valid_line(before.to_dict())[1]


def test_the_shipped_combination_belongs_to_the_shipped_judge() -> None:
    shipped = load_combination()
    assert default_combination_path().name == "combination.json"
    assert shipped.judge == file_sha(default_people_judge_path())
    assert shipped.record["items"] >= 300 and 0 < shipped.record["valid"] < shipped.record["items"]
    grid = np.linspace(0, 1, 11)
    mapped = shipped.calibration.probability(grid)
    assert np.all(np.diff(mapped) >= -1e-12) and shipped.calibration.bootstrap >= 100


def test_the_people_source_uses_the_shipped_combination_only_with_the_shipped_judge() -> None:
    from textrobust.attack.candidates.people import PeopleSubstitutes
    from tests.test_people_source import light_source

    assert light_source().combination is None  # an injected judge: independent
    shipped = PeopleSubstitutes().combination  # reads two small files, loads no model
    assert isinstance(shipped, MeasuredCombination) and shipped.judge == file_sha(default_people_judge_path())
