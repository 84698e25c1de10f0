"""Interval bound propagation (IBP) through the zoo's word models.

Gowal et al. (2018) for the interval arithmetic; Jia et al. (2019) and Huang et al. (2019)
for IBP over word substitutions. Every function takes a batch of boxes ``lower, upper``
``[B, T, D]`` on the raw word embeddings and the padding ``mask`` ``[B, T]``, mirrors the
model's own ``forward_embedded`` step by step (same padding conventions), and returns the
interval of the features the model's last linear layer reads. They are plain torch
operations, so they are differentiable (certified training) and run in any dtype
(verification uses float64). Dropout is the identity (evaluation mode).

- CNN (:mod:`textrobust.zoo.cnn`): the embeddings are masked, each window starts on a real
  word and runs past the end over zero vectors, ReLU, max over the windows that start on
  real words (ReLU >= 0, so 0 is the neutral fill, as in the model).
- Bag of words (:mod:`textrobust.zoo.bow`): the masked mean (positive weights), then the
  optional ReLU layer.
- LSTM (:mod:`textrobust.zoo.lstm`): the cell's gates through monotone sigmoid/tanh, the
  products ``f * c``, ``i * g`` and ``o * tanh(c)`` by interval multiplication; only real
  positions enter the recurrence, as with the model's packed sequences: the forward
  direction runs from the first word, the reverse direction starts from a zero state at
  each row's last real word. Outputs are max-pooled over real positions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:
    from textrobust.zoo.bow import BowClassifier
    from textrobust.zoo.cnn import CnnClassifier
    from textrobust.zoo.lstm import LstmClassifier

__all__ = ["interval_linear", "interval_mul", "ibp_features", "margin_lower_ibp", "last_layer", "convolutions",
           "hidden_layer"]


def interval_linear(lower: torch.Tensor, upper: torch.Tensor, layer: nn.Linear) -> tuple[torch.Tensor, torch.Tensor]:
    w = layer.weight.to(lower.dtype)
    mid, rad = (lower + upper) / 2, (upper - lower) / 2
    c = mid @ w.T
    if layer.bias is not None:
        c = c + layer.bias.to(lower.dtype)
    r = rad @ w.abs().T
    return c - r, c + r


def interval_mul(al: torch.Tensor, au: torch.Tensor, bl: torch.Tensor, bu: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The interval of ``a * b`` (all four corners)."""
    corners = torch.stack([al * bl, al * bu, au * bl, au * bu])
    return corners.min(dim=0).values, corners.max(dim=0).values


def convolutions(model: CnnClassifier) -> list[tuple[nn.Conv1d, int]]:
    """The CNN's convolutions, each with its window width."""
    return [(cast(nn.Conv1d, conv), width) for conv, width in zip(model.convs, model.config.widths)]


def hidden_layer(model: BowClassifier) -> nn.Linear | None:
    """The bag of words' hidden linear layer (before its ReLU); None when it has none."""
    return cast(nn.Linear, model.head[0]) if isinstance(model.head, nn.Sequential) else None


