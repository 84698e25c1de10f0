"""The second-order goal: a text whose label the patch substitution changes.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3.2, Eq. 2-4, stated there for a binary
classifier with ``f_soft(x) = P(positive | x)``.

Multi-class generalisation (used for any number of classes; for two classes every
definition reduces to the paper's):

- Eq. 2, prediction difference: ``F(x; p) = 1[argmax P(.|x (+) p) != argmax P(.|x)]``.
  For two classes this is ``|f(x (+) p) - f(x)|``; the sign of the paper's F carries no
  information the attack uses (Eq. 3 maximises ``|F|``).
- Eq. 3, vulnerable example: any ``x~`` in Neighbor_k(x0) with ``F(x~; p) = 1``, i.e. ``x~``
  and ``x~ (+) p`` get different labels.
- Eq. 4, loss: with ``u = P(.|x)`` and ``v = P(.|x (+) p)``,
  ``L(x; p) = min over labels a != b of [-log u_a - log v_b]``: the cross-entropy of the
  cheapest way to send the two texts to two different labels. For two classes with
  ``f1 = u_1``, ``f2 = v_1``, the two choices are ``-log(1-f1) - log f2`` and
  ``-log f1 - log(1-f2)``; their difference is ``logit(f1) - logit(f2)``, so the minimum
  is the one that sends the smaller of ``f1, f2`` to 0 and the larger to 1:
  ``-log(1 - f_min) - log(f_max)``, which is Eq. 4.

The goal's score, "higher is closer to success" as every engine goal, is ``exp(-L)`` in
(0, 1]: sorting by it decreasingly is sorting by ``L`` increasingly, as SO-Beam does.

``min_gap`` (default 0, the paper) additionally asks that the two probability vectors be
at least that far apart in total variation; the released code asks 0.03, so that a
0.501/0.499 split does not count as a success.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from textrobust.attack.problem import Evaluation
from textrobust.errors import ConfigError
from textrobust.analyses.second_order.patch import Patch, prediction_difference
from textrobust.text import Text
from textrobust.victims.query import QueryLayer

#: Why each flipped text fails extra checks ("" = passes): (texts, u, v) -> reasons
#: (:class:`textrobust.analyses.second_order.checks.BoundChecks`).
Judge = Callable[[Sequence[Text], np.ndarray, np.ndarray], list[str]]
#: A preference among vulnerable texts, higher preferred (issue 48: the more fluent one,
#: :meth:`textrobust.analyses.second_order.checks.BoundChecks.fluency_ratios` inverted).
Prefer = Callable[[Sequence[Text]], Sequence[float]]

__all__ = ["Judge", "Prefer", "SecondOrderGoal", "labels_differ", "second_order_loss", "soft_difference"]

_TINY = 1e-12


def second_order_loss(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Eq. 4, generalised: ``min_{a != b} -log u[a] - log v[b]`` per row.

    >>> f1, f2 = 0.3, 0.8  # P(positive) of x and x (+) p
    >>> u, v = np.array([[1 - f1, f1]]), np.array([[1 - f2, f2]])
    >>> bool(np.isclose(second_order_loss(u, v)[0], -np.log(1 - f1) - np.log(f2)))
    True
    """
    u = np.atleast_2d(np.asarray(u, dtype=np.float64))
    v = np.atleast_2d(np.asarray(v, dtype=np.float64))
    if u.shape != v.shape or u.shape[1] < 2:
        raise ConfigError(
            f"second_order_loss needs two probability arrays of one shape [n, classes >= 2]. "
            f"Got {u.shape} and {v.shape}."
        )
    lu = -np.log(np.clip(u, _TINY, 1.0))
    lv = -np.log(np.clip(v, _TINY, 1.0))
    total = lu[:, :, None] + lv[:, None, :]
    n_classes = u.shape[1]
    total[:, np.arange(n_classes), np.arange(n_classes)] = np.inf
    return total.reshape(len(u), -1).min(axis=1)


