"""Attribution methods: one value per word of a text, for its label.

Ivankay et al., "Estimating the Adversarial Robustness of Attributions in Text with
Transformers" (../shared/papers/attribution-robustness-tea.txt), section 3: Saliency
(Simonyan et al. 2013), Integrated Gradients (Sundararajan et al. 2017) and attention
(Bahdanau et al. 2014). Every method follows Captum's one verb,
``Method(model).attribute(texts, labels)``, and returns one float64 array per text with
one value per word.

- :class:`Saliency` and :class:`IntegratedGradients` run Captum on the victim's *input
  embeddings* (fed to the model as a tensor, see :mod:`textrobust.attribution.embedded`),
  for the label's logit; a token's attribution is the sum over the embedding dimensions,
  and a word's is the sum over its tokens (sub-word victims such as MiniLM: a word's
  pieces are summed). Saliency is Captum's default ``|gradient|``, so it is >= 0;
  Integrated Gradients uses the zero embedding as baseline and is signed.
- :class:`Attention`: the victim's word-to-word attention (``victim.attentions``), last
  layer, averaged over heads and over query words: the attention each word *receives*.
  For the zoo's LSTMAtt (one additive attention vector) this is exactly that vector.
- :class:`Occlusion` and :class:`KernelShap`: black-box, for victims without gradients
  (scikit-learn pipelines, functions). Captum's ``FeatureAblation`` / ``KernelShap`` over
  a word-presence vector with one feature per word; an absent word is replaced by
  ``unk_token``. Target: the label's probability. Their model calls go through the query
  layer (counted, cached, budgeted).

Departures: the paper does not say on which output (logit or probability) gradients are
taken, nor how embedding dimensions are reduced; we use the logit and the sum (the usual
choice of Captum's text tutorials). Integrated Gradients defaults to 20 steps instead of
Captum's 50, to keep TEA's many calls affordable on a CPU (set ``n_steps``).

Every method is batched (``batch_size`` texts per model call) and caches its answers by
``(text, label, zeroed word)``; :meth:`BaseAttribution.stats` counts calls and seconds.
``zeroed`` (TEA's ranking, Algorithm 1 line 3) zeroes a word's embedding for the gradient
methods; the other methods replace the word by ``unk_token`` (the text-level equivalent).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from textrobust.errors import CapabilityError, ConfigError, MissingDependencyError
from textrobust.text import WORD_PATTERN, Text
from textrobust.victims.protocol import AttentionVictim
from textrobust.victims.query import QueryLayer

__all__ = [
    "Attention",
    "AttributionMethod",
    "AttributionStats",
    "BaseAttribution",
    "IntegratedGradients",
    "KernelShap",
    "Occlusion",
    "Saliency",
]


class AttributionMethod(StrEnum):
    """The attribution methods by name."""

    SALIENCY = "saliency"
    INTEGRATED_GRADIENTS = "integrated_gradients"
    ATTENTION = "attention"
    OCCLUSION = "occlusion"
    KERNEL_SHAP = "kernel_shap"


@dataclass(frozen=True)
class AttributionStats:
    """Counters of one attribution method: texts asked for (cache hits included), texts
    attributed, cache hits, and wall seconds spent attributing."""

    requested: int
    computed: int
    cache_hits: int
    seconds: float


def _captum() -> Any:
    try:
        import captum.attr
    except ImportError:
        raise MissingDependencyError("captum", "attributions", "pip install captum==0.9.0") from None
    return captum.attr


class BaseAttribution:
    """Batching, caching and counting shared by every method; subclasses fill
    :meth:`_attribute` (a batch of texts, no cache) and may set ``embedding_zeroing``.

    ``model``: a :class:`~textrobust.victims.query.QueryLayer` (black-box methods query
    through it) or a victim (wrapped in a new query layer).
    """

    #: The method's name (:class:`AttributionMethod`).
    method: AttributionMethod
    #: True when ``zeroed`` words get zero embeddings (else: replaced by ``unk_token``).
    embedding_zeroing: bool = False

    def __init__(self, model: Any, *, batch_size: int = 16, cache_size: int = 20_000, unk_token: str = "unk") -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(
                f"The 'batch_size' parameter of {type(self).__name__} must be an int >= 1. Got {batch_size!r} instead."
            )
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ConfigError(
                f"The 'cache_size' parameter of {type(self).__name__} must be an int >= 0. Got {cache_size!r} instead."
            )
        if not isinstance(unk_token, str) or WORD_PATTERN.fullmatch(unk_token) is None:
            raise ConfigError(
                f"The 'unk_token' parameter of {type(self).__name__} must be one word. Got {unk_token!r} instead."
            )
        self.layer = model if isinstance(model, QueryLayer) else QueryLayer(model)
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.unk_token = unk_token
        self._cache: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._requested = self._computed = self._hits = 0
        self._seconds = 0.0
        self._check()

    @property
    def victim(self) -> Any:
        return self.layer.victim

    def _check(self) -> None:
        """Raise CapabilityError when the victim cannot be attributed by this method."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.victim!r}{self._settings()})"

    def _settings(self) -> str:
        return ""

    def stats(self) -> AttributionStats:
        return AttributionStats(self._requested, self._computed, self._hits, self._seconds)

    def attribute(
        self, texts: Sequence[Text], labels: Sequence[int], zeroed: Sequence[int | None] | None = None
    ) -> list[np.ndarray]:
        """One float64 array of ``len(text)`` values per text, for ``labels[i]``.

        ``zeroed[i]`` (optional) is a word of ``texts[i]`` to remove first (zero embedding
        or ``unk_token``, see the module docstring)."""
        texts = list(texts)
        labels = [int(y) for y in labels]
        zeroed = list(zeroed) if zeroed is not None else [None] * len(texts)
        if len(labels) != len(texts) or len(zeroed) != len(texts):
            raise ConfigError(
                f"attribute() needs one label (and one zeroed word) per text. Got {len(texts)} texts, "
                f"{len(labels)} labels and {len(zeroed)} zeroed words."
            )
        n_labels = self.layer.num_labels
        for i, (text, label, z) in enumerate(zip(texts, labels, zeroed)):
            if not isinstance(text, Text):
                raise ConfigError(f"attribute() takes Text objects. Got {type(text).__name__} at position {i}.")
            if not 0 <= label < n_labels:
                raise ConfigError(f"Labels must be in [0, {n_labels}). Got {label} at position {i}.")
            if z is not None and not 0 <= z < len(text):
                raise ConfigError(f"zeroed[{i}] = {z} is not a word of a text of {len(text)} words.")
        out: list[np.ndarray | None] = [None] * len(texts)
        todo: dict[tuple[Any, ...], list[int]] = {}
        for i, (text, label, z) in enumerate(zip(texts, labels, zeroed)):
            key = (text.key, label, z)
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                out[i] = hit
                self._hits += 1
            elif key in todo:
                todo[key].append(i)
                self._hits += 1
            else:
                todo[key] = [i]
        self._requested += len(texts)
        keys = list(todo)
        start = time.perf_counter()
        try:
            for s in range(0, len(keys), self.batch_size):
                chunk = keys[s : s + self.batch_size]
                firsts = [todo[k][0] for k in chunk]
                batch_texts = [texts[i] for i in firsts]
                batch_labels = [labels[i] for i in firsts]
                batch_zeroed = [zeroed[i] for i in firsts]
                if not self.embedding_zeroing:
                    batch_texts = [t if z is None else t.replace(z, self.unk_token)
                                   for t, z in zip(batch_texts, batch_zeroed)]
                    batch_zeroed = [None] * len(batch_texts)
                found = self._attribute(batch_texts, batch_labels, batch_zeroed)
                for key, values, text in zip(chunk, found, batch_texts):
                    values = np.asarray(values, dtype=np.float64).reshape(-1)
                    if values.shape != (len(text),) or not np.all(np.isfinite(values)):
                        raise CapabilityError(
                            f"{self!r} returned {values.shape[0]} values (or non-finite ones) for a text of "
                            f"{len(text)} words."
                        )
                    values.setflags(write=False)
                    for i in todo[key]:
                        out[i] = values
                    self._store(key, values)
                self._computed += len(chunk)
        finally:
            self._seconds += time.perf_counter() - start
        return [o for o in out if o is not None]  # every slot is filled above

    def _store(self, key: tuple[Any, ...], values: np.ndarray) -> None:
        if self.cache_size == 0:
            return
        self._cache[key] = values
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _attribute(self, texts: list[Text], labels: list[int], zeroed: list[int | None]) -> list[np.ndarray]:
        raise NotImplementedError


