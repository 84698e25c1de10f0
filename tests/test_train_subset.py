"""``textrobust train --max-train N``: a quicker victim trained on a seeded subset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from textrobust.cli.app import app

runner = CliRunner()


def test_max_train_reaches_the_training_as_a_subset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import textrobust.zoo as zoo
    from textrobust.data.examples import Dataset, Example
    from textrobust.text import Text
    from textrobust.zoo.io import read_card

    words = ["good", "fine", "great", "bad", "dull", "slow"]
    examples = tuple(Example(f"e{i}", Text.from_string(f"a {words[i % 6]} film {i}"), int(i % 6 < 3))
                     for i in range(30))
    toy = Dataset("toy", examples, ("negative", "positive"))
    real = zoo.train_victim
    given: list[Any] = []

    def tiny(arch: str, data: Any, *, out: Path, training: Any = None, **kwargs: Any) -> Any:
        given.append(training)
        small = {"epochs": 1, "extra_words": 0, "max_length": 16, "vectors": "random", **(training or {})}
        return real(arch, zoo.TrainingData(toy, toy.take(6), toy.take(6)), out=out,
                    config={"embed_dim": 8, "hidden": 6}, training=small, seed=0)

    monkeypatch.setenv("TEXTROBUST_THREADS", "1")
    monkeypatch.setattr(zoo, "train_victim", tiny)
    result = runner.invoke(app, ["train", "lstm", "--max-train", "10", "--out", str(tmp_path / "lstm")],
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    assert given == [{"max_train_examples": 10}]
    card = read_card(tmp_path / "lstm")
    assert card is not None
    assert "subset of 10 of 30 training examples" in str(card.to_dict())
    result = runner.invoke(app, ["train", "lstm", "--out", str(tmp_path / "all")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert given[-1] is None


def test_max_train_must_be_positive(tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", "lstm", "--max-train", "0", "--out", str(tmp_path / "x")],
                           terminal_width=200)
    assert result.exit_code == 2, result.output
    assert "--max-train" in result.output
