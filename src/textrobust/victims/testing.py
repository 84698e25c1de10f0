"""Test doubles with closed-form answers, and the contract every victim must satisfy.

- :class:`KeywordVictim` and :class:`WordListVictim` are tiny hand-written classifiers
  whose probabilities and word gradients are known exactly (like Captum's
  ``BasicModel*``), so an attack or an attribution can be checked against arithmetic.
- :func:`check_victim` runs the victim contract (shapes, distributions, determinism,
  batch independence, empty input, gradients, pairs) on any victim, raising
  :class:`ContractError` with the failed check named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from textrobust.errors import CapabilityError, ConfigError, VictimError
from textrobust.text import Text
from textrobust.victims.function import check_label_names, softmax
from textrobust.victims.protocol import Capabilities, GradientVictim, Victim

__all__ = ["ContractError", "KeywordVictim", "WordListVictim", "check_victim"]


class ContractError(VictimError):
    """A victim broke the victim contract; ``check`` names the rule it broke."""

    def __init__(self, victim: object, check: str, detail: str) -> None:
        self.check = check
        self.detail = detail
        super().__init__(f"{victim!r} breaks the victim contract [{check}]: {detail}")


# ---- closed-form classifiers ------------------------------------------------------------
class KeywordVictim:
    """A multi-class keyword counter with known probabilities and gradients.

    Each word (lower-cased) of a text adds ``1/temperature`` to the logit of every label
    whose keyword list holds it; probabilities are the softmax of these logits, so for a
    text with ``c[l]`` keywords of label ``l``::

        p[l] = exp(c[l] / T) / sum_k exp(c[k] / T)

    A text without keywords gets the uniform distribution. Pairs are read as one bag of
    words over both columns.

    Gradients (``gradients=True``): the model is linear in a one-hot word embedding
    ``e(w)[l] = 1 if w is a keyword of l`` (dimension = number of labels), logits =
    ``sum_i e(w_i) / T``; so the cross-entropy gradient for label ``y`` with respect to
    every word's embedding is the same vector ``(p - onehot(y)) / T``. Gradient x input,
    ``e(w_i) . grad``, then ranks words exactly by how much they support ``y``.

    >>> v = KeywordVictim({"sport": ["goal", "match"], "politics": ["vote"]})
    >>> v.counts(Text.from_string("A late goal won the match."))
    (2, 0)
    >>> v.probabilities([Text.from_string("Vote now")]).round(3).tolist()
    [[0.269, 0.731]]
    """

    def __init__(
        self,
        keywords_per_label: Mapping[str, Iterable[str]],
        *,
        temperature: float = 1.0,
        gradients: bool = True,
        name: str | None = None,
    ) -> None:
        if not isinstance(keywords_per_label, Mapping) or not keywords_per_label:
            raise ConfigError(
                f"The 'keywords_per_label' parameter of {type(self).__name__} must be a "
                f"non-empty mapping from label name to words. Got {keywords_per_label!r} instead."
            )
        self._label_names = check_label_names(list(keywords_per_label), type(self).__name__)
        if not isinstance(temperature, (int, float)) or not temperature > 0:
            raise ConfigError(
                f"The 'temperature' parameter of {type(self).__name__} must be a number > 0. "
                f"Got {temperature!r} instead."
            )
        self.temperature = float(temperature)
        self.keywords: tuple[frozenset[str], ...] = tuple(
            frozenset(_words_of(words, label)) for label, words in keywords_per_label.items()
        )
        self.gradients = bool(gradients)
        self.name = name if name is not None else type(self).__name__

    @property
    def label_names(self) -> tuple[str, ...]:
        return self._label_names

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(gradients=self.gradients, pairs=True)

    def __repr__(self) -> str:
        sizes = {n: len(k) for n, k in zip(self._label_names, self.keywords)}
        return f"KeywordVictim(keywords={sizes}, temperature={self.temperature})"

    def embedding(self, word: str) -> np.ndarray:
        """The word's one-hot label embedding (dimension = number of labels)."""
        w = word.lower()
        return np.array([1.0 if w in k else 0.0 for k in self.keywords])

    def counts(self, text: Text) -> tuple[int, ...]:
        """How many words of ``text`` are keywords of each label."""
        return tuple(sum(1 for w in text.words if w.lower() in k) for k in self.keywords)

    def logits(self, texts: Sequence[Text]) -> np.ndarray:
        """Logits [len(texts), len(label_names)]: keyword counts / temperature."""
        out = np.zeros((len(texts), len(self._label_names)), dtype=np.float64)
        for i, text in enumerate(texts):
            out[i] = np.asarray(self.counts(text), dtype=np.float64) / self.temperature
        return out

    def probabilities(self, texts: Sequence[Text]) -> np.ndarray:
        if len(texts) == 0:
            return np.empty((0, len(self._label_names)), dtype=np.float64)
        return softmax(self.logits(texts))

    def word_gradients(self, texts: Sequence[Text], labels: Sequence[int]) -> list[np.ndarray]:
        """Closed form: every word of a text gets ``(p - onehot(label)) / temperature``."""
        if not self.gradients:
            raise CapabilityError(f"{self!r} was built with gradients=False.")
        if len(labels) != len(texts):
            raise ConfigError(
                f"The 'labels' parameter of word_gradients needs one label per text "
                f"({len(texts)}). Got {len(labels)}."
            )
        n = len(self._label_names)
        probs = self.probabilities(texts)
        out = []
        for text, label, p in zip(texts, labels, probs):
            if not isinstance(label, (int, np.integer)) or not 0 <= label < n:
                raise ConfigError(
                    f"The 'labels' parameter of word_gradients must hold label indices in "
                    f"[0, {n}). Got {label!r}."
                )
            grad = (p - np.eye(n)[label]) / self.temperature
            out.append(np.tile(grad, (len(text), 1)))
        return out


