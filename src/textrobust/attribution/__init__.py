"""Attributions: how much each word of a text counts for a victim's label, and how far two
explanations are from each other.

Ivankay et al., "Estimating the Adversarial Robustness of Attributions in Text with
Transformers" (../shared/papers/attribution-robustness-tea.txt). Methods
(:mod:`textrobust.attribution.methods`) follow Captum's verb,
``Method(model).attribute(texts, labels) -> [one value per word]``; :data:`ATTRIBUTIONS`
names them and :func:`attribution_for` builds one for a victim. Distances
(:mod:`textrobust.attribution.distances`) compare two maps of the same words.

>>> ATTRIBUTIONS.names()
['attention', 'integrated_gradients', 'kernel_shap', 'occlusion', 'saliency']
>>> round(pcc_distance([0.1, 0.5, 0.2], [0.1, 0.5, 0.2]), 6)
0.0

This package sits between the victims and the attack engine: it imports only victims,
text, errors, config and registry. Captum and torch are imported when a method runs.
"""

from __future__ import annotations

from typing import Any

from textrobust.attribution.distances import (
    AttributionDistance,
    attribution_distance,
    kendall_distance,
    pcc,
    pcc_distance,
    spearman_distance,
    top_k_distance,
)
from textrobust.attribution.methods import (
    Attention,
    AttributionMethod,
    AttributionStats,
    BaseAttribution,
    IntegratedGradients,
    KernelShap,
    Occlusion,
    Saliency,
)
from textrobust.errors import ConfigError
from textrobust.registry import Registry

__all__ = [
    "ATTRIBUTIONS",
    "Attention",
    "AttributionDistance",
    "AttributionMethod",
    "AttributionStats",
    "BaseAttribution",
    "IntegratedGradients",
    "KernelShap",
    "Occlusion",
    "Saliency",
    "attribution_distance",
    "attribution_for",
    "kendall_distance",
    "pcc",
    "pcc_distance",
    "spearman_distance",
    "top_k_distance",
]

#: Attribution methods by name: ``ATTRIBUTIONS.get("saliency")(layer, **settings)``.
ATTRIBUTIONS: Registry[type[BaseAttribution]] = Registry("attribution method")
ATTRIBUTIONS.add("saliency", Saliency, "Captum Saliency on the input embeddings (|gradient|, summed per word)")
ATTRIBUTIONS.add("integrated_gradients", IntegratedGradients,
                 "Captum Integrated Gradients on the input embeddings from a zero baseline (signed, per word)")
ATTRIBUTIONS.add("attention", Attention, "attention each word receives (last layer, mean over heads and queries)")
ATTRIBUTIONS.add("occlusion", Occlusion, "black-box: Captum FeatureAblation, each word replaced by 'unk'")
ATTRIBUTIONS.add("kernel_shap", KernelShap, "black-box: Captum KernelShap over word presence")

#: What ``attribution_for(..., "auto")`` picks for a victim without gradients.
BLACK_BOX_DEFAULT = "occlusion"


def attribution_for(model: Any, method: str = "auto", **settings: Any) -> BaseAttribution:
    """The attribution ``method`` for ``model`` (a query layer or a victim). ``"auto"``:
    saliency when the victim's embeddings can be differentiated, otherwise occlusion
    (black-box), so every victim can be attributed."""
    if method == "auto":
        from textrobust.attribution.embedded import supports_embeddings

        from textrobust.victims.query import QueryLayer

        victim = model.victim if isinstance(model, QueryLayer) else model
        method = "saliency" if supports_embeddings(victim) else BLACK_BOX_DEFAULT
    if method not in ATTRIBUTIONS:
        raise ConfigError(
            f"The 'attribution' parameter must be 'auto' or one of {ATTRIBUTIONS.names()}. Got {method!r} instead."
        )
    return ATTRIBUTIONS.get(method)(model, **settings)
