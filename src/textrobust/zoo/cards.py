"""Model cards: what a trained victim is, what it was trained on and how well it does."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textrobust.errors import VictimError

__all__ = ["CARD_FILE", "ONE_CLASS_SHARE", "VictimCard", "now_iso", "one_class_warning", "prediction_shares"]

CARD_FILE = "card.json"

#: A model that gives one class to more than this share of the texts is flagged as
#: (nearly) constant: its accuracy is then mostly the label balance, and any robustness
#: or certified figure of it says nothing about the text (issue 30).
ONE_CLASS_SHARE = 0.95


def prediction_shares(predicted: Sequence[int], label_names: Sequence[str]) -> dict[str, float]:
    """The share of ``predicted`` (label indices) that each label name gets, rounded to
    six decimals (empty for no predictions)."""
    if not len(predicted):
        return {}
    total = len(predicted)
    return {name: round(sum(1 for p in predicted if int(p) == i) / total, 6) for i, name in enumerate(label_names)}


def one_class_warning(shares: Mapping[str, float] | None, where: str = "the test texts",
                      threshold: float = ONE_CLASS_SHARE) -> str | None:
    """One warning line when one label gets more than ``threshold`` of the predictions
    (``shares``: label name -> share, as :func:`prediction_shares`), else None."""
    if not shares:
        return None
    label, share = max(shares.items(), key=lambda item: item[1])
    if share <= threshold:
        return None
    return (f"predicts '{label}' for {share:.1%} of {where} (more than {threshold:.0%}): a (nearly) one-class "
            f"model; its accuracy is mostly the label balance and its robustness figures say little")


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class VictimCard:
    """The card saved as ``card.json`` beside a trained victim's weights.

    ``splits`` holds example counts (``train``, ``dev``, ``test``; ``train_used`` after
    augmentation or subsetting). Accuracies are fractions in [0, 1] on the dev split (the
    one used for model selection) and on the held-out test split.
    """

    architecture: str
    dataset: str
    label_names: tuple[str, ...]
    splits: dict[str, int]
    seed: int
    dev_accuracy: float
    test_accuracy: float
    train_seconds: float
    parameters: int
    epochs_run: int
    best_epoch: int
    vocab_size: int
    model_config: dict[str, Any]
    training: dict[str, Any]
    augment: str | None = None
    torch_threads: int | None = None
    #: the torch device the model was trained on (``--device``; None on cards written
    #: before issue 31, which trained on the CPU)
    device: str | None = None
    package_versions: dict[str, str] = field(default_factory=dict)
    created: str = ""
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: share of the test texts predicted as each label (:func:`prediction_shares`); empty
    #: on cards written before issue 30
    test_predictions: dict[str, float] = field(default_factory=dict)
    #: how the model was hardened against word substitutions (``textrobust train
    #: --defense``): "none", "adversarial", "augment" or "certified"; its settings (and,
    #: for "certified", the IBP-certified test accuracy) in ``defense_settings``
    defense: str = "none"
    defense_settings: dict[str, Any] = field(default_factory=dict)

    @property
    def one_class(self) -> str | None:
        """The warning line when the model predicts one class for more than
        :data:`ONE_CLASS_SHARE` of the test texts, else None (also None when the card does
        not record its test predictions)."""
        return one_class_warning(self.test_predictions)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["label_names"] = list(self.label_names)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VictimCard:
        """Read a card; keys this version does not know are kept in ``extra``."""
        if not isinstance(data, dict):
            raise VictimError(f"A victim card must be a JSON object. Got {type(data).__name__}.")
        known = {f.name for f in fields(cls)}
        required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        missing = [name for name in required if name not in data]
        if missing:
            raise VictimError(f"The victim card lacks the fields {missing}.")
        values = {k: v for k, v in data.items() if k in known}
        values["label_names"] = tuple(values["label_names"])
        values["extra"] = {**dict(values.get("extra") or {}), **{k: v for k, v in data.items() if k not in known}}
        return cls(**values)

    def save(self, folder: Path) -> Path:
        path = Path(folder) / CARD_FILE
        path.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, folder: Path) -> VictimCard:
        path = Path(folder) / CARD_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise VictimError(f"{path} does not exist: a victim folder holds a card.json.") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise VictimError(f"{path} could not be read as JSON: {exc}.") from None
        try:
            return cls.from_dict(data)
        except (VictimError, TypeError) as exc:
            raise VictimError(f"{path} is not a valid victim card: {exc}") from None

    def summary(self) -> str:
        """One line: architecture, data, accuracies, size, the defense (when not "none");
        a second, ``WARNING: ...``, when the model is (nearly) one-class."""
        line = (
            f"{self.architecture} on {self.dataset}: dev {self.dev_accuracy:.3f}, test {self.test_accuracy:.3f}, "
            f"{self.parameters:,} parameters, trained in {self.train_seconds:.0f} s (seed {self.seed})"
        )
        if self.defense != "none":
            line += f", defense {self.defense}"
        return line if self.one_class is None else f"{line}\nWARNING: {self.one_class}"