class WordListVictim(KeywordVictim):
    """A two-class sentiment lexicon counter with a known logistic.

    ``score = #positive words - #negative words`` (lower-cased matches) and
    ``P(positive) = 1 / (1 + exp(-score / temperature))``; the first label is the
    negative one. It is :class:`KeywordVictim` with two keyword lists.

    >>> v = WordListVictim(["good", "great"], ["bad"])
    >>> t = Text.from_string("A good, great film with a bad ending.")
    >>> v.score(t), round(v.probability_positive(v.score(t)), 4)
    (1, 0.7311)
    """

    def __init__(
        self,
        positive_words: Iterable[str],
        negative_words: Iterable[str],
        label_names: Sequence[str] = ("negative", "positive"),
        *,
        temperature: float = 1.0,
        gradients: bool = True,
    ) -> None:
        names = check_label_names(label_names, "WordListVictim")
        if len(names) != 2:
            raise ConfigError(
                f"The 'label_names' parameter of WordListVictim must hold two names "
                f"(negative first, then positive). Got {names!r} instead."
            )
        super().__init__(
            {names[0]: list(negative_words), names[1]: list(positive_words)},
            temperature=temperature,
            gradients=gradients,
        )

    def __repr__(self) -> str:
        return (
            f"WordListVictim(positive={len(self.keywords[1])} words, "
            f"negative={len(self.keywords[0])} words, label_names={self._label_names!r}, "
            f"temperature={self.temperature})"
        )

    def score(self, text: Text) -> int:
        """#positive words - #negative words."""
        negative, positive = self.counts(text)
        return positive - negative

    def probability_positive(self, score: float) -> float:
        """The logistic the victim applies: ``1 / (1 + exp(-score / temperature))``."""
        return float(1.0 / (1.0 + np.exp(-score / self.temperature)))


def _words_of(words: Iterable[str], label: str) -> list[str]:
    if isinstance(words, str):
        raise ConfigError(
            f"The keywords of label {label!r} must be a collection of words, not the single "
            f"string {words!r}."
        )
    out = []
    for w in words:
        if not isinstance(w, str) or not w:
            raise ConfigError(f"The keywords of label {label!r} must be non-empty strings. Got {w!r}.")
        out.append(w.lower())
    return out