# ---- gradient methods (Captum on the embeddings) ----------------------------------------------------
class _EmbeddingAttribution(BaseAttribution):
    embedding_zeroing = True

    def _check(self) -> None:
        from textrobust.attribution.embedded import supports_embeddings

        if not supports_embeddings(self.victim):
            raise CapabilityError(
                f"{type(self).__name__} needs a victim whose embeddings can be differentiated (a zoo "
                f"model or a Hugging Face folder with a fast tokenizer); {self.victim!r} is not one. "
                f"Use the 'occlusion' or 'kernel_shap' attribution (black-box) instead."
            )

    def _attribute(self, texts: list[Text], labels: list[int], zeroed: list[int | None]) -> list[np.ndarray]:
        import torch

        from textrobust.attribution.embedded import embedded_batch

        batch = embedded_batch(self.victim, texts, zeroed)
        target = torch.as_tensor(labels, dtype=torch.long, device=batch.embeddings.device)
        with torch.enable_grad():
            token_attr = self._captum(batch, target)  # [B, T, D]
        per_token = token_attr.detach().to(torch.float64).sum(dim=-1).cpu().numpy()  # [B, T]
        return [batch.words[i] @ per_token[i] for i in range(len(texts))]

    def _captum(self, batch: Any, target: Any) -> Any:
        raise NotImplementedError


