"""Classification goals: untargeted and targeted misclassification, multi-class.

A goal is bound to one example (its true label, or a target label) and evaluates texts
through the query layer. Scores are in [0, 1], higher is closer to success:

- untargeted: ``1 - p(true label)``; success when the predicted label is not the true
  label and its probability is at least ``min_confidence`` (TextAttack's
  ``UntargetedClassification`` uses the same score);
- targeted: ``p(target)``; success when the target is predicted with probability at
  least ``min_confidence``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from textrobust.attack.problem import Evaluation
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.victims.query import QueryLayer

__all__ = ["UntargetedClassification", "TargetedClassification", "classification_goal"]


def _check_confidence(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"The 'min_confidence' parameter must be in [0, 1]. Got {value} instead.")
    return float(value)


class UntargetedClassification:
    """Any label but the true one."""

    def __init__(self, layer: QueryLayer, label: int, *, min_confidence: float = 0.0) -> None:
        if not 0 <= label < layer.num_labels:
            raise ConfigError(f"The 'label' parameter must be in [0, {layer.num_labels}). Got {label} instead.")
        self.layer = layer
        self.label = label
        self.min_confidence = _check_confidence(min_confidence)

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        return self.judge(self.layer.probabilities(texts))

    def judge(self, probs: np.ndarray) -> Evaluation:
        """The verdict on texts whose probabilities are ``probs``."""
        scores = 1.0 - probs[:, self.label]
        success = probs.argmax(axis=1) != self.label
        if self.min_confidence > 0.0:  # (every probability is >= 0: nothing to check at 0)
            success &= probs.max(axis=1) >= self.min_confidence
        return Evaluation(scores, success, probs)

    def __repr__(self) -> str:
        return f"UntargetedClassification(label={self.label}, min_confidence={self.min_confidence})"


class TargetedClassification:
    """Exactly the target label."""

    def __init__(self, layer: QueryLayer, target: int, *, min_confidence: float = 0.0) -> None:
        if not 0 <= target < layer.num_labels:
            raise ConfigError(f"The 'target' parameter must be in [0, {layer.num_labels}). Got {target} instead.")
        self.layer = layer
        self.target = target
        self.min_confidence = _check_confidence(min_confidence)

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        return self.judge(self.layer.probabilities(texts))

    def judge(self, probs: np.ndarray) -> Evaluation:
        """The verdict on texts whose probabilities are ``probs``."""
        scores = probs[:, self.target]
        success = (probs.argmax(axis=1) == self.target) & (scores >= self.min_confidence)
        return Evaluation(scores, success, probs)

    def __repr__(self) -> str:
        return f"TargetedClassification(target={self.target}, min_confidence={self.min_confidence})"


def classification_goal(
    layer: QueryLayer, label: int, *, target: int | None = None, min_confidence: float = 0.0
) -> UntargetedClassification | TargetedClassification:
    """The untargeted goal for ``label``, or the targeted goal for ``target``."""
    if target is None:
        return UntargetedClassification(layer, label, min_confidence=min_confidence)
    if target == label:
        raise ConfigError(f"The 'target' parameter must differ from the true label {label}.")
    return TargetedClassification(layer, target, min_confidence=min_confidence)