def _cnn(model: CnnClassifier, lower: torch.Tensor, upper: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m = mask.unsqueeze(-1).to(lower.dtype)
    mid = ((lower + upper) / 2 * m).transpose(1, 2)
    rad = ((upper - lower) / 2 * m).transpose(1, 2)
    blocked = ~mask.unsqueeze(1)
    lows, highs = [], []
    for conv, width in convolutions(model):
        w = conv.weight.to(lower.dtype)
        c = F.conv1d(F.pad(mid, (0, width - 1)), w, None if conv.bias is None else conv.bias.to(lower.dtype))
        r = F.conv1d(F.pad(rad, (0, width - 1)), w.abs())
        lows.append(F.relu(c - r).masked_fill(blocked, 0.0).amax(dim=2))
        highs.append(F.relu(c + r).masked_fill(blocked, 0.0).amax(dim=2))
    return torch.cat(lows, dim=1), torch.cat(highs, dim=1)


def _bow(model: BowClassifier, lower: torch.Tensor, upper: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m = mask.unsqueeze(-1).to(lower.dtype)
    count = m.sum(dim=1).clamp(min=1.0)
    lo, hi = (lower * m).sum(dim=1) / count, (upper * m).sum(dim=1) / count
    hidden = hidden_layer(model)
    if hidden is not None:
        lo, hi = interval_linear(lo, hi, hidden)
        lo, hi = F.relu(lo), F.relu(hi)
    return lo, hi


def _lstm_direction(
    lower: torch.Tensor, upper: torch.Tensor, mask: torch.Tensor, lstm: nn.LSTM, suffix: str, reverse: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    dtype = lower.dtype
    w_ih = getattr(lstm, f"weight_ih_l0{suffix}").to(dtype)
    w_hh = getattr(lstm, f"weight_hh_l0{suffix}").to(dtype)
    bias = (getattr(lstm, f"bias_ih_l0{suffix}") + getattr(lstm, f"bias_hh_l0{suffix}")).to(dtype)
    batch, length, _ = lower.shape
    hidden = w_hh.shape[1]
    zeros = lower.new_zeros(batch, hidden)
    hl, hu, cl, cu = zeros, zeros, zeros, zeros
    out_l: list[torch.Tensor] = [zeros] * length
    out_u: list[torch.Tensor] = [zeros] * length
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for t in steps:
        xm, xr = (lower[:, t] + upper[:, t]) / 2, (upper[:, t] - lower[:, t]) / 2
        hm, hr = (hl + hu) / 2, (hu - hl) / 2
        gm = xm @ w_ih.T + hm @ w_hh.T + bias
        gr = xr @ w_ih.abs().T + hr @ w_hh.abs().T
        gl, gu = gm - gr, gm + gr
        il, fl, ggl, ol = gl.split(hidden, dim=1)
        iu, fu, ggu, ou = gu.split(hidden, dim=1)
        il, iu, fl, fu = torch.sigmoid(il), torch.sigmoid(iu), torch.sigmoid(fl), torch.sigmoid(fu)
        ol, ou, ggl, ggu = torch.sigmoid(ol), torch.sigmoid(ou), torch.tanh(ggl), torch.tanh(ggu)
        a_l, a_u = interval_mul(fl, fu, cl, cu)
        b_l, b_u = interval_mul(il, iu, ggl, ggu)
        ncl, ncu = a_l + b_l, a_u + b_u
        nhl, nhu = interval_mul(ol, ou, torch.tanh(ncl), torch.tanh(ncu))
        real = mask[:, t].unsqueeze(1)
        # padding sits after the real words: the forward direction never reads it; the
        # reverse direction must start from a zero state at the last real word
        hl, hu = torch.where(real, nhl, zeros), torch.where(real, nhu, zeros)
        cl, cu = torch.where(real, ncl, zeros), torch.where(real, ncu, zeros)
        out_l[t], out_u[t] = hl, hu
    return torch.stack(out_l, dim=1), torch.stack(out_u, dim=1)


def _lstm(model: LstmClassifier, lower: torch.Tensor, upper: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    lstm = model.lstm
    if lstm.num_layers != 1 or not lstm.batch_first or lstm.proj_size:
        raise NotImplementedError("IBP covers the zoo's one-layer batch-first LSTM only.")
    parts = [_lstm_direction(lower, upper, mask, lstm, "", False)]
    if lstm.bidirectional:
        parts.append(_lstm_direction(lower, upper, mask, lstm, "_reverse", True))
    hl = torch.cat([p[0] for p in parts], dim=2)
    hu = torch.cat([p[1] for p in parts], dim=2)
    blocked = ~mask.unsqueeze(-1)
    return hl.masked_fill(blocked, float("-inf")).amax(dim=1), hu.masked_fill(blocked, float("-inf")).amax(dim=1)


def ibp_features(model: nn.Module, lower: torch.Tensor, upper: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The interval ``[B, F]`` of the features the model's last linear layer reads."""
    from textrobust.bounds.support import architecture_of

    kind = architecture_of(model)  # checks the model's class: the casts below hold
    if kind == "cnn":
        return _cnn(cast("CnnClassifier", model), lower, upper, mask)
    if kind == "bow":
        return _bow(cast("BowClassifier", model), lower, upper, mask)
    return _lstm(cast("LstmClassifier", model), lower, upper, mask)


def last_layer(model: nn.Module) -> nn.Linear:
    """The linear layer that maps the features to the logits."""
    head = getattr(model, "out", None)
    if head is None:
        head = model.head[-1] if isinstance(model.head, nn.Sequential) else model.head
    return cast(nn.Linear, head)  # the zoo's models end in a linear layer


def margin_lower_ibp(model: nn.Module, lower: torch.Tensor, upper: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Lower bounds ``[B, L]`` of ``logit_y - logit_c`` (0 at ``c = y``): the last layer is
    folded into the margin (its rows subtracted first), which is tighter than the
    difference of two logit intervals."""
    fl, fu = ibp_features(model, lower, upper, mask)
    out = last_layer(model)
    w = out.weight.to(fl.dtype)
    b = out.bias.to(fl.dtype) if out.bias is not None else w.new_zeros(w.shape[0])
    diff_w = w[labels].unsqueeze(1) - w.unsqueeze(0)  # [B, L, F]
    diff_b = b[labels].unsqueeze(1) - b.unsqueeze(0)  # [B, L]
    mid, rad = ((fl + fu) / 2).unsqueeze(1), ((fu - fl) / 2).unsqueeze(1)
    return (diff_w * mid).sum(-1) - (diff_w.abs() * rad).sum(-1) + diff_b