class Saliency(_EmbeddingAttribution):
    """Captum ``Saliency`` (``|d logit_label / d embedding|``) summed over the embedding
    dimensions and over a word's tokens (Simonyan et al. 2013; Ivankay et al. section 3)."""

    method = AttributionMethod.SALIENCY

    def _captum(self, batch: Any, target: Any) -> Any:
        saliency = _captum().Saliency(batch.forward)
        return saliency.attribute(batch.embeddings.clone().requires_grad_(True), target=target,
                                  abs=True, additional_forward_args=batch.extra)


class IntegratedGradients(_EmbeddingAttribution):
    """Captum ``IntegratedGradients`` from the zero embedding, ``n_steps`` Gauss-Legendre
    steps (Sundararajan et al. 2017; Ivankay et al. section 3), summed over the embedding
    dimensions and over a word's tokens."""

    method = AttributionMethod.INTEGRATED_GRADIENTS

    def __init__(self, model: Any, *, n_steps: int = 20, internal_batch_size: int = 256, **settings: Any) -> None:
        if isinstance(n_steps, bool) or not isinstance(n_steps, int) or n_steps < 1:
            raise ConfigError(f"The 'n_steps' parameter of IntegratedGradients must be an int >= 1. Got {n_steps!r}.")
        if isinstance(internal_batch_size, bool) or not isinstance(internal_batch_size, int) or internal_batch_size < 1:
            raise ConfigError(
                f"The 'internal_batch_size' parameter of IntegratedGradients must be an int >= 1. "
                f"Got {internal_batch_size!r}."
            )
        self.n_steps = n_steps
        self.internal_batch_size = internal_batch_size
        super().__init__(model, **settings)

    def _settings(self) -> str:
        return f", n_steps={self.n_steps}"

    def _captum(self, batch: Any, target: Any) -> Any:
        import torch

        ig = _captum().IntegratedGradients(batch.forward)
        inputs = batch.embeddings
        return ig.attribute(inputs, baselines=torch.zeros_like(inputs), target=target, n_steps=self.n_steps,
                            additional_forward_args=batch.extra,
                            internal_batch_size=max(self.internal_batch_size, len(target)))