# ---- the contract -----------------------------------------------------------------------
def check_victim(
    victim: Any, texts: Sequence[Text], *, atol: float = 1e-5
) -> tuple[str, ...]:
    """Check that ``victim`` keeps the victim contract on ``texts``; return the names of
    the checks that ran.

    Checks: ``protocol`` (label_names, capabilities, probabilities exist), ``repr`` (shows
    its configuration, not ``<... object at 0x...>``), ``label_names`` (a non-empty tuple
    of distinct str), ``shape`` ([n, L]), ``distribution`` (finite, non-negative, rows
    sum to 1 within ``atol``), ``deterministic`` (the same call twice gives equal arrays),
    ``batch_independence`` (each text scored alone, and the batch reversed, match the
    batch within ``atol``), ``empty`` (no texts give shape (0, L)); with
    ``capabilities.gradients``: ``gradients`` (one finite array [len(text), dim] per
    text); with ``embedding_layer`` / ``attention``: ``embedding_layer()`` /
    ``attentions(texts)`` exist; ``pairs``: with ``capabilities.pairs`` a pair text is
    scored (built from ``texts`` if none is a pair), without it no text may be a pair.

    Give at least two texts, of the kind the victim classifies (pairs for a pair-only
    victim). Raises :class:`ContractError` naming the failed check.
    """
    if isinstance(texts, (str, Text)) or len(texts) < 2 or not all(isinstance(t, Text) for t in texts):
        raise ConfigError(
            f"The 'texts' parameter of check_victim must be a sequence of at least two Text "
            f"objects. Got {texts!r} instead."
        )
    texts = list(texts)
    ran: list[str] = []

    def fail(check: str, detail: str) -> ContractError:
        return ContractError(victim, check, detail)

    # protocol and surface
    if not isinstance(victim, Victim):
        raise fail("protocol", "it needs label_names, capabilities and probabilities(texts).")
    ran.append("protocol")
    shown = repr(victim)
    if " object at 0x" in shown:
        raise fail("repr", f"repr() should show the victim's configuration; got {shown}.")
    ran.append("repr")
    names = victim.label_names
    if (
        not isinstance(names, tuple)
        or not names
        or not all(isinstance(n, str) for n in names)
        or len(set(names)) != len(names)
    ):
        raise fail("label_names", f"label_names must be a non-empty tuple of distinct str; got {names!r}.")
    ran.append("label_names")
    n_labels = len(names)
    caps = victim.capabilities
    if not isinstance(caps, Capabilities):
        raise fail("protocol", f"capabilities must be a Capabilities; got {caps!r}.")

    # probabilities
    probs = _probabilities(victim, texts, fail, "shape")
    _check_distribution(probs, len(texts), n_labels, atol, fail)
    ran += ["shape", "distribution"]
    again = _probabilities(victim, texts, fail, "deterministic")
    if not np.array_equal(probs, again):
        worst = float(np.max(np.abs(probs - again))) if probs.shape == again.shape else float("nan")
        raise fail("deterministic", f"two identical calls differ (max difference {worst:.3g}).")
    ran.append("deterministic")
    for i, text in enumerate(texts):
        alone = _probabilities(victim, [text], fail, "batch_independence")
        if alone.shape != (1, n_labels) or not np.allclose(alone[0], probs[i], rtol=0, atol=atol):
            raise fail(
                "batch_independence",
                f"text {i} ({text!r}) scored alone gives {alone.tolist()}, in the batch "
                f"{probs[i].tolist()} (atol {atol}): scores must not depend on batch neighbours.",
            )
    reverse = _probabilities(victim, texts[::-1], fail, "batch_independence")[::-1]
    if not np.allclose(reverse, probs, rtol=0, atol=atol):
        raise fail("batch_independence", f"reversing the batch changes scores by up to "
                   f"{float(np.max(np.abs(reverse - probs))):.3g} (atol {atol}).")
    ran.append("batch_independence")
    empty = _probabilities(victim, [], fail, "empty")
    if empty.shape != (0, n_labels):
        raise fail("empty", f"no texts must give shape (0, {n_labels}); got {empty.shape}.")
    ran.append("empty")

    # capabilities
    if caps.gradients:
        if not isinstance(victim, GradientVictim):
            raise fail("gradients", "capabilities.gradients is set but there is no word_gradients(texts, labels).")
        _check_gradients(victim, texts, [int(k) for k in probs.argmax(axis=1)], fail)
        ran.append("gradients")
    if caps.embedding_layer:
        if not callable(getattr(victim, "embedding_layer", None)):
            raise fail("embedding_layer", "capabilities.embedding_layer is set but there is no embedding_layer().")
        if victim.embedding_layer() is None:
            raise fail("embedding_layer", "embedding_layer() returned None.")
        ran.append("embedding_layer")
    if caps.attention:
        if not callable(getattr(victim, "attentions", None)):
            raise fail("attention", "capabilities.attention is set but there is no attentions(texts).")
        weights = _call(victim.attentions, texts[:2], fail, "attention")
        if len(weights) != 2 or not all(np.all(np.isfinite(np.asarray(w))) for w in weights):
            raise fail("attention", "attentions(texts) must return one finite array per text.")
        ran.append("attention")
    pairs = [t for t in texts if t.is_pair]
    if caps.pairs:
        if not pairs:
            pairs = [Text.from_pair(str(a), str(b)) for a, b in zip(texts, texts[1:] + texts[:1])]
        pair_probs = _probabilities(victim, pairs, fail, "pairs")
        _check_distribution(pair_probs, len(pairs), n_labels, atol, fail, check="pairs")
        if caps.gradients:
            _check_gradients(victim, pairs, [0] * len(pairs), fail, check="pairs")
        ran.append("pairs")
    elif pairs:
        raise fail("pairs", f"capabilities.pairs is False but {len(pairs)} of the texts are pairs.")
    return tuple(ran)


