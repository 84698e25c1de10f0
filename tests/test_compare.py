"""``textrobust compare``: the paired statistics on data with known answers, and the
command on tiny run folders written here by hand (typed records in a real store; no
victim, no model, offline, in seconds)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from textrobust.analyses.attack.analysis import AttackRecord
from textrobust.analyses.evaluate.analysis import EvaluationBatch
from textrobust.attack.results import AttackResult, Status
from textrobust.cli.app import app
from textrobust.errors import ConfigError
from textrobust.records import encode
from textrobust.report.compare import compare_runs, format_difference
from textrobust.report.paired import figure_value, mcnemar_exact, paired_bootstrap
from textrobust.store import RunStore
from textrobust.text import Text

LABELS = ["negative", "positive"]
EVIL = "<script>alert('x')</script> & a good film"


# ---- the statistics -------------------------------------------------------------------------------
def test_mcnemar_exact_known_p_values() -> None:
    ten = np.ones(10, dtype=bool)
    none = np.zeros(10, dtype=bool)
    only_other = mcnemar_exact(none, ten)  # 10 discordant, all one way: p = 2 * 0.5**10
    assert (only_other.baseline_only, only_other.other_only) == (0, 10)
    assert only_other.p_value == pytest.approx(2 * 0.5 ** 10)
    # 3 against 7 discordant (and 5 concordant examples, which do not count): p = 0.34375
    a = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1], dtype=bool)
    b = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1], dtype=bool)
    test = mcnemar_exact(a, b)
    assert (test.baseline_only, test.other_only) == (3, 7)
    assert test.p_value == pytest.approx(0.34375)
    assert mcnemar_exact(a, a).p_value == 1.0  # no discordant pair


def test_figure_value_is_a_ratio_of_sums_or_a_median() -> None:
    num, den = np.array([1.0, 0.0, 0.5, 0.0]), np.array([1.0, 1.0, 1.0, 0.0])
    assert figure_value(num, den) == pytest.approx(0.5)
    assert figure_value(num, den, "median") == pytest.approx(0.5)
    assert math.isnan(figure_value(np.zeros(2), np.zeros(2)))


def test_bootstrap_of_a_constant_shift_is_exact() -> None:
    ones = np.ones(30)
    same = paired_bootstrap(ones * 0.25, ones, ones * 0.25, ones, resamples=300, seed=1)
    assert (same.difference, same.low, same.high) == (0.0, 0.0, 0.0)
    shifted = paired_bootstrap(np.zeros(30), ones, ones, ones, resamples=300, seed=1)
    assert (shifted.difference, shifted.low, shifted.high) == (1.0, 1.0, 1.0)


def test_bootstrap_interval_matches_the_normal_approximation_of_a_paired_difference() -> None:
    # 400 examples: 40 right in the baseline only, 80 in the other only, the rest agree.
    # difference 0.1; its paired standard error sqrt((b + c)/n - d^2)/sqrt(n) = 0.0269,
    # so the 95% interval is about 0.1 -+ 0.053.
    a = np.zeros(400)
    b = np.zeros(400)
    a[:40] = 1
    b[40:120] = 1
    a[120:250] = b[120:250] = 1
    ones = np.ones(400)
    result = paired_bootstrap(a, ones, b, ones, resamples=4000, seed=0)
    assert result.difference == pytest.approx(0.1)
    se = math.sqrt((120 / 400 - 0.01) / 400)
    assert result.low == pytest.approx(0.1 - 1.96 * se, abs=0.01)
    assert result.high == pytest.approx(0.1 + 1.96 * se, abs=0.01)
    # pairing matters: the unpaired interval would be far wider (two independent binomials)
    unpaired = 1.96 * math.sqrt(a.mean() * (1 - a.mean()) / 400 + b.mean() * (1 - b.mean()) / 400)
    assert result.high - result.low < 2 * unpaired * 0.8


def test_bootstrap_is_seeded() -> None:
    rng = np.random.default_rng(5)
    a, b, ones = rng.random(50), rng.random(50), np.ones(50)
    first = paired_bootstrap(a, ones, b, ones, resamples=500, seed=7)
    assert first == paired_bootstrap(a, ones, b, ones, resamples=500, seed=7)
    assert first != paired_bootstrap(a, ones, b, ones, resamples=500, seed=8)
    median = paired_bootstrap(a, ones, b, ones, resamples=200, seed=7, statistic="median")
    assert median.difference == pytest.approx(float(np.median(b) - np.median(a)))
    assert median.low <= median.difference <= median.high


def test_bootstrap_without_enough_counted_examples_gives_no_interval() -> None:
    # the figure counts one example of 20: undefined in about (19/20)**20 = 36% of the resamples
    den = np.zeros(20)
    den[0] = 1
    result = paired_bootstrap(den, den, den, den, resamples=200, seed=0)
    assert result.difference == 0.0 and math.isnan(result.low) and math.isnan(result.high)
    with pytest.raises(ConfigError, match="resamples"):
        paired_bootstrap(den, den, den, den, resamples=0)


def test_differences_are_signed_in_the_figures_unit() -> None:
    assert format_difference(0.125, "%") == "+12.5 pp"
    assert format_difference(-0.5, "float") == "-0.500"
    assert format_difference(3, "int") == "+3"
    assert format_difference(-1e-12, "%") == "0.0 pp"


# ---- tiny run folders -----------------------------------------------------------------------------
def _text(i: int) -> Text:
    return Text.from_string(EVIL if i == 0 else f"a fine film number {i} with a good cast")


def _attack(i: int, status: Status, l0: int = 0) -> dict[str, Any]:
    original = _text(i)
    perturbed = original.replace({p: "bad" for p in range(l0)}) if l0 else original
    label = 1
    before = 0 if status is Status.SKIPPED else 1
    after = 0 if status is Status.SUCCEEDED else before
    result = AttackResult(f"e{i}", label, status, original, perturbed, before, after, (0.3, 0.7), (0.6, 0.4),
                          queries=10 + i, seconds=0.01)
    return encode(AttackRecord(f"e{i}", status.value, 10 + i, 0.01, result))


def _evaluation(ids: Sequence[str], right: Sequence[bool]) -> dict[str, Any]:
    labels = tuple(1 for _ in ids)
    predicted = tuple(1 if r else 0 for r in right)
    return encode(EvaluationBatch(f"batch:{ids[0]}:{ids[-1]}:{len(ids)}", "ok", len(ids), 0.01, tuple(ids), labels,
                                  predicted, tuple((0.4, 0.6) if r else (0.6, 0.4) for r in right)))


def _config(settings: dict[str, Any], victim: str) -> dict[str, Any]:
    return {"victim": victim, "data": {"dataset": "toy"}, "data_examples": 6, "data_name": "toy",
            "data_split": "test", "label_names": LABELS, "settings": settings}


def make_run(folder: Path, attacks: Sequence[tuple[int, Status, int]], right: Sequence[bool] | None = None,
             victim: str = "toy", recipe: str = "textfooler") -> Path:
    """A run folder holding an evaluate run (when ``right`` is given) and an attack run."""
    with RunStore(folder / "store.sqlite") as store:
        if right is not None:
            ids = [f"e{i}" for i in range(len(right))]
            run = store.start_run("evaluate", _config({"n": None, "batch_size": 64}, victim), seed=0)
            run.record(f"batch:{ids[0]}:{ids[-1]}:{len(ids)}", _evaluation(ids, right), position=0)
            run.finish({})
        run = store.start_run("attack", _config({"recipe": recipe, "n": 6, "budget": None, "quality": False,
                                                 "candidates": "validated"}, victim), seed=0)
        for position, (i, status, l0) in enumerate(attacks):
            run.record(f"e{i}", _attack(i, status, l0), position=position)
        run.finish({})
    return folder


S, F, K = Status.SUCCEEDED, Status.FAILED, Status.SKIPPED
#: accuracy under attack 3/6, success rate 2/5
ATTACKS_A = [(0, S, 1), (1, F, 0), (2, F, 0), (3, K, 0), (4, S, 2), (5, F, 0)]
#: accuracy under attack 4/6, success rate 1/5
ATTACKS_B = [(0, F, 0), (1, F, 0), (2, S, 1), (3, K, 0), (4, F, 0), (5, F, 0)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("compare")
    a = make_run(root / "run-a", ATTACKS_A, right=[True] * 8 + [False] * 2)
    b = make_run(root / "run-b", ATTACKS_B, right=[True] * 5 + [False] + [True] * 4, victim="other")
    return a, b


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["compare", *args], terminal_width=100)


def _figure(data: dict[str, Any], analysis: str, label: str) -> dict[str, Any]:
    return next(f for f in data["figures"] if f["analysis"] == analysis and f["label"] == label)


def test_compare_two_runs_through_the_cli(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = runs
    result = _invoke(str(a), str(b), "--out", str(tmp_path / "out"), "--resamples", "300")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1] == f"report: {tmp_path / 'out' / 'compare.html'}"
    assert "accuracy under attack" in result.output and "+16.7 pp [" in result.output and "McNemar" in result.output
    page = (tmp_path / "out" / "compare.html").read_text()
    assert "run-a" in page and "run-b" in page
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert [r["name"] for r in data["runs"]] == ["run-a", "run-b"]

    under = _figure(data, "attack", "accuracy under attack")["deltas"][0]
    assert under["difference"] == pytest.approx(4 / 6 - 3 / 6)
    assert under["shared"] == 6
    assert under["low"] <= under["difference"] <= under["high"]
    # right under attack: A on e1, e2, e5; B on e0, e1, e4, e5 -> discordant 1 and 2
    assert under["discordant"] == [1, 2] and under["p_value"] == pytest.approx(1.0)
    success = _figure(data, "attack", "attack success rate")["deltas"][0]
    assert success["difference"] == pytest.approx(1 / 5 - 2 / 5) and success["p_value"] is None
    assert success["low"] is not None and success["note"] is None
    clean = _figure(data, "evaluate", "clean accuracy")
    assert clean["baseline"] == pytest.approx(0.8)
    assert clean["deltas"][0]["difference"] == pytest.approx(0.1)
    assert clean["deltas"][0]["discordant"] == [1, 2]  # e5 right in A only; e8, e9 in B only
    # every declared figure opened into per-example values that give back the run's figure
    for figure in data["figures"]:
        for delta in figure["deltas"]:
            assert "do not give back" not in (delta["note"] or ""), figure
    examples = _figure(data, "evaluate", "examples")["deltas"][0]
    assert examples["difference"] == 0 and examples["low"] is None and "count" in examples["note"]
    assert data["curves"] and "words changed" in data["curves"][0]["title"]


def test_the_page_escapes_texts_and_lists_the_disagreements(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = runs
    assert _invoke(str(a), str(b), "--out", str(tmp_path), "--resamples", "200").exit_code == 0
    page = (tmp_path / "compare.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(" in page
    data = json.loads((tmp_path / "compare.json").read_text())
    disagreeing = {(d["analysis"], d["example_id"]) for d in data["disagreements"]}
    # attack outcomes differ on e0, e2, e4; predictions differ on e5, e8, e9
    assert disagreeing == {("attack", "e0"), ("attack", "e2"), ("attack", "e4"), ("evaluate", "e5"),
                           ("evaluate", "e8"), ("evaluate", "e9")}
    evil = next(d for d in data["disagreements"] if d["example_id"] == "e0" and d["analysis"] == "attack")
    assert evil["text"] == EVIL and evil["cells"] == ["positive · succeeded", "positive · failed"]


def test_the_same_seed_gives_the_same_intervals(runs: tuple[Path, Path]) -> None:
    first = compare_runs(list(runs), resamples=200, seed=3)
    assert first.figures == compare_runs(list(runs), resamples=200, seed=3).figures
    assert first.figures != compare_runs(list(runs), resamples=200, seed=4).figures


def test_runs_over_other_examples_compare_what_they_share(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = runs
    partial = make_run(tmp_path / "run-c", [(2, S, 1), (3, K, 0), (4, F, 0), (5, F, 0), (9, F, 0)])
    comparison = compare_runs([a, partial], resamples=200)
    coverage = {c.analysis: c for c in comparison.coverage}
    assert coverage["attack"].examples == (6, 5) and coverage["attack"].shared == (6, 4)
    assert coverage["evaluate"].examples == (10, None)
    assert any("evaluate did not run in run-c" in n for n in comparison.notes)
    assert any("shares 4 of its 5 examples" in n for n in comparison.notes)
    under = next(f for f in comparison.figures if f.label == "accuracy under attack").deltas[0]
    # on e2..e5: A right on e2, e5 (2/4); C right on e4, e5 (2/4)
    assert under.shared == 4 and under.difference == pytest.approx(0.0) and under.on_shared == (0.5, 0.5)
    assert under.low is None and "counts only 4 of the shared examples" in (under.note or "")  # too few
    clean = next(f for f in comparison.figures if f.analysis == "evaluate" and f.label == "clean accuracy")
    assert clean.deltas[0].value is None and "did not run" in (clean.deltas[0].note or "")


def test_three_runs_each_against_the_baseline(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = runs
    result = _invoke(str(a), str(b), str(a), "--out", str(tmp_path), "--resamples", "200", "--seed", "3")
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "compare.json").read_text())
    assert [r["name"] for r in data["runs"]] == ["run-a", "run-b", "run-a (2)"] and data["seed"] == 3
    under = _figure(data, "attack", "accuracy under attack")["deltas"]
    assert [d["run"] for d in under] == ["run-b", "run-a (2)"] and under[1]["difference"] == 0.0


def test_a_folder_that_is_not_a_run_folder_exits_2(runs: tuple[Path, Path], tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _invoke(str(runs[0]), str(empty), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"'{empty}' is not a run folder" in message and "holds no run store (store.sqlite)" in message
    assert not (empty / "store.sqlite").exists()  # nothing created in the folder read
    missing = _invoke(str(tmp_path / "nowhere"), str(runs[0]), "--out", str(tmp_path / "out"))
    assert missing.exit_code == 2 and "no such folder" in " ".join(missing.output.split())
    assert _invoke(str(runs[0]), "--out", str(tmp_path / "out")).exit_code == 2  # one run: nothing to compare


def test_runs_sharing_no_examples_exit_2(runs: tuple[Path, Path], tmp_path: Path) -> None:
    other = make_run(tmp_path / "elsewhere", [(20, F, 0), (21, S, 1)])
    result = _invoke(str(runs[0]), str(other), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "run-a and elsewhere share no examples" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()


def test_a_figure_without_per_example_values_gets_the_difference_and_the_reason(
        runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.report import compare

    monkeypatch.setattr(compare, "PER_EXAMPLE", {k: v for k, v in compare.PER_EXAMPLE.items() if k != "attack"})
    comparison = compare_runs(list(runs), resamples=200)
    success = next(f for f in comparison.figures if f.label == "attack success rate").deltas[0]
    assert success.difference == pytest.approx(1 / 5 - 2 / 5)
    assert success.low is None and success.p_value is None
    assert "no interval: each attack record holds one of its examples" in (success.note or "")
    assert not any(d.analysis == "attack" for d in comparison.disagreements) and not comparison.curves
