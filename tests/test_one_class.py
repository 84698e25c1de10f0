"""The one-class flag (issue 30): a model that gives one label to more than 95% of the
texts is flagged in its model card, in ``textrobust train``'s output and in the audit
report (the victim facts and the verdict's points)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from textrobust import audit
from textrobust.analyses import ANALYSES
from textrobust.data.examples import Dataset, Example
from textrobust.report.html import render_html
from textrobust.report.testing import validate_section
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.zoo.cards import ONE_CLASS_SHARE, VictimCard, one_class_warning, prediction_shares

LABELS = ("negative", "positive")


def test_shares_and_the_threshold() -> None:
    assert prediction_shares([1, 1, 0, 1], LABELS) == {"negative": 0.25, "positive": 0.75}
    assert prediction_shares([], LABELS) == {}
    assert one_class_warning({"negative": 0.05, "positive": 0.95}) is None  # at the threshold: not flagged
    warning = one_class_warning({"negative": 0.004, "positive": 0.996})
    assert warning is not None and "'positive'" in warning and "99.6%" in warning
    assert one_class_warning({}) is None and one_class_warning(None) is None
    assert ONE_CLASS_SHARE == 0.95


def _card(**changes: object) -> VictimCard:
    base = dict(architecture="cnn", dataset="toy", label_names=LABELS, splits={"train": 4, "dev": 2, "test": 2},
                seed=0, dev_accuracy=0.5, test_accuracy=0.5, train_seconds=1.0, parameters=10, epochs_run=1,
                best_epoch=1, vocab_size=5, model_config={}, training={})
    return VictimCard(**{**base, **changes})  # type: ignore[arg-type]


def test_the_card_flags_a_one_class_model_and_round_trips() -> None:
    flagged = _card(test_predictions={"negative": 0.0, "positive": 1.0})
    assert flagged.one_class is not None and "WARNING: predicts 'positive' for 100.0%" in flagged.summary()
    assert VictimCard.from_dict(json.loads(json.dumps(flagged.to_dict()))) == flagged
    balanced = _card(test_predictions={"negative": 0.4, "positive": 0.6})
    assert balanced.one_class is None and "WARNING" not in balanced.summary()
    old = _card().to_dict()
    del old["test_predictions"]  # a card written before the field existed
    assert VictimCard.from_dict(old).one_class is None


def _data(split: str, n: int, labels: list[int]) -> Dataset:
    words = {0: ["bad", "dull", "awful"], 1: ["good", "great", "fine"]}
    examples = tuple(Example(f"{split}{i}", Text.from_string(f"the film was {words[labels[i]][i % 3]}"), labels[i])
                     for i in range(n))
    return Dataset("toy", examples, LABELS, split)


@pytest.mark.parametrize("train_labels", ["one class", "both"])
def test_training_records_the_test_predictions_and_flags_one_class(train_labels: str, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from textrobust.zoo import TrainingData, train_victim

    torch.set_num_threads(1)
    both = [i % 2 for i in range(24)]
    train = _data("train", 24, [0] * 24 if train_labels == "one class" else both)
    data = TrainingData(train, _data("dev", 8, both), _data("test", 8, both))
    trained = train_victim("bow", data, out=tmp_path / "v", config={"embed_dim": 8},
                           training={"epochs": 3, "extra_words": 0, "vectors": "random", "lr": 5e-2}, seed=0)
    card = trained.card
    assert sum(card.test_predictions.values()) == pytest.approx(1.0)
    predicted = trained.victim.probabilities(data.test.texts).argmax(axis=1)
    assert card.test_predictions["positive"] == pytest.approx(float(np.mean(predicted == 1)))
    if train_labels == "one class":  # every training label negative: a constant model
        assert card.test_predictions == {"negative": 1.0, "positive": 0.0} and card.one_class is not None
        assert VictimCard.load(trained.path).one_class == card.one_class
    else:
        assert card.one_class is None


def _constant(texts: list[str]) -> list[list[float]]:
    return [[0.2, 0.8] for _ in texts]


def _audit_data(n: int = 8) -> Dataset:
    examples = tuple(Example(f"e{i}", Text.from_string(f"a {'good' if i % 2 else 'bad'} film {i}"), i % 2)
                     for i in range(n))
    return Dataset("toy", examples, LABELS, split="test")


def test_the_evaluation_section_warns_when_one_class_is_predicted(tmp_path: Path) -> None:
    result = audit.run(FunctionVictim(_constant, LABELS), _audit_data(), [ANALYSES.get("evaluate")({"batch_size": 4})],
                       tmp_path, progress=False)
    evaluation = result["evaluate"]
    assert evaluation.summary.predicted_share == {"0": 0.0, "1": 1.0} and evaluation.summary.accuracy == 0.5
    report = json.loads((tmp_path / "report.json").read_text())
    points = report["verdict"]["points"]
    warning = "Warning: the victim predicts 'positive' for 100.0% of the examples scored"
    assert any(p.startswith(warning) for p in points)
    section = next(a for a in report["analyses"] if a["name"] == "evaluate")
    shares = next(t for t in section["tables"] if t["title"] == "predictions per label")
    assert shares["rows"] == [["negative", 0.0], ["positive", 1.0]]
    html = (tmp_path / "report.html").read_text()
    assert "predicts &#39;positive&#39; for 100.0% of the examples scored" in html


def test_a_balanced_victim_gets_no_warning(tmp_path: Path) -> None:
    def score(texts: list[str]) -> list[list[float]]:
        return [[0.2, 0.8] if "good" in t else [0.9, 0.1] for t in texts]

    analysis = ANALYSES.get("evaluate")({"batch_size": 4})
    result = audit.run(FunctionVictim(score, LABELS), _audit_data(), [analysis], tmp_path, progress=False,
                       report=False)
    summary = result["evaluate"].summary
    section = analysis.section(summary, result["evaluate"].records, [], LABELS)
    assert section.point is None
    validate_section(analysis, section, units=summary.units, label_names=LABELS)


def test_the_report_shows_the_cards_warning_among_the_victim_facts() -> None:
    analysis = ANALYSES.get("evaluate")({})
    report = validate_section(analysis, {"headline": [], "tables": [], "figures": [], "examples": []}, units=0)
    card = _card(test_predictions={"negative": 0.99, "positive": 0.01}).to_dict()
    report["victim"]["card"] = card
    html = render_html(report)
    assert "<dt>warning</dt>" in html and "predicts &#39;negative&#39; for 99.0% of the test texts" in html
    report["victim"]["card"] = _card(test_predictions={"negative": 0.5, "positive": 0.5}).to_dict()
    assert "<dt>warning</dt>" not in render_html(report)


def test_textrobust_train_prints_the_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("typer")
    from textrobust.cli.train import _print_card

    _print_card(_card(test_predictions={"negative": 0.97, "positive": 0.03}), tmp_path)
    assert "warning: predicts 'negative' for 97.0% of the test texts" in capsys.readouterr().err
    _print_card(_card(test_predictions={"negative": 0.5, "positive": 0.5}).to_dict(), tmp_path)
    assert "warning" not in capsys.readouterr().err
