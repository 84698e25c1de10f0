"""The victim protocol: any classifier textrobust can audit.

A victim maps texts to class probabilities and declares what else it offers. Searches and
analyses never call a victim directly: they go through :class:`~textrobust.victims.query.
QueryLayer`, which batches, caches, counts and enforces the query budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from textrobust.text import Text

__all__ = ["Capabilities", "Victim", "GradientVictim", "WordIdVictim", "as_texts"]


@dataclass(frozen=True)
class Capabilities:
    """What a victim offers beyond probabilities.

    - ``gradients``: :meth:`GradientVictim.word_gradients` (gradient of the loss with
      respect to each word's input embedding), used by gradient word-importance ranking,
      attributions and sensitive-position ordering.
    - ``embedding_layer``: the victim exposes its input embedding layer (bounds, MSR).
    - ``attention``: the victim returns attention weights (attention attributions).
    - ``pairs``: the victim classifies premise/hypothesis pairs.
    """

    gradients: bool = False
    embedding_layer: bool = False
    attention: bool = False
    pairs: bool = False

    def names(self) -> list[str]:
        return [k for k, v in self.__dict__.items() if v]


@runtime_checkable
class Victim(Protocol):
    """A text classifier: ``probabilities(texts)`` returns an array [len(texts), n_labels]
    whose rows are probability distributions over ``label_names``."""

    @property
    def label_names(self) -> tuple[str, ...]: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def probabilities(self, texts: Sequence[Text]) -> np.ndarray: ...


@runtime_checkable
class GradientVictim(Victim, Protocol):
    """A victim that can differentiate its loss with respect to its word embeddings."""

    def word_gradients(self, texts: Sequence[Text], labels: Sequence[int]) -> list[np.ndarray]:
        """For each text, an array [len(text), dim]: the gradient of the cross-entropy
        loss for ``labels`` with respect to the input embedding of each *word* (sub-word
        pieces summed into their word; words the model never sees get zeros)."""
        ...


class WordIdVictim(Victim, Protocol):
    """A victim that also takes texts as rows of word ids, when its ``accepts_word_ids``
    is true (the zoo's word models, :class:`~textrobust.victims.torch.TorchVictim`)."""

    @property
    def accepts_word_ids(self) -> bool: ...

    def probabilities_of_ids(self, ids: np.ndarray) -> np.ndarray: ...


def as_texts(texts: Sequence[Text | str]) -> list[Text]:
    """``texts`` as :class:`Text` objects: every victim accepts plain strings too.

    Anything else is a :class:`~textrobust.errors.ConfigError` naming the first bad item's
    index and type (it used to surface as an ``AttributeError`` deep in the query layer).
    """
    from textrobust.errors import ConfigError

    if isinstance(texts, (str, Text)):
        raise ConfigError("probabilities() takes a list of texts; wrap a single text in a list: [text].")
    try:
        items = list(texts)
    except TypeError:
        raise ConfigError(f"probabilities() takes a list of texts (Text objects or strings). "
                          f"Got {type(texts).__name__} instead.") from None
    out: list[Text] = []
    for index, text in enumerate(items):
        if type(text) is Text or isinstance(text, Text):
            out.append(text)
        elif isinstance(text, str):
            out.append(Text.from_string(text))
        else:
            shown = repr(text)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ConfigError(f"probabilities() takes Text objects or strings; item {index} of the "
                              f"{len(items)} texts is of type {type(text).__name__} ({shown}).")
    return out
