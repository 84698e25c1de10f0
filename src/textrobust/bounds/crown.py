"""CROWN-style backward linear bounds for the zoo's CNN and bag-of-words models.

Zhang et al. (2018), "Efficient Neural Network Robustness Certification with General
Activation Functions" (CROWN), in the convolutional setting of Boopathy et al. (2019),
CNN-Cert, which La Malfa et al. (2020, Section 2.3) adapt to word embeddings: only the
positions ``I`` carry a perturbation, every other word is a constant.

Both models are ``affine -> ReLU -> pool -> affine``: the CNN's pre-activations (every
filter at every window start) and the bag of words' hidden layer are *exactly* affine in
the perturbed embeddings, so their bounds are exact over the box (and over the ball); the
relaxation is only in the ReLU and the pooling:

- ReLU, lower line ``alpha * h`` with ``alpha = 1`` when ``u >= -l`` else 0 (CROWN's
  adaptive choice); upper line the chord ``u (h - l) / (u - l)``;
- max over time (CNN-Cert's max-pool), lower: the window ``t*`` with the largest lower
  bound (``max >= relu(h_t*)``); upper: when ``t*`` dominates every other window
  (``l_t* >= u_t``), the max *is* ``relu(h_t*)`` and takes the ReLU's upper line,
  otherwise the constant ``max_t relu(u_t)``.

The output layer is folded into the margin ``logit_y - logit_c`` before the backward pass,
and the resulting linear function is bounded by :func:`~textrobust.bounds.region.
lower_linear`. A bag of words without hidden layer is linear: its bound is exact up to the
box/ball relaxation. Written here because auto_LiRPA cannot be installed (its PyPI release
pins torch<1.13) and ``bound-propagation`` is GPL-3 and feed-forward only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch
import torch.nn.functional as F
from torch import nn

from textrobust.bounds.ibp import convolutions, hidden_layer, last_layer
from textrobust.bounds.region import Region, lower_linear

if TYPE_CHECKING:
    from textrobust.zoo.bow import BowClassifier
    from textrobust.zoo.cnn import CnnClassifier

__all__ = ["crown_margin_lower", "affine_preactivations"]


def affine_preactivations(model: nn.Module, kind: str, region: Region) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """``(value [N], coef [N, |I|, D], groups [P, G])``: each pre-activation as
    ``value + coef . (e - center)`` and the neurons each pooled feature is the max of
    (None for a bag of words without hidden layer)."""
    center = region.center
    length, dim = center.shape
    if kind == "cnn":
        x = center.T.unsqueeze(0)  # [1, D, T]
        values, coefs, groups = [], [], []
        offset = 0
        for conv, width in convolutions(cast("CnnClassifier", model)):  # kind is architecture_of(model)
            w = conv.weight.to(torch.float64)  # [Fn, D, W]
            bias = None if conv.bias is None else conv.bias.to(torch.float64)
            h = F.conv1d(F.pad(x, (0, width - 1)), w, bias)[0]  # [Fn, T]
            filters = w.shape[0]
            coef = center.new_zeros(filters, length, len(region.positions), dim)  # [Fn, t, I, D]
            for j, p in enumerate(region.positions):
                for k in range(width):  # window t = p - k covers position p at its k-th slot
                    t = p - k
                    if 0 <= t < length:
                        coef[:, t, j, :] = w[:, :, k]
            values.append(h.reshape(-1))
            coefs.append(coef.reshape(filters * length, len(region.positions), dim))
            groups.append(offset + torch.arange(filters * length, device=center.device).reshape(filters, length))
            offset += filters * length
        return torch.cat(values), torch.cat(coefs), torch.cat(groups)
    first = hidden_layer(cast("BowClassifier", model))
    if first is not None:  # bag of words with a ReLU layer
        w = first.weight.to(torch.float64)  # [H, D]
        value = center.mean(dim=0) @ w.T + first.bias.to(torch.float64)
        coef = (w / length).unsqueeze(1).expand(w.shape[0], len(region.positions), dim).clone()
        return value, coef, torch.arange(w.shape[0], device=center.device).unsqueeze(1)
    return None


def crown_margin_lower(model: nn.Module, kind: str, region: Region, label: int,
                       pre: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """Lower bounds ``[L]`` of ``logit_label - logit_c`` over ``region`` (0 at ``c = label``).
    ``model`` in float64, one text of ``T`` real words (``region.center`` is ``[T, D]``).
    ``pre``: :func:`affine_preactivations` of the same center and positions, when the
    caller already has it (it does not depend on the radius: bisection computes it once)."""
    out = last_layer(model)
    w_out = out.weight.to(torch.float64)
    b_out = out.bias.to(torch.float64)
    lam = w_out[label].unsqueeze(0) - w_out  # [L, P]
    bias = b_out[label] - b_out  # [L]
    if pre is None:
        pre = affine_preactivations(model, kind, region)
    length, dim = region.center.shape
    if pre is None:  # linear model: margin = lam . mean(e) + bias
        value = lam @ region.center.mean(dim=0) + bias
        coef = (lam / length).unsqueeze(1).expand(lam.shape[0], len(region.positions), dim).clone()
        return lower_linear(coef, value, region)
    value, coef, groups = pre
    lower = lower_linear(coef, value, region)
    upper = -lower_linear(-coef, -value, region)
    gl, gu = lower[groups], upper[groups]  # [P, G]
    star = gl.argmax(dim=1)  # window with the largest lower bound
    rows = torch.arange(groups.shape[0], device=groups.device)
    idx = groups[rows, star]
    ls, us = lower[idx], upper[idx]
    # ReLU lower line through the origin: slope 1 when active or when u >= -l, else 0
    alpha = torch.where(ls >= 0, 1.0, torch.where(us <= 0, 0.0, (us >= -ls).to(torch.float64)))
    # does t* dominate? then max_t relu(h_t) = relu(h_t*)
    others = gu.clone()
    others[rows, star] = float("-inf")
    single = others.max(dim=1).values <= ls if groups.shape[1] > 1 else torch.ones_like(ls, dtype=torch.bool)
    unstable = (ls < 0) & (us > 0)
    chord = torch.where(unstable, us / torch.where(unstable, us - ls, torch.ones_like(us)), (ls >= 0).to(torch.float64))
    slope_up = torch.where(single, chord, torch.zeros_like(chord))
    icpt_up = torch.where(single, torch.where(unstable, -chord * ls, torch.zeros_like(ls)), F.relu(gu.max(dim=1).values))
    # per class: lam >= 0 takes the lower line, lam < 0 the upper line
    slope = torch.where(lam >= 0, alpha.unsqueeze(0), slope_up.unsqueeze(0))  # [L, P]
    icpt = torch.where(lam >= 0, torch.zeros_like(lam), icpt_up.unsqueeze(0))
    weight = lam * slope  # [L, P]
    margin_value = weight @ value[idx] + (lam * icpt).sum(dim=1) + bias
    margin_coef = torch.einsum("lp,ptd->ltd", weight, coef[idx])
    return lower_linear(margin_coef, margin_value, region)
