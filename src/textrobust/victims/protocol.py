"""The victim protocol: any classifier textrobust can audit.

A victim maps texts to class probabilities and declares what else it offers. Searches and
analyses never call a victim directly: they go through :class:`~textrobust.victims.query.
QueryLayer`, which batches, caches, counts and enforces the query budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from textrobust.text import Text

__all__ = [
    "AttentionVictim",
    "BatchedVictim",
    "Capabilities",
    "EmbeddingVictim",
    "GradientVictim",
    "StandIn",
    "Victim",
    "WordIdVictim",
    "WordVocabulary",
    "as_texts",
    "embedding_victim",
    "require_embedding_victim",
    "unwrap",
]


@dataclass(frozen=True)
class Capabilities:
    """What a victim offers beyond probabilities.

    - ``gradients``: :meth:`GradientVictim.word_gradients` (gradient of the loss with
      respect to each word's input embedding), used by gradient word-importance ranking,
      attributions and sensitive-position ordering.
    - ``embedding_layer``: the victim exposes its input embedding layer (bounds, MSR);
      with one id per word it is an :class:`EmbeddingVictim` (:func:`embedding_victim`).
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


@runtime_checkable
class AttentionVictim(Victim, Protocol):
    """A victim that returns its attention weights (the ``attention`` capability)."""

    def attentions(self, texts: Sequence[Text]) -> list[np.ndarray]:
        """For each text, float32 ``[layers, heads, len(text), len(text)]``: attention from
        word to word."""
        ...


@runtime_checkable
class WordIdVictim(Victim, Protocol):
    """A victim that also takes texts as rows of word ids, when its ``accepts_word_ids``
    is true (the zoo's word models, :class:`~textrobust.victims.torch.TorchVictim`)."""

    @property
    def accepts_word_ids(self) -> bool: ...

    def probabilities_of_ids(self, ids: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class BatchedVictim(Victim, Protocol):
    """A victim that splits each call into forward passes of ``batch_size`` texts itself
    (:class:`~textrobust.victims.torch.TorchVictim`, :class:`~textrobust.victims.
    huggingface.HuggingFaceVictim`); an analysis sending hundreds of texts per call may
    run a copy with a larger ``batch_size``."""

    batch_size: int


@runtime_checkable
class StandIn(Protocol):
    """A victim that stands for another one (a lockstep run's gate member): its
    probabilities go elsewhere, but the white-box handles are those of :meth:`unwrap`."""

    def unwrap(self) -> Victim: ...


def unwrap(victim: Any) -> Any:
    """The victim behind any :class:`StandIn` (the victim itself otherwise): for code that
    needs the concrete victim's handles, e.g. a model's embeddings."""
    while isinstance(victim, StandIn):
        victim = victim.unwrap()
    return victim


@runtime_checkable
class WordVocabulary(Protocol):
    """A tokenizer that gives each word one id (the zoo's
    :class:`~textrobust.zoo.vocab.WordVocab`): ``words[i]`` is the word of id ``i``."""

    max_length: int

    @property
    def words(self) -> tuple[str, ...]: ...

    def id_of(self, word: str) -> int: ...


@runtime_checkable
class EmbeddingVictim(Victim, Protocol):
    """A white-box word model: the handles the maximal safe radius (its embedding space,
    bound propagation, LIME over word ids) and the analyses that resize its batches take
    explicitly, as Captum's layer methods take the layer. A victim offers them when it
    declares the ``embedding_layer`` capability and reads one id per word (its
    ``tokenizer`` is a :class:`WordVocabulary`): :class:`~textrobust.victims.torch.
    TorchVictim` over a zoo word model. Ask with :func:`embedding_victim`, never by probing
    attributes.

    - ``module``: the torch module (``forward(ids, mask)``, ``embedding``);
    - ``tokenizer``: its :class:`WordVocabulary`;
    - ``embedding_layer()``: the input embedding layer (``.weight`` is ``[vocab, dim]``);
    - ``encode(texts)``: token ids, mask (tensors) and each token's word (numpy);
    - ``batch_size``: texts per forward pass (an analysis may set it on a copy).
    """

    batch_size: int

    @property
    def module(self) -> Any: ...

    @property
    def tokenizer(self) -> Any: ...

    def embedding_layer(self) -> Any: ...

    def encode(self, texts: Sequence[Text]) -> tuple[Any, Any, np.ndarray]: ...


def embedding_victim(victim: Any) -> EmbeddingVictim | None:
    """``victim`` (or the victim it stands in for) as an :class:`EmbeddingVictim` when it
    declares the ``embedding_layer`` capability and gives each word one id; else None."""
    victim = unwrap(victim)
    if not isinstance(victim, EmbeddingVictim) or not victim.capabilities.embedding_layer:
        return None
    if not isinstance(victim.tokenizer, WordVocabulary):
        return None
    return victim


def require_embedding_victim(victim: Any, needed_by: str) -> EmbeddingVictim:
    """:func:`embedding_victim`, or a :class:`~textrobust.errors.CapabilityError` saying
    that ``needed_by`` needs the ``embedding_layer`` capability and a word vocabulary."""
    found = embedding_victim(victim)
    if found is None:
        from textrobust.errors import CapabilityError

        inner = unwrap(victim)
        declared = ", ".join(inner.capabilities.names()) if isinstance(inner, Victim) else "none"
        raise CapabilityError(
            f"{needed_by} needs a victim with the 'embedding_layer' capability and one id per word (a zoo word "
            f"model, TorchVictim); {inner!r} declares: {declared or 'none'}. Use a zoo model, or an analysis "
            "that needs only probabilities.")
    return found


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
