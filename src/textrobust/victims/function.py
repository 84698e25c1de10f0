"""A victim built from a plain function: the test double used everywhere.

Like httpx's ``MockTransport``, :class:`FunctionVictim` turns a function from strings to
scores into a full :class:`~textrobust.victims.protocol.Victim`, so searches, analyses
and the query layer can be tested without any model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from textrobust.errors import CapabilityError, ConfigError, VictimError
from textrobust.text import Text
from textrobust.victims.protocol import as_texts
from textrobust.victims.protocol import Capabilities

__all__ = ["FunctionVictim", "Outputs", "check_label_names", "softmax"]


class Outputs(StrEnum):
    """What a wrapped function returns: probabilities as they are, or logits to softmax."""

    PROBABILITIES = "probabilities"
    LOGITS = "logits"


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in float64, stable for large logits."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def check_label_names(label_names: Any, owner: str) -> tuple[str, ...]:
    """``label_names`` as a tuple, or a :class:`ConfigError` naming ``owner``.

    Accepts a non-empty sequence of distinct, non-empty strings.
    """
    if isinstance(label_names, str) or not isinstance(label_names, Sequence):
        raise ConfigError(
            f"The 'label_names' parameter of {owner} must be a sequence of strings such as "
            f"('negative', 'positive'). Got {label_names!r} instead."
        )
    names = tuple(label_names)
    bad = [n for n in names if not isinstance(n, str) or not n]
    if not names or bad:
        raise ConfigError(
            f"The 'label_names' parameter of {owner} must hold at least one non-empty string "
            f"and nothing else. Got {names!r} instead."
        )
    if len(set(names)) != len(names):
        raise ConfigError(
            f"The 'label_names' parameter of {owner} must not repeat a name. Got {names!r} instead."
        )
    return names


class FunctionVictim:
    """A victim whose scores come from ``fn``.

    ``fn`` receives a ``list[str]`` (each text as written, ``str(text)``), or, with
    ``pairs=True``, a ``list[tuple[str, str]]`` of (premise, hypothesis), and returns an
    array-like of shape [n, len(label_names)]: probabilities, or logits with
    ``outputs="logits"`` (softmaxed here). ``fn`` is never called with an empty list.
    Outputs are not validated beyond being two-dimensional: the query layer and
    :func:`~textrobust.victims.testing.check_victim` do that.

    >>> v = FunctionVictim(lambda s: [[len(x), 0.0] for x in s], ("long", "short"),
    ...                    outputs="logits", name="length")
    >>> v
    FunctionVictim(name='length', label_names=('long', 'short'), outputs='logits', pairs=False)
    >>> v.probabilities([Text.from_string("ab")]).round(3).tolist()
    [[0.881, 0.119]]
    """

    def __init__(
        self,
        fn: Callable[[list[Any]], Any],
        label_names: Sequence[str],
        *,
        outputs: Outputs | str = Outputs.PROBABILITIES,
        pairs: bool = False,
        name: str | None = None,
    ) -> None:
        if not callable(fn):
            raise ConfigError(
                f"The 'fn' parameter of FunctionVictim must be callable. Got {fn!r} instead."
            )
        try:
            self.outputs = Outputs(outputs)
        except ValueError:
            raise ConfigError(
                f"The 'outputs' parameter of FunctionVictim must be one of "
                f"{[o.value for o in Outputs]}. Got {outputs!r} instead."
            ) from None
        self.fn = fn
        self._label_names = check_label_names(label_names, "FunctionVictim")
        self.pairs = bool(pairs)
        self.name = name if name is not None else getattr(fn, "__name__", type(fn).__name__)

    @property
    def label_names(self) -> tuple[str, ...]:
        return self._label_names

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(pairs=self.pairs)

    def __repr__(self) -> str:
        return (
            f"FunctionVictim(name={self.name!r}, label_names={self._label_names!r}, "
            f"outputs={self.outputs.value!r}, pairs={self.pairs})"
        )

    def probabilities(self, texts: Sequence[Text | str]) -> np.ndarray:
        """Probabilities [len(texts), len(label_names)] (float64)."""
        texts = as_texts(texts)
        if len(texts) == 0:
            return np.empty((0, len(self._label_names)), dtype=np.float64)
        raw = np.asarray(self.fn(self._inputs(texts)), dtype=np.float64)
        if raw.ndim != 2:
            raise VictimError(
                f"{self!r}: fn returned an array of shape {raw.shape} for {len(texts)} texts; "
                f"expected [n_texts, n_labels] = ({len(texts)}, {len(self._label_names)})."
            )
        if self.outputs is Outputs.LOGITS:
            return softmax(raw)
        return raw.copy()

    def _inputs(self, texts: Sequence[Text]) -> list[Any]:
        if self.pairs:
            singles = [i for i, t in enumerate(texts) if len(t.columns) != 2]
            if singles:
                raise VictimError(
                    f"{self!r} classifies (premise, hypothesis) pairs, but texts at positions "
                    f"{singles[:5]} have {len(texts[singles[0]].columns)} column(s). Build them "
                    f"with Text.from_pair."
                )
            return [tuple(t.columns) for t in texts]
        paired = [i for i, t in enumerate(texts) if t.is_pair]
        if paired:
            raise CapabilityError(
                f"{self!r} does not declare pairs, but texts at positions {paired[:5]} are "
                f"pairs. Build the victim with pairs=True to classify pairs."
            )
        return [str(t) for t in texts]
