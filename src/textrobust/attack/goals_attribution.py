"""The goal of an attribution attack: move the explanation, keep the prediction.

Ivankay et al., "Estimating the Adversarial Robustness of Attributions in Text with
Transformers" (../shared/papers/attribution-robustness-tea.txt), Eq. 2 and 3: a
perturbed text ``s~`` is admissible when the victim still predicts the original label
(Eq. 3), and it is better the larger the attribution distance
``d[A(s~, F, l), A(s, F, l)]`` to the original explanation (Eq. 2's numerator; Algorithm
1 line 14 compares every candidate with the *original* attribution).

A text's score is that distance (in [0, 1]) when its prediction is unchanged, and -1 when
it changed, so no search ever keeps a text that breaks Eq. 3. ``success`` is always False:
the attack maximises the distance within its perturbation budget, it has no threshold to
reach. ``outputs`` of an evaluation are, per text, ``[distance (NaN when the prediction
changed), 1 if the prediction is kept else 0, probabilities...]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from textrobust.attack.problem import Evaluation
from textrobust.attribution import BaseAttribution, attribution_distance
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.victims.query import QueryLayer

__all__ = ["AttributionGoal", "CHANGED_PREDICTION"]

#: The score of a text whose prediction changed (below every distance).
CHANGED_PREDICTION = -1.0


class AttributionGoal:
    """Maximise ``distance(A(text), A(original))`` for ``label`` while the victim keeps
    predicting ``label``. ``attribution`` is any :class:`~textrobust.attribution.
    BaseAttribution` (it caches by text); ``distance`` a name of
    :class:`~textrobust.attribution.AttributionDistance` (``k`` for top-k)."""

    def __init__(self, layer: QueryLayer, attribution: BaseAttribution, original: Text, label: int, *,
                 distance: str = "pcc", k: int = 3) -> None:
        if not isinstance(original, Text):
            raise ConfigError(f"The 'original' parameter of AttributionGoal must be a Text. Got {type(original).__name__}.")
        if not 0 <= int(label) < layer.num_labels:
            raise ConfigError(f"The 'label' parameter must be in [0, {layer.num_labels}). Got {label} instead.")
        self.layer = layer
        self.attribution = attribution
        self.original = original
        self.label = int(label)
        self.distance_name = str(distance)
        self.distance = attribution_distance(distance, k=k)
        self.reference = attribution.attribute([original], [self.label])[0]

    def __repr__(self) -> str:
        return (f"AttributionGoal(label={self.label}, attribution={type(self.attribution).__name__}, "
                f"distance={self.distance_name!r})")

    def distances(self, texts: Sequence[Text], zeroed: Sequence[int | None] | None = None) -> np.ndarray:
        """``d[A(text), A(original)]`` for each text (no prediction check); ``zeroed`` as in
        :meth:`~textrobust.attribution.BaseAttribution.attribute`."""
        texts = list(texts)
        for text in texts:
            if len(text) != len(self.original):
                raise ConfigError(
                    f"An attribution goal compares texts word by word: got a text of {len(text)} words for an "
                    f"original of {len(self.original)}. Use word substitutions only."
                )
        maps = self.attribution.attribute(texts, [self.label] * len(texts), zeroed)
        return np.array([self.distance(m, self.reference) for m in maps], dtype=np.float64)

    def importance(self, text: Text, positions: Sequence[int]) -> np.ndarray:
        """TEA's word ranking (Algorithm 1, line 3): ``I_w = d[A(s_{w -> 0}), A(s)]`` for
        each position, the word's embedding zeroed (black-box methods: the word replaced
        by ``unk``). The prediction is not checked here, as in the paper."""
        positions = list(positions)
        if not positions:
            return np.zeros(0, dtype=np.float64)
        return self.distances([text] * len(positions), positions)

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        texts = list(texts)
        probs = self.layer.probabilities(texts)
        kept = probs.argmax(axis=1) == self.label
        found = np.full(len(texts), np.nan, dtype=np.float64)
        index = np.flatnonzero(kept)
        if index.size:
            found[index] = self.distances([texts[i] for i in index])
        scores = np.where(kept, found, CHANGED_PREDICTION)
        outputs = np.column_stack([found, kept.astype(np.float64), probs])
        return Evaluation(scores, np.zeros(len(texts), dtype=bool), outputs)

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "attribution": repr(self.attribution), "distance": self.distance_name}
