"""Defenses (issue 30): each trains a tiny model end to end in seconds, writes a card that
records it, and the CLI's --defense is validated; per-epoch checkpoints resume exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError
from textrobust.text import Text

torch = pytest.importorskip("torch")

from textrobust.defenses import DEFENSES, Defense, harden  # noqa: E402
from textrobust.defenses.augment import AugmentSettings, synonym_augmenter  # noqa: E402
from textrobust.zoo import TrainingData, VictimCard, load_victim, train_victim  # noqa: E402
from textrobust.zoo.io import CHECKPOINT_FILE  # noqa: E402

POSITIVE = ["good", "great", "fine", "superb"]
NEGATIVE = ["bad", "dull", "awful", "boring"]
NOUNS = ["film", "movie", "story", "plot"]
#: synonym sets (no antonyms): what augmentation and certified training substitute
SYNONYMS = {"good": ["great", "fine"], "great": ["good", "superb"], "fine": ["good"], "superb": ["great"],
            "bad": ["awful", "dull"], "awful": ["bad"], "dull": ["boring", "bad"], "boring": ["dull"],
            "film": ["movie"], "movie": ["film"], "story": ["plot"], "plot": ["story"]}
#: an attack table that can flip any adjective, so the tiny model is surely fooled
FLIPS = {w: [x for x in POSITIVE + NEGATIVE if x != w] for w in POSITIVE + NEGATIVE}
CNN = {"embed_dim": 8, "filters": 4}
TRAINING = {"epochs": 2, "extra_words": 0, "max_length": 16, "vectors": "random", "lr": 1e-2}


def _dataset(split: str, n: int, offset: int) -> Dataset:
    rng = np.random.default_rng(offset)
    examples = []
    for i in range(n):
        label = i % 2
        adjective = (POSITIVE if label else NEGATIVE)[int(rng.integers(4))]
        noun = NOUNS[int(rng.integers(4))]
        examples.append(Example(f"{split}-{i}", Text.from_string(f"The {noun} was {adjective}."), label))
    return Dataset("toy", tuple(examples), ("negative", "positive"), split)


@pytest.fixture(scope="module")
def data() -> TrainingData:
    return TrainingData(_dataset("train", 40, 1), _dataset("dev", 12, 2), _dataset("test", 12, 3))


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _check_card(path: Path, card: VictimCard, defense: str) -> None:
    assert card.defense == defense and card.defense_settings
    assert set(card.test_predictions) == {"negative", "positive"}
    assert sum(card.test_predictions.values()) == pytest.approx(1.0)
    assert VictimCard.load(path) == card and load_victim(path).card == card
    assert f"defense {defense}" in card.summary()
    assert not (path / CHECKPOINT_FILE).exists()


# ---- the registry and the card -------------------------------------------------------------
def test_the_choices_come_from_the_registry() -> None:
    assert sorted(d.value for d in Defense) == DEFENSES.names() == ["adversarial", "augment", "certified", "none"]
    with pytest.raises(ConfigError, match="must be one of adversarial, augment, certified, none. Got 'nope'"):
        harden("cnn", out=Path("unused"), defense="nope")
    with pytest.raises(ConfigError, match="takes no settings"):
        harden("cnn", out=Path("unused"), defense="none", settings={"share": 0.1})


def test_cards_default_to_no_defense_and_round_trip_one() -> None:
    base = dict(architecture="cnn", dataset="toy", label_names=("n", "p"), splits={"train": 4}, seed=0,
                dev_accuracy=0.5, test_accuracy=0.5, train_seconds=1.0, parameters=10, epochs_run=1, best_epoch=1,
                vocab_size=5, model_config={}, training={})
    old = VictimCard(**base).to_dict()  # type: ignore[arg-type]
    del old["defense"], old["defense_settings"]  # a card written before defenses
    assert VictimCard.from_dict(old).defense == "none" and "defense" not in VictimCard.from_dict(old).summary()
    card = VictimCard(**base, defense="augment", defense_settings={"share": 0.5})  # type: ignore[arg-type]
    assert VictimCard.from_dict(json.loads(json.dumps(card.to_dict()))) == card
    from textrobust.report.html import _card

    assert ("defense", "augment") in _card(card.to_dict())["shown"]


# ---- augment ----------------------------------------------------------------------------------
def test_the_augmenter_swaps_only_table_words_keeps_case_and_frozen_words() -> None:
    settings = AugmentSettings(share=1.0, swap_prob=1.0)
    augment = synonym_augmenter({"good": ["great"], "film": ["movie"]}, settings, seed=0)
    example = Example("e", Text.from_string("Good film, GOOD plot").freeze([3]), 1)
    original, copy = augment(example)
    assert original is example and copy.id == "e~aug" and copy.label == 1
    assert str(copy.text) == "Great movie, GREAT plot"
    none = synonym_augmenter({"good": ["great"]}, AugmentSettings(share=1.0, swap_prob=1.0), seed=0)
    assert none(Example("x", Text.from_string("a plot"), 0)) == [Example("x", Text.from_string("a plot"), 0)]
    runs = [[str(e.text) for ex in _dataset("train", 10, 1).examples
             for e in synonym_augmenter(SYNONYMS, AugmentSettings(), seed=3)(ex)] for _ in range(2)]
    assert runs[0] == runs[1]  # deterministic for a seed


def test_augment_trains_and_records_its_settings(data: TrainingData, tmp_path: Path) -> None:
    trained = harden("cnn", data, out=tmp_path / "aug", defense="augment",
                     settings={"share": 1.0, "swap_prob": 0.5}, config=CNN, training=TRAINING, table=SYNONYMS,
                     checkpoint=True)
    card = trained.card
    _check_card(trained.path, card, "augment")
    assert card.defense_settings["share"] == 1.0 and card.defense_settings["table"] == "given"
    assert card.splits["train"] == 40 < card.splits["train_used"] <= 80


# ---- adversarial ----------------------------------------------------------------------------
def _greedy(layer: Any) -> Any:
    from textrobust.attack.attack import Attack
    from textrobust.attack.searches import GreedySearch
    from textrobust.attack.searches.search_testing import DictSource

    return Attack(layer, source=DictSource(FLIPS), search=GreedySearch(), budget=50)


def test_adversarial_training_adds_the_successes_of_each_epoch(data: TrainingData, tmp_path: Path) -> None:
    events: list[Any] = []
    trained = harden("cnn", data, out=tmp_path / "adv", defense="adversarial",
                     settings={"share": 0.5, "max_examples": 8, "budget": 50, "clean_epochs": 1},
                     config=CNN, training={**TRAINING, "epochs": 3}, make_attack=_greedy,
                     progress=events.append, checkpoint=True)
    card = trained.card
    _check_card(trained.path, card, "adversarial")
    added = card.extra["extra_examples"]
    log = card.extra["adversarial_epochs"]
    assert added[0] == 0 and len(added) == 3  # the clean epoch adds nothing
    assert [e["epoch"] for e in log] == [2, 3] and all(e["attacked"] == 8 for e in log)
    assert [e["succeeded"] for e in log] == added[1:] and sum(added) > 0
    assert card.best_epoch >= 2  # never the clean warm-up epoch
    assert card.defense_settings["max_examples"] == 8 and card.defense_settings["attack"] == "given"
    extra = [e for e in events if e.stage == "extra"]
    assert extra and extra[-1].step == extra[-1].steps == 8


def test_adversarial_training_needs_an_adversarial_epoch(data: TrainingData, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="more epochs"):
        harden("cnn", data, out=tmp_path / "adv", defense="adversarial", settings={"clean_epochs": 2},
               config=CNN, training=TRAINING, make_attack=_greedy)


# ---- certified --------------------------------------------------------------------------------
CERTIFIED = {"training": {"epochs": 2, "ramp_epochs": 1, "batch_size": 8, "lr": 1e-2, "embedding_lr": 5e-2}}


def test_certified_training_trains_a_base_first_and_records_its_certified_accuracy(data: TrainingData,
                                                                                  tmp_path: Path) -> None:
    events: list[Any] = []
    trained = harden("cnn", data, out=tmp_path / "cert", defense="certified", settings=CERTIFIED,
                     config=CNN, training=TRAINING, table=SYNONYMS, progress=events.append)
    card = trained.card
    _check_card(trained.path, card, "certified")
    settings = card.defense_settings
    assert 0.0 <= settings["certified_test_accuracy"] <= card.test_accuracy
    assert settings["base"].startswith("trained first") and settings["config"]["epochs"] == 2
    assert card.epochs_run == 2 and len(card.extra["dev_history"]) == 2
    assert {"step", "epoch", "done"} <= {e.stage for e in events}


def test_certified_training_from_a_given_base(data: TrainingData, tmp_path: Path) -> None:
    base = train_victim("cnn", data, out=tmp_path / "base", config=CNN, training=TRAINING)
    trained = harden("cnn", data, out=tmp_path / "cert", defense="certified",
                     settings={**CERTIFIED, "base": str(base.path)}, table=SYNONYMS)
    assert trained.card.defense_settings["base"] == str(base.path)
    assert trained.card.defense_settings["base_test_accuracy"] == base.card.test_accuracy
    with pytest.raises(ConfigError, match="is a 'cnn', not a 'bow'"):
        harden("bow", data, out=tmp_path / "x", defense="certified", settings={"base": str(base.path)},
               table=SYNONYMS)
    with pytest.raises(ConfigError, match="covers the architectures"):
        harden("transformer", data, out=tmp_path / "x", defense="certified", table=SYNONYMS)
    with pytest.raises(ConfigError, match="cannot be resumed"):
        harden("cnn", data, out=tmp_path / "x", defense="certified", resume=True, table=SYNONYMS)


# ---- checkpoints ------------------------------------------------------------------------------
class Interrupted(Exception):
    pass


def test_an_interrupted_training_resumes_to_the_same_model(data: TrainingData, tmp_path: Path) -> None:
    settings = {**TRAINING, "epochs": 3, "patience": 5}
    whole = train_victim("cnn", data, out=tmp_path / "whole", config=CNN, training=settings, checkpoint=True)

    def stop_after_epoch_2(event: Any) -> None:
        if event.stage == "epoch" and event.epoch == 2:
            raise Interrupted

    out = tmp_path / "resumed"
    with pytest.raises(Interrupted):
        train_victim("cnn", data, out=out, config=CNN, training=settings, checkpoint=True,
                     progress=stop_after_epoch_2)
    assert [p.name for p in out.iterdir()] == [CHECKPOINT_FILE]
    with pytest.raises(ConfigError, match="seed differ"):
        train_victim("cnn", data, out=out, config=CNN, training=settings, seed=1, checkpoint=True, resume=True)
    epochs: list[int] = []
    resumed = train_victim("cnn", data, out=out, config=CNN, training=settings, checkpoint=True, resume=True,
                           progress=lambda e: epochs.append(e.epoch) if e.stage == "epoch" else None)
    assert epochs == [3]
    assert resumed.card.extra["dev_history"] == whole.card.extra["dev_history"]
    texts = data.test.texts
    np.testing.assert_array_equal(resumed.victim.probabilities(texts), whole.victim.probabilities(texts))
    assert not (out / CHECKPOINT_FILE).exists()
    with pytest.raises(ConfigError, match="Nothing to resume"):
        train_victim("cnn", data, out=out, config=CNN, training=settings, checkpoint=True, resume=True)


# ---- the command line ----------------------------------------------------------------------------
def test_the_cli_refuses_an_unknown_defense_with_the_choices(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from textrobust.cli.app import app

    runner = CliRunner()
    result = runner.invoke(app, ["train", "cnn", "--defense", "magic", "--out", str(tmp_path / "v")])
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert "'magic' is not one of" in flat and all(f"'{d}'" in flat for d in DEFENSES.names())
    wrong = runner.invoke(app, ["train", "cnn", "--defense", "augment", "--adv-share", "0.3", "--out",
                                str(tmp_path / "v")])
    assert wrong.exit_code == 2 and "applies to --defense adversarial" in " ".join(wrong.output.split())
    bad = runner.invoke(app, ["train", "cnn", "--defense", "adversarial", "--adv-share", "2", "--out",
                              str(tmp_path / "v")])
    assert bad.exit_code == 2 and "'--adv-share' option must be less than or equal to 1" in " ".join(bad.output.split())


def test_the_cli_passes_the_defense_and_warns_of_a_one_class_model(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import textrobust.defenses
    from textrobust.cli.app import app
    from textrobust.zoo.training import TrainedVictim

    calls: list[dict[str, Any]] = []

    def fake(arch: str, data: Any, **kwargs: Any) -> Any:
        calls.append({"arch": arch, **kwargs})
        card = VictimCard(architecture=arch, dataset="toy", label_names=("negative", "positive"), splits={}, seed=0,
                          dev_accuracy=0.5, test_accuracy=0.5, train_seconds=1.0, parameters=10, epochs_run=1,
                          best_epoch=1, vocab_size=5, model_config={}, training={},
                          test_predictions={"negative": 0.0, "positive": 1.0}, defense=kwargs["defense"],
                          defense_settings=dict(kwargs["settings"]))
        return TrainedVictim(kwargs["out"], card, None)

    monkeypatch.setattr(textrobust.defenses, "harden", fake)
    monkeypatch.setenv("TEXTROBUST_NO_PROGRESS", "1")
    monkeypatch.setenv("TEXTROBUST_THREADS", "1")
    result = CliRunner().invoke(app, ["train", "cnn", "--defense", "augment", "--augment-p", "0.5", "--out",
                                      str(tmp_path / "v")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert calls[0]["defense"] == "augment" and calls[0]["settings"] == {"swap_prob": 0.5}
    assert calls[0]["checkpoint"] is True and calls[0]["resume"] is False
    assert "augment" in result.stdout and "predicts 'positive' for 100.0%" in " ".join(result.stderr.split())


def test_adversarial_training_builds_its_recipe_on_the_training_device(data: TrainingData, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The recipe's own models (validated synonyms, LM constraints) load where the victim
    trains: ``train --defense adversarial --device X`` reaches ``build_attack``."""
    from textrobust.attack import recipes
    from textrobust.defenses.adversarial import AdversarialExamples, AdversarialSettings
    from textrobust.devices import Placement

    seen: list[Any] = []

    def recording(spec: Any, layer: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("placement"))
        raise RuntimeError("stop after the build")

    monkeypatch.setattr(recipes, "build_attack", recording)
    hook = AdversarialExamples(AdversarialSettings(), data.train.examples, placement=Placement("cpu", "float32"))
    with pytest.raises(RuntimeError, match="stop after the build"):
        hook._attack(object())
    assert seen == [Placement("cpu", "float32")]
    made: list[Any] = []
    monkeypatch.setattr("textrobust.defenses.adversarial.AdversarialExamples.__init__",
                        lambda self, *a, **k: (made.append(k.get("placement")), _stop())[1])
    from textrobust.defenses.adversarial import train_adversarial

    with pytest.raises(RuntimeError, match="stop after the hook"):
        train_adversarial("bow", data, settings=AdversarialSettings(), out=tmp_path / "v", epochs=2, device="cpu")
    assert made == [Placement("cpu", "float32")]


def _stop() -> None:
    raise RuntimeError("stop after the hook")