def labels_differ(u: np.ndarray, v: np.ndarray, min_gap: float = 0.0) -> np.ndarray:
    """Eq. 2-3, generalised: the argmax labels of ``u`` and ``v`` differ (and, with
    ``min_gap``, their total variation distance is at least ``min_gap``)."""
    u = np.atleast_2d(np.asarray(u, dtype=np.float64))
    v = np.atleast_2d(np.asarray(v, dtype=np.float64))
    differ = u.argmax(axis=1) != v.argmax(axis=1)
    if min_gap > 0:
        differ &= prediction_difference(u, v) >= min_gap
    return differ


def soft_difference(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Eq. 6 for every class: ``F_soft = P(.|x (+) p) - P(.|x)``, rows of ``v - u``."""
    return np.asarray(v, dtype=np.float64) - np.asarray(u, dtype=np.float64)


class SecondOrderGoal:
    """Success: ``x`` and ``x (+) patch`` get different labels (Eq. 2-3) and, with a
    ``judge`` (issue 38's checks), the judge accepts the text; score ``exp(-L(x; p))`` with
    ``L`` the generalised Eq. 4 (0 for a flip the judge rejects for its quality, so the beam
    drops it). With ``prefer`` (issue 48), a success's score is instead ``q / (1 + q)`` for
    its preference ``q > 0``, so the search reports the preferred one of a step's successes
    (a success always ranks above a failure, whatever the scores). Every text costs two queries (the
    text and its patched twin), both through ``layer``. ``outputs`` are the two
    probability rows per text, shape [n, 2, classes].

    ``queries_per_text`` (2) says so to budget code: a search that has ``room`` queries
    left can score ``room // 2`` more texts, not ``room``."""

    #: victim queries one scored text costs at most (the text and its patched twin)
    queries_per_text = 2

    def __init__(self, layer: QueryLayer, patch: Patch, *, min_gap: float = 0.0, judge: Judge | None = None,
                 prefer: Prefer | None = None) -> None:
        if not isinstance(patch, Patch):
            raise ConfigError(f"The 'patch' parameter of SecondOrderGoal must be a Patch. Got {patch!r}.")
        if not 0.0 <= min_gap <= 1.0:
            raise ConfigError(f"The 'min_gap' parameter of SecondOrderGoal must be in [0, 1]. Got {min_gap}.")
        if layer.num_labels < 2:
            raise ConfigError(f"SecondOrderGoal needs a victim with >= 2 labels; it has {layer.num_labels}.")
        self.layer = layer
        self.patch = patch
        self.min_gap = float(min_gap)
        self.judge = judge
        self.prefer = prefer

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        texts = list(texts)
        n = len(texts)
        if n == 0:
            empty = np.zeros(0)
            return Evaluation(empty, empty.astype(bool), np.zeros((0, 2, self.layer.num_labels)))
        probs = self.layer.probabilities(texts + self.patch.apply_many(texts))
        u, v = probs[:n], probs[n:]
        loss = second_order_loss(u, v)
        scores = np.exp(-loss)
        success = labels_differ(u, v, self.min_gap)
        if self.judge is not None and success.any():
            flipped = np.flatnonzero(success)
            reasons = self.judge([texts[i] for i in flipped], u[flipped], v[flipped])
            for i, reason in zip(flipped, reasons):
                if reason:
                    success[i] = False
                    if reason != "margin":  # a defect its descendants share: out of the beam
                        scores[i] = 0.0
        if self.prefer is not None and success.any():
            chosen = np.flatnonzero(success)
            q = np.maximum(np.asarray(self.prefer([texts[i] for i in chosen]), dtype=np.float64), 0.0)
            scores[chosen] = q / (1.0 + q)
        return Evaluation(scores, success, np.stack([u, v], axis=1))

    def __repr__(self) -> str:
        return f"SecondOrderGoal(patch={self.patch}, min_gap={self.min_gap})"