def _call(method: Any, arg: Any, fail: Any, check: str, *more: Any) -> Any:
    try:
        return method(arg, *more)
    except ContractError:
        raise
    except Exception as error:  # the contract reports any failure of the victim
        raise fail(check, f"{type(error).__name__}: {error}") from error


def _probabilities(victim: Any, texts: list[Text], fail: Any, check: str) -> np.ndarray:
    raw = _call(victim.probabilities, texts, fail, check)
    try:
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise fail(check, f"probabilities() returned {type(raw).__name__}, not a numeric array.") from error


def _check_distribution(
    probs: np.ndarray, n: int, n_labels: int, atol: float, fail: Any, check: str | None = None
) -> None:
    if probs.shape != (n, n_labels):
        raise fail(check or "shape", f"probabilities of {n} texts have shape {probs.shape}; expected ({n}, {n_labels}).")
    if not np.all(np.isfinite(probs)):
        raise fail(check or "distribution", "probabilities contain NaN or infinity.")
    if np.any(probs < 0):
        raise fail(check or "distribution", f"probabilities contain negative values (min {probs.min():.3g}).")
    sums = probs.sum(axis=1)
    if not np.allclose(sums, 1.0, rtol=0, atol=atol):
        raise fail(
            check or "distribution",
            f"rows must sum to 1 (atol {atol}); got sums {sums[:5].round(6).tolist()}. "
            f"If these are logits, apply a softmax (FunctionVictim: outputs='logits').",
        )


def _check_gradients(
    victim: Any, texts: list[Text], labels: list[int], fail: Any, check: str = "gradients"
) -> None:
    grads = _call(victim.word_gradients, texts, fail, check, labels)
    if not isinstance(grads, (list, tuple)) or len(grads) != len(texts):
        raise fail(check, f"word_gradients must return a list of {len(texts)} arrays; got {type(grads).__name__}.")
    dims = set()
    for i, (text, grad) in enumerate(zip(texts, grads)):
        array = np.asarray(grad)
        if array.ndim != 2 or array.shape[0] != len(text):
            raise fail(check, f"gradient {i} has shape {array.shape}; expected ({len(text)}, dim), one row per word.")
        if not np.all(np.isfinite(array)):
            raise fail(check, f"gradient {i} contains NaN or infinity.")
        dims.add(array.shape[1])
    if len(dims) > 1:
        raise fail(check, f"gradients have different widths across texts: {sorted(dims)}.")
