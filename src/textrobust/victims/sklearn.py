"""A fitted scikit-learn pipeline as a victim.

The pipeline must take raw strings (e.g. ``TfidfVectorizer`` then ``LogisticRegression``)
and offer ``predict_proba``. Nothing is loaded from files here: pickled or joblib models
can run code when loaded, so the caller builds or loads the fitted object and passes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from textrobust.errors import ConfigError, VictimError
from textrobust.text import Text
from textrobust.victims.protocol import as_texts
from textrobust.victims.function import check_label_names
from textrobust.victims.protocol import Capabilities

__all__ = ["SklearnVictim", "PAIR_SEPARATOR", "join_pair"]

#: What :class:`SklearnVictim` puts between premise and hypothesis by default.
PAIR_SEPARATOR = " [SEP] "


def join_pair(premise: str, hypothesis: str, separator: str = PAIR_SEPARATOR) -> str:
    """The one string a pipeline sees for a pair; train pair pipelines on these strings.

    >>> join_pair("A man sleeps.", "Nobody sleeps.")
    'A man sleeps. [SEP] Nobody sleeps.'
    """
    return f"{premise}{separator}{hypothesis}"


class SklearnVictim:
    """A fitted scikit-learn classifier on raw strings (a ``Pipeline`` or any estimator
    with ``predict_proba`` and ``classes_``).

    Label names: by default the pipeline's ``classes_``, stringified, in its order. If
    ``label_names`` is given and is a permutation of the stringified ``classes_``, the
    probability columns are reordered to follow ``label_names`` (a pipeline fitted on
    ``"pos"``/``"neg"`` strings can match a data set's label order). Otherwise
    ``label_names`` must have one name per class and names ``classes_`` in order (a
    pipeline fitted on integer labels 0..L-1 takes the data set's names).

    Pairs: each text is sent as ``str(text)``; a premise/hypothesis pair is sent as
    :func:`join_pair` (``premise + pair_separator + hypothesis``), so a pair pipeline
    must be fitted on strings joined the same way.
    """

    def __init__(
        self,
        pipeline: Any,
        label_names: Sequence[str] | None = None,
        *,
        pair_separator: str = PAIR_SEPARATOR,
        name: str | None = None,
    ) -> None:
        if isinstance(pipeline, (str, bytes)) or hasattr(pipeline, "__fspath__"):
            raise ConfigError(
                "The 'pipeline' parameter of SklearnVictim must be a fitted scikit-learn "
                f"object, not a path ({pipeline!r}). textrobust does not unpickle files; "
                "load the pipeline yourself from a source you trust and pass the object."
            )
        if not callable(getattr(pipeline, "predict_proba", None)):
            raise ConfigError(
                f"The 'pipeline' parameter of SklearnVictim must have a predict_proba method. "
                f"Got {type(pipeline).__name__}, which has none (use a probabilistic "
                f"classifier such as LogisticRegression, or calibrate it)."
            )
        classes = getattr(pipeline, "classes_", None)
        if classes is None:
            raise VictimError(
                f"The {type(pipeline).__name__} passed to SklearnVictim is not fitted (it has "
                f"no classes_). Fit it on raw strings before wrapping it."
            )
        if not isinstance(pair_separator, str):
            raise ConfigError(
                f"The 'pair_separator' parameter of SklearnVictim must be a str. "
                f"Got {pair_separator!r} instead."
            )
        class_names = tuple(str(c) for c in classes)
        if len(set(class_names)) != len(class_names):
            raise VictimError(
                f"The pipeline's classes_ {list(classes)!r} do not stay distinct as strings; "
                f"pass label_names explicitly."
            )
        self.pipeline = pipeline
        self.pair_separator = pair_separator
        self.name = name if name is not None else _describe(pipeline)
        self.classes = class_names
        if label_names is None:
            self._label_names = class_names
            self._order = np.arange(len(class_names))
        else:
            names = check_label_names(label_names, "SklearnVictim")
            if set(names) == set(class_names):
                self._label_names = names
                self._order = np.array([class_names.index(n) for n in names])
            elif len(names) == len(class_names):
                self._label_names = names
                self._order = np.arange(len(class_names))
            else:
                raise ConfigError(
                    f"The 'label_names' parameter of SklearnVictim must name the pipeline's "
                    f"{len(class_names)} classes {list(class_names)} (a reordering of them, or "
                    f"one name per class in that order). Got {names!r} instead."
                )

    @property
    def label_names(self) -> tuple[str, ...]:
        return self._label_names

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(pairs=True)

    def __repr__(self) -> str:
        return f"SklearnVictim(name={self.name!r}, label_names={self._label_names!r})"

    def render(self, text: Text) -> str:
        """The string the pipeline receives for ``text``."""
        if text.is_pair:
            if len(text.columns) != 2:
                raise VictimError(
                    f"SklearnVictim joins two columns; got a text with {len(text.columns)}."
                )
            return join_pair(*text.columns, separator=self.pair_separator)
        return str(text)

    def probabilities(self, texts: Sequence[Text | str]) -> np.ndarray:
        """Probabilities [len(texts), len(label_names)], columns in label_names order."""
        texts = as_texts(texts)
        if len(texts) == 0:
            return np.empty((0, len(self._label_names)), dtype=np.float64)
        strings = [self.render(t) for t in texts]
        probs = np.asarray(self.pipeline.predict_proba(strings), dtype=np.float64)
        if probs.ndim != 2 or probs.shape[1] != len(self.classes):
            raise VictimError(
                f"{self!r}: predict_proba returned shape {probs.shape} for {len(texts)} texts; "
                f"expected ({len(texts)}, {len(self.classes)})."
            )
        return probs[:, self._order]


def _describe(pipeline: Any) -> str:
    steps = getattr(pipeline, "steps", None)
    if steps:
        return "+".join(type(step).__name__ for _, step in steps)
    return type(pipeline).__name__
