"""The goal of a second-order attack: fool the constraint, not a classifier.

Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt, section 4.2, equation 3):

    G(x, x_adv) := S(x, x_adv) >= epsilon  and  #{i : x[i] != x_adv[i]} >= gamma

A text meets the goal when the similarity model ``S`` still calls it similar to the
original although at least ``gamma`` of its words were swapped (for antonyms, so its
meaning is gone). No victim is involved: the model under attack is the constraint.

The score follows the released code (``FoolConstraintGoalFunction._get_score``): 0 when the
similarity is below ``epsilon``, otherwise the number of swapped words plus the similarity,
so a beam keeps the texts that stay above the threshold with the most swaps. The score
depends on ``epsilon``, hence so does the search's path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from textrobust.attack.problem import Evaluation
from textrobust.errors import ConfigError
from textrobust.similarity.protocol import describe
from textrobust.text import Text

__all__ = ["FoolConstraint", "compared_string"]


def compared_string(text: Text, original: Text) -> str:
    """What the similarity model compares: the columns of ``text`` in which ``original`` has
    a modifiable word (a sentence: itself; a premise/hypothesis pair with the premise
    frozen: the hypothesis), joined by one space. Every column when none is modifiable."""
    if not text.is_pair:
        return text.columns[0]
    spans = original.word_spans()
    open_columns = sorted({spans[p][0] for p in original.modifiable})
    chosen = open_columns or list(range(len(text.columns)))
    return " ".join(text.columns[c] for c in chosen)


class FoolConstraint:
    """Success when ``scorer.similarity(original, text) >= epsilon`` and at least ``gamma``
    words differ from ``original``.

    ``scorer``: any :class:`textrobust.similarity.SentenceScorer`; pass one that caches
    (all the project's scorers do) to share its work across thresholds. ``outputs`` of an
    evaluation are ``[similarity, words swapped]`` per text.

    >>> class Same:
    ...     def similarity(self, a, b): return np.ones(len(a))
    >>> goal = FoolConstraint(Text.from_string("a b c d"), Same(), epsilon=0.9, gamma=2)
    >>> goal.evaluate([Text.from_string("x b c d"), Text.from_string("x y c d")]).success.tolist()
    [False, True]
    """

    def __init__(self, original: Text, scorer: Any, *, epsilon: float, gamma: int = 3) -> None:
        if not isinstance(original, Text):
            raise ConfigError(f"The 'original' parameter of FoolConstraint must be a Text. Got {type(original).__name__}.")
        if not hasattr(scorer, "similarity"):
            raise ConfigError(
                "The 'scorer' parameter of FoolConstraint must have similarity(a, b) "
                f"(a SentenceScorer). Got {type(scorer).__name__}."
            )
        if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
            raise ConfigError(f"The 'gamma' parameter of FoolConstraint must be an int >= 1. Got {gamma!r} instead.")
        epsilon = float(epsilon)
        if not np.isfinite(epsilon):
            raise ConfigError(f"The 'epsilon' parameter of FoolConstraint must be a finite number. Got {epsilon}.")
        self.original = original
        self.scorer = scorer
        self.epsilon = epsilon
        self.gamma = gamma
        self._reference = compared_string(original, original)

    def similarities(self, texts: Sequence[Text]) -> np.ndarray:
        """``S(original, text)`` for each text (over the compared columns)."""
        if not texts:
            return np.zeros(0, dtype=np.float64)
        others = [compared_string(t, self.original) for t in texts]
        values = self.scorer.similarity([self._reference] * len(others), others)
        return np.asarray(values, dtype=np.float64).reshape(len(others))

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        texts = list(texts)
        sims = self.similarities(texts)
        swapped = np.array([self.original.l0(t) for t in texts], dtype=np.int64)
        similar = sims >= self.epsilon
        success = similar & (swapped >= self.gamma)
        scores = np.where(similar, swapped + sims, 0.0)
        return Evaluation(scores, success, np.column_stack([sims, swapped.astype(np.float64)]))

    def __repr__(self) -> str:
        return f"FoolConstraint(scorer={describe(self.scorer)}, epsilon={self.epsilon}, gamma={self.gamma})"
