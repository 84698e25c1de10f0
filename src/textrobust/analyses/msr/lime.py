"""LIME word weights through Captum's ``Lime``, to compare with the saliency of the bounds.

La Malfa et al. (2020), Section 3.3, compare the words their MSR lower bounds single out
with LIME's (Ribeiro et al. 2016). Here LIME is Captum's :class:`captum.attr.Lime` on the
victim's ``forward_embedded``: one interpretable feature per word (a feature mask over the
word's embedding), a word switched off is replaced by the padding vector (zeros), the
surrogate a linear regression (Captum's default Lasso zeroes most words on short texts).
The agreement is Spearman's rank correlation between |LIME weight| and the bounds'
saliency ``-lower bound`` (a word whose certified radius is small matters most).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["lime_weights", "rank_agreement"]


def lime_weights(module: Any, ids: Sequence[int], label: int, *, samples: int = 200, seed: int = 0) -> np.ndarray:
    """LIME's weight of each token of ``ids`` for the probability of ``label``."""
    import torch
    from captum._utils.models.linear_model import SkLearnLinearRegression
    from captum.attr import Lime

    torch.manual_seed(seed)
    module = module.eval()
    ids_t = torch.as_tensor([list(ids)], dtype=torch.long)
    mask = torch.ones_like(ids_t, dtype=torch.bool)
    with torch.no_grad():
        emb = module.embed(ids_t)

    def forward(e: torch.Tensor) -> torch.Tensor:
        return torch.softmax(module.forward_embedded(e, mask.expand(e.shape[0], -1)), dim=-1)[:, label]

    length, dim = emb.shape[1], emb.shape[2]
    feature_mask = torch.arange(length).unsqueeze(-1).expand(length, dim).unsqueeze(0)
    lime = Lime(forward, interpretable_model=SkLearnLinearRegression())
    with torch.no_grad():
        attr = lime.attribute(emb, baselines=torch.zeros_like(emb), feature_mask=feature_mask,
                              n_samples=samples, perturbations_per_eval=min(samples, 64))
    return attr[0, :, 0].detach().double().numpy()


def rank_agreement(lime: Sequence[float], lower: Sequence[float]) -> float:
    """Spearman's correlation of |LIME weight| with ``-lower`` (NaN for fewer than 3 words
    or a constant ranking)."""
    from scipy.stats import spearmanr

    a, b = np.abs(np.asarray(lime, dtype=np.float64)), -np.asarray(lower, dtype=np.float64)
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(spearmanr(a, b).statistic)