# ---- attention --------------------------------------------------------------------------------------
class Attention(BaseAttribution):
    """The attention each word receives: ``victim.attentions`` (word to word, per layer and
    head), layer ``layer`` (default the last), averaged over heads and query words
    (Bahdanau et al. 2014; Ivankay et al. section 3). Needs the 'attention' capability."""

    method = AttributionMethod.ATTENTION

    def __init__(self, model: Any, *, layer: int = -1, **settings: Any) -> None:
        if isinstance(layer, bool) or not isinstance(layer, int):
            raise ConfigError(f"The 'layer' parameter of Attention must be an int. Got {layer!r} instead.")
        self.attention_layer = layer
        super().__init__(model, **settings)

    def _check(self) -> None:
        if not self.victim.capabilities.attention or not isinstance(self.victim, AttentionVictim):
            raise CapabilityError(
                f"Attention attributions need a victim that returns attention (the zoo transformer or "
                f"lstm_att, a Hugging Face folder); {self.victim!r} does not. Use 'saliency', "
                f"'integrated_gradients' or a black-box method."
            )

    def _attribute(self, texts: list[Text], labels: list[int], zeroed: list[int | None]) -> list[np.ndarray]:
        out = []
        victim = self.victim
        if not isinstance(victim, AttentionVictim):  # checked by _check; says so to the type checker
            raise CapabilityError(f"{victim!r} returns no attention.")
        for text, weights in zip(texts, victim.attentions(texts)):
            weights = np.asarray(weights, dtype=np.float64)  # [layers, heads, W, W]
            layers = weights.shape[0]
            if not -layers <= self.attention_layer < layers:
                raise ConfigError(f"The 'layer' parameter of Attention is {self.attention_layer}, but the victim "
                                  f"has {layers} attention layer(s).")
            chosen = weights[self.attention_layer].mean(axis=0)  # [W(query), W(key)]
            seen = chosen.sum(axis=1) > 0  # query words the model saw (not truncated)
            out.append(chosen[seen].mean(axis=0) if seen.any() else np.zeros(len(text)))
        return out


# ---- black-box methods (Captum over a word-presence vector) ------------------------------------------
class _PresenceAttribution(BaseAttribution):
    def _probabilities(self, text: Text, presence: Any) -> Any:
        import torch

        rows = presence.detach().cpu().numpy() > 0.5
        variants = [text.replace({p: self.unk_token for p in np.flatnonzero(~row).tolist()}) if not row.all() else text
                    for row in rows]
        return torch.as_tensor(self.layer.probabilities(variants), dtype=torch.float64)

    def _attribute(self, texts: list[Text], labels: list[int], zeroed: list[int | None]) -> list[np.ndarray]:
        import torch

        out = []
        for text, label in zip(texts, labels):
            presence = torch.ones((1, len(text)), dtype=torch.float64)
            mask = torch.arange(len(text)).unsqueeze(0)
            values = self._run(lambda x, t=text: self._probabilities(t, x), presence, mask, label)
            out.append(values.detach().to(torch.float64).reshape(-1).cpu().numpy())
        return out

    def _run(self, forward: Any, presence: Any, mask: Any, label: int) -> Any:
        raise NotImplementedError


class Occlusion(_PresenceAttribution):
    """Captum ``FeatureAblation`` with one feature per word: a word's attribution is the drop
    in the label's probability when it is replaced by ``unk_token`` (black-box; all of a
    text's ablations are scored in one query-layer call)."""

    method = AttributionMethod.OCCLUSION

    def _run(self, forward: Any, presence: Any, mask: Any, label: int) -> Any:
        ablation = _captum().FeatureAblation(forward)
        return ablation.attribute(presence, baselines=0.0, target=label, feature_mask=mask,
                                  perturbations_per_eval=max(1, presence.shape[1]))


class KernelShap(_PresenceAttribution):
    """Captum ``KernelShap`` with one feature per word, ``n_samples`` coalitions (absent
    words replaced by ``unk_token``), seeded by ``seed`` (black-box)."""

    method = AttributionMethod.KERNEL_SHAP

    def __init__(self, model: Any, *, n_samples: int = 64, seed: int = 0, **settings: Any) -> None:
        if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 2:
            raise ConfigError(f"The 'n_samples' parameter of KernelShap must be an int >= 2. Got {n_samples!r}.")
        self.n_samples = n_samples
        self.seed = seed
        super().__init__(model, **settings)

    def _settings(self) -> str:
        return f", n_samples={self.n_samples}, seed={self.seed}"

    def _run(self, forward: Any, presence: Any, mask: Any, label: int) -> Any:
        import torch

        shap = _captum().KernelShap(forward)
        with torch.random.fork_rng(devices=[]):  # Captum draws coalitions from torch's generator
            torch.manual_seed(self.seed)
            return shap.attribute(presence, baselines=0.0, target=label, feature_mask=mask,
                                  n_samples=self.n_samples, perturbations_per_eval=self.n_samples)
