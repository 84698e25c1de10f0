"""Linear-relaxation lower bounds of the margin of the zoo's (bidirectional) LSTM.

Ko et al. (2019), "POPQORN: Quantifying Robustness of Recurrent Neural Networks", the
setting La Malfa et al. (2020, Section 2.3) use for their LSTMs: every sigmoid and tanh is
enclosed between two lines on the interval its input can reach, the products
``sigma(.) * tanh(.)`` and ``sigma(.) * c`` between two planes, and the bounds are carried
through the recurrence. Written here because auto_LiRPA cannot be installed (its PyPI
release pins torch<1.13) and ``bound-propagation`` has no recurrent layers.

**Forward mode.** Every neuron of every step keeps a lower and an upper *affine function*
of the perturbed coordinates ``x = (e - center)_I`` (at most ``|I| x D`` variables, 150
for three 50-d words), concretised over the region (box and ball, by
:func:`~textrobust.bounds.region.lower_linear`) whenever a relaxation needs its interval.
Chosen over backward CROWN (POPQORN's own propagation) because the input is small here
(``|I| x D <= 150``, below the ``4 x hidden`` gate neurons) while a text has up to ~100
steps: forward mode gets every intermediate interval in one pass, O(T), where backward
propagation re-runs the recurrence back to the input for every step's intermediate bounds,
O(T^2) passes. For fixed relaxations both give affine bounds of the same family.

The relaxations (each checked on a dense grid and against sampling in
``tests/test_bounds_lstm.py``):

- **sigmoid, tanh** (:func:`s_shaped_lines`): CROWN's lines for S-shaped functions
  (Zhang et al. 2018, Section 3.2): on the convex part (``u <= 0``) the chord above and a
  tangent (at the midpoint) below, on the concave part the mirror image; across 0 the
  upper line is the tangent at the ``d >= 0`` whose tangent passes through
  ``(l, f(l))`` (the chord when ``d > u``), the lower line its mirror image. ``d`` is found
  by bisection and the bracket end on the safe side is used (any ``d`` past the exact
  point gives a line that still bounds the function, see the proof in the docstring of
  :func:`_upper_lines`), plus a slack of 1e-10 on every intercept for rounding. Sigmoid
  reuses tanh's lines through ``sigma(z) = (1 + tanh(z / 2)) / 2``.
- **products** ``x * y`` on the box ``[xl, xu] x [yl, yu]``: McCormick's envelopes (two
  lower, two upper planes), per neuron the plane whose concretised bound is tighter.
  *Departure from POPQORN*, which optimises the planes by gradient descent: McCormick's
  planes are the tightest *on the box* but not adapted to the affine shape of the
  factors; simpler, deterministic and sound.
- **max over time** (the model's pooling over real positions): below, the step with the
  largest lower bound; above, that step's upper function when its lower bound dominates
  every other step's upper bound, else the constant largest upper bound (CNN-Cert's
  max-pool relaxation, as in :mod:`textrobust.bounds.crown`).
- the output layer is folded into the margin ``logit_y - logit_c`` before concretising.

**Never looser than IBP.** Every intermediate interval is the intersection of the
concretised affine bounds with interval arithmetic on the (already intersected) intervals
of the step before, so by induction each interval lies inside plain IBP's; the final
margin is the larger of the affine bound and interval arithmetic on the pooled features.

Only real positions enter the recurrence (the model packs its sequences): the forward
direction runs over the real words in order, the reverse direction from the last real word
back, both from zero states; steps whose inputs are not yet perturbed are computed exactly.
Float64 throughout (the model must be a float64 copy, as :class:`~textrobust.bounds.
certify.Verifier` makes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from textrobust.bounds.ibp import interval_mul, last_layer
from textrobust.bounds.region import Norm, Region

__all__ = ["Affine", "lstm_linear_margin_lower", "s_shaped_lines", "mccormick"]

#: Added to every upper intercept (subtracted from every lower one): float64 rounding.
_SLACK = 1e-10
#: Intervals narrower than this take the constant lines f(l) and f(u) (f is increasing).
_NARROW = 1e-9
#: Bisection steps for the tangent point (the safe end of the bracket is used).
_BISECTION = 24


# ---- the lines of sigmoid and tanh ---------------------------------------------------------------
def _upper_lines(l: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slope and intercept of a line ``a z + b >= tanh(z)`` for every ``z`` in ``[l, u]``.

    - ``u - l < _NARROW``: the constant ``tanh(u)`` (tanh is increasing);
    - ``l >= 0`` (concave): the tangent at the midpoint;
    - ``u <= 0`` (convex): the chord;
    - ``l < 0 < u``: with ``psi(d) = tanh(d) + tanh'(d) (l - d) - tanh(l)`` (the tangent at
      ``d`` minus ``tanh`` at ``l``), increasing on ``d >= 0`` since ``psi'(d) = tanh''(d)
      (l - d) > 0``, and ``psi(0) <= 0`` (convexity on ``[l, 0]``): if ``psi(u) < 0`` the
      chord (its slope is below ``tanh'(u)``, so chord minus tanh, convex on ``[0, u]``
      and 0 at ``u``, decreases to 0 there, and is concave and >= 0 at both ends of
      ``[l, 0]``); otherwise the tangent at a ``d`` in ``[0, u]`` with ``psi(d) >= 0``: it
      lies above tanh on ``[0, u]`` (concavity) and above the chord of ``[l, 0]`` (it is
      above tanh at ``l`` and at ``0``), which lies above tanh (convexity).

    NumPy rather than torch: these are many tiny elementwise operations, where NumPy's
    per-call cost is a fraction of torch's."""
    width = u - l
    narrow = width < _NARROW
    tl, tu = np.tanh(l), np.tanh(u)
    chord_a = np.where(narrow, 0.0, (tu - tl) / np.where(narrow, 1.0, width))
    chord_b = tl - chord_a * l
    mid = (l + u) / 2
    tm = np.tanh(mid)
    tan_a = 1.0 - tm * tm
    tan_b = tm - tan_a * mid
    a = np.where(l >= 0, tan_a, chord_a)
    b = np.where(l >= 0, tan_b, chord_b)
    crossing = np.flatnonzero((l < 0) & (u > 0) & ~narrow)
    if crossing.size:
        cl, cu, ctl = l[crossing], u[crossing], tl[crossing]

        def psi(d: np.ndarray) -> np.ndarray:
            td = np.tanh(d)
            return td + (1.0 - td * td) * (cl - d) - ctl

        exists = psi(cu) >= 0
        lo, hi = np.zeros_like(cu), cu.copy()
        for _ in range(_BISECTION):
            d = (lo + hi) / 2
            above = psi(d) >= 0
            hi = np.where(above, d, hi)
            lo = np.where(above, lo, d)
        th = np.tanh(hi)
        slope = 1.0 - th * th
        a[crossing] = np.where(exists, slope, chord_a[crossing])
        b[crossing] = np.where(exists, th - slope * hi, chord_b[crossing])
    a = np.where(narrow, 0.0, a)
    b = np.where(narrow, tu, b)
    return a, b + _SLACK


def s_shaped_lines(kind: str | torch.Tensor, l: torch.Tensor, u: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(a_low, b_low, a_up, b_up)`` with ``a_low z + b_low <= f(z) <= a_up z + b_up`` for
    every ``z`` in ``[l, u]``, ``f`` = ``"sigmoid"`` or ``"tanh"`` (both slopes >= 0), or
    per element where ``kind`` is a bool tensor (True: sigmoid).

    The lower line is the upper line of the mirror image: ``tanh(z) = -tanh(-z)``, so
    ``tanh(z) >= -(a (-z) + b) = a z - b`` with ``(a, b)`` the upper line on ``[-u, -l]``;
    sigmoid takes tanh's lines through ``sigmoid(z) = (1 + tanh(z / 2)) / 2``."""
    if isinstance(kind, str):
        if kind not in ("sigmoid", "tanh"):
            raise ValueError(f"s_shaped_lines covers 'sigmoid' and 'tanh'. Got {kind!r}.")
        sig = np.full(l.shape[0], kind == "sigmoid")
    else:
        sig = kind.cpu().numpy()
    ln, un = l.detach().cpu().numpy(), u.detach().cpu().numpy()
    ln, un = np.minimum(ln, un), np.maximum(ln, un)
    scale = np.where(sig, 0.5, 1.0)
    ls, us = ln * scale, un * scale
    a, b = _upper_lines(np.concatenate([ls, -us]), np.concatenate([us, -ls]))
    n = ln.shape[0]
    a_up, b_up, a_low, b_low = a[:n], b[:n], a[n:], -b[n:]
    # sigmoid(z) = 1/2 + tanh(z/2) / 2: slopes a/4, intercepts 1/2 + b/2
    a_low, a_up = np.where(sig, a_low / 4, a_low), np.where(sig, a_up / 4, a_up)
    b_low, b_up = np.where(sig, 0.5 + b_low / 2, b_low), np.where(sig, 0.5 + b_up / 2, b_up)

    def as_tensor(v: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.ascontiguousarray(v), dtype=l.dtype, device=l.device)

    return as_tensor(a_low), as_tensor(b_low), as_tensor(a_up), as_tensor(b_up)


# ---- affine bounds --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Affine:
    """Bounds of ``N`` neurons: ``lo_val + lo_coef . x <= v <= up_val + up_coef . x`` over
    the region (``x`` the flattened perturbation of the positions ``I``), and the interval
    ``[lower, upper]``."""

    lo_coef: torch.Tensor  # [N, n]
    lo_val: torch.Tensor  # [N]
    up_coef: torch.Tensor
    up_val: torch.Tensor
    lower: torch.Tensor  # [N]
    upper: torch.Tensor

    @classmethod
    def constant(cls, value: torch.Tensor, n: int) -> Affine:
        coef = value.new_zeros(value.shape[0], n)
        return cls(coef, value, coef, value, value, value)

    def scaled_lower(self, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The lower affine function of ``k * v`` (per neuron ``k``)."""
        pos = (k >= 0).unsqueeze(1)
        coef = torch.where(pos, k.unsqueeze(1) * self.lo_coef, k.unsqueeze(1) * self.up_coef)
        return coef, torch.where(k >= 0, k * self.lo_val, k * self.up_val)

    def scaled_upper(self, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pos = (k >= 0).unsqueeze(1)
        coef = torch.where(pos, k.unsqueeze(1) * self.up_coef, k.unsqueeze(1) * self.lo_coef)
        return coef, torch.where(k >= 0, k * self.up_val, k * self.lo_val)


class _Concretiser:
    """Lower bounds of affine functions ``value + coef . x`` over one region: the box bound
    and, for a ball, the dual-norm bound, the larger of the two (the same bound as
    :func:`~textrobust.bounds.region.lower_linear`, with the region's terms computed once)."""

    def __init__(self, region: Region) -> None:
        index = list(region.positions)
        dl = (region.lower - region.center)[index].flatten()
        du = (region.upper - region.center)[index].flatten()
        self.mid, self.rad = (dl + du) / 2, (du - dl) / 2  # box: coef.mid - |coef|.rad
        self.ball = region.eps is not None and region.scale is not None
        if region.eps is not None and region.scale is not None:
            self.span = region.scale.span.repeat(len(index))
            self.eps = float(region.eps)
            self.linf = region.norm is Norm.LINF

    def lower(self, coef: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        box = value + coef @ self.mid - coef.abs() @ self.rad
        if not self.ball:
            return box
        scaled = coef * self.span
        dual = scaled.abs().sum(dim=-1) if self.linf else scaled.norm(dim=-1)
        return torch.maximum(box, value - self.eps * dual)

    def both(self, lo_coef: torch.Tensor, lo_val: torch.Tensor, up_coef: torch.Tensor, up_val: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor]:
        """The lower bound of the first function and the upper bound of the second (one call)."""
        n = lo_val.shape[0]
        out = self.lower(torch.cat([lo_coef, -up_coef]), torch.cat([lo_val, -up_val]))
        return out[:n], -out[n:]


def _ordered(lower: torch.Tensor, upper: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Rounding can cross an intersection by an ulp: keep ``lower <= upper``."""
    return torch.minimum(lower, upper), torch.maximum(lower, upper)


def _activation(kind: str | torch.Tensor, z: Affine) -> Affine:
    """``f(z)`` for ``f`` sigmoid or tanh (``kind``: a name, or True per sigmoid row)."""
    a_lo, b_lo, a_up, b_up = s_shaped_lines(kind, z.lower, z.upper)
    lo_coef, lo_val = z.scaled_lower(a_lo)
    up_coef, up_val = z.scaled_upper(a_up)
    sig = kind == "sigmoid" if isinstance(kind, str) else kind

    def f(v: torch.Tensor) -> torch.Tensor:
        return torch.where(sig, torch.sigmoid(v), torch.tanh(v)) if not isinstance(sig, bool) else (
            torch.sigmoid(v) if sig else torch.tanh(v))

    # f is increasing: its exact interval is [f(l), f(u)], never looser than the lines'
    return Affine(lo_coef, lo_val + b_lo, up_coef, up_val + b_up, f(z.lower), f(z.upper))


def mccormick(x: Affine, y: Affine, conc: _Concretiser) -> Affine:
    """Bounds of ``x * y`` by McCormick's planes on the box of ``x`` and ``y`` (per neuron
    the plane with the tighter concretised bound), intersected with the interval product.

    Below: ``(x - xl)(y - yl) >= 0`` and ``(xu - x)(yu - y) >= 0``; above:
    ``(x - xl)(yu - y) >= 0`` and ``(xu - x)(y - yl) >= 0``."""
    xl, xu, yl, yu = x.lower, x.upper, y.lower, y.upper

    def plane(kx: torch.Tensor, ky: torch.Tensor, c: torch.Tensor, upper: bool) -> tuple[torch.Tensor, torch.Tensor]:
        cx, vx = x.scaled_upper(kx) if upper else x.scaled_lower(kx)
        cy, vy = y.scaled_upper(ky) if upper else y.scaled_lower(ky)
        return cx + cy, vx + vy + c

    lows = [plane(yl, xl, -xl * yl, False), plane(yu, xu, -xu * yu, False)]
    ups = [plane(yu, xl, -xl * yu, True), plane(yl, xu, -xu * yl, True)]
    n = xl.shape[0]
    low_values, up_values = conc.both(torch.cat([lows[0][0], lows[1][0]]), torch.cat([lows[0][1], lows[1][1]]),
                                      torch.cat([ups[0][0], ups[1][0]]), torch.cat([ups[0][1], ups[1][1]]))
    first_low = low_values[:n] >= low_values[n:]
    first_up = up_values[:n] <= up_values[n:]
    lo_coef = torch.where(first_low.unsqueeze(1), lows[0][0], lows[1][0])
    lo_val = torch.where(first_low, lows[0][1], lows[1][1])
    up_coef = torch.where(first_up.unsqueeze(1), ups[0][0], ups[1][0])
    up_val = torch.where(first_up, ups[0][1], ups[1][1])
    il, iu = interval_mul(xl, xu, yl, yu)
    lower = torch.maximum(torch.maximum(low_values[:n], low_values[n:]), il)
    upper = torch.minimum(torch.minimum(up_values[:n], up_values[n:]), iu)
    lower, upper = _ordered(lower, upper)
    return Affine(lo_coef, lo_val, up_coef, up_val, lower, upper)


def _add(a: Affine, b: Affine, conc: _Concretiser) -> Affine:
    lo_coef, lo_val = a.lo_coef + b.lo_coef, a.lo_val + b.lo_val
    up_coef, up_val = a.up_coef + b.up_coef, a.up_val + b.up_val
    lin_lower, lin_upper = conc.both(lo_coef, lo_val, up_coef, up_val)
    lower = torch.maximum(lin_lower, a.lower + b.lower)
    upper = torch.minimum(lin_upper, a.upper + b.upper)
    lower, upper = _ordered(lower, upper)
    return Affine(lo_coef, lo_val, up_coef, up_val, lower, upper)


# ---- the recurrence -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Pooled:
    """Per hidden unit: the step with the largest lower bound (its affine bounds), and the
    concrete bounds of every step (for the dominance test)."""

    best: Affine
    index: torch.Tensor  # [H] long: the step (row of lowers/uppers) of best
    lowers: torch.Tensor  # [S, H]
    uppers: torch.Tensor  # [S, H]


def _direction(lstm: nn.LSTM, suffix: str, region: Region, steps: list[int], conc: _Concretiser) -> _Pooled:
    dtype = region.center.dtype
    w_ih = getattr(lstm, f"weight_ih_l0{suffix}").to(dtype)
    w_hh = getattr(lstm, f"weight_hh_l0{suffix}").to(dtype)
    bias = (getattr(lstm, f"bias_ih_l0{suffix}") + getattr(lstm, f"bias_hh_l0{suffix}")).to(dtype)
    abs_hh, abs_ih = w_hh.abs(), w_ih.abs()
    hidden = w_hh.shape[1]
    dim = region.center.shape[1]
    n = len(region.positions) * dim
    block = {p: j for j, p in enumerate(region.positions)}
    zeros = region.center.new_zeros(hidden)
    h, c = Affine.constant(zeros, n), Affine.constant(zeros, n)
    exact = True  # no perturbed word read yet: the states are points
    best: Affine | None = None
    index = torch.zeros(hidden, dtype=torch.long, device=zeros.device)
    lowers, uppers = [], []
    for t in steps:
        x = region.center[t]
        if exact and t not in block:
            gates = w_ih @ x + w_hh @ h.lower + bias
            i, f, g, o = gates.split(hidden)
            c_val = torch.sigmoid(f) * c.lower + torch.sigmoid(i) * torch.tanh(g)
            h_val = torch.sigmoid(o) * torch.tanh(c_val)
            h, c = Affine.constant(h_val, n), Affine.constant(c_val, n)
        else:
            exact = False
            h, c = _step(w_ih, w_hh, abs_ih, abs_hh, bias, region, t, block, h, c, conc)
        lowers.append(h.lower)
        uppers.append(h.upper)
        if best is None:
            best = h
        else:
            better = h.lower > best.lower
            index = torch.where(better, len(lowers) - 1, index)
            col = better.unsqueeze(1)
            best = Affine(torch.where(col, h.lo_coef, best.lo_coef), torch.where(better, h.lo_val, best.lo_val),
                          torch.where(col, h.up_coef, best.up_coef), torch.where(better, h.up_val, best.up_val),
                          torch.where(better, h.lower, best.lower), torch.where(better, h.upper, best.upper))
    if best is None:  # the caller checks for at least one real word
        raise ValueError("The mask must mark a non-empty prefix of real words.")
    return _Pooled(best, index, torch.stack(lowers), torch.stack(uppers))


def _step(w_ih: torch.Tensor, w_hh: torch.Tensor, abs_ih: torch.Tensor, abs_hh: torch.Tensor, bias: torch.Tensor,
          region: Region, t: int, block: dict[int, int], h: Affine, c: Affine,
          conc: _Concretiser) -> tuple[Affine, Affine]:
    """One LSTM cell (PyTorch's gate order i, f, g, o) on affine bounds."""
    hidden = w_hh.shape[1]
    dim = region.center.shape[1]
    # W_hh h: the mid/radius form of W+ h_lo + W- h_up (and the mirror for the upper)
    mid_c, rad_c = (h.lo_coef + h.up_coef) / 2, (h.up_coef - h.lo_coef) / 2
    mid_v, rad_v = (h.lo_val + h.up_val) / 2, (h.up_val - h.lo_val) / 2
    base_c, spread_c = w_hh @ mid_c, abs_hh @ rad_c
    base_v = w_hh @ mid_v + w_ih @ region.center[t] + bias
    spread_v = abs_hh @ rad_v
    lo_coef, up_coef = base_c - spread_c, base_c + spread_c
    if t in block:  # e_t = center_t + x_j: W_ih on the block of position t
        j = block[t]
        lo_coef = lo_coef.clone()
        up_coef = up_coef.clone()
        lo_coef[:, j * dim:(j + 1) * dim] += w_ih
        up_coef[:, j * dim:(j + 1) * dim] += w_ih
    lo_val, up_val = base_v - spread_v, base_v + spread_v
    # interval arithmetic on the (already intersected) intervals: never looser than IBP
    xm, xr = (region.lower[t] + region.upper[t]) / 2, (region.upper[t] - region.lower[t]) / 2
    hm, hr = (h.lower + h.upper) / 2, (h.upper - h.lower) / 2
    gm = w_ih @ xm + w_hh @ hm + bias
    gr = abs_ih @ xr + abs_hh @ hr
    lin_lower, lin_upper = conc.both(lo_coef, lo_val, up_coef, up_val)
    lower = torch.maximum(lin_lower, gm - gr)
    upper = torch.minimum(lin_upper, gm + gr)
    lower, upper = _ordered(lower, upper)
    # PyTorch's gate order i, f, g, o: sigmoid on all but g (one call for the four gates)
    sigmoid_rows = torch.ones(4 * hidden, dtype=torch.bool, device=lower.device)
    sigmoid_rows[2 * hidden:3 * hidden] = False
    gates = _activation(sigmoid_rows, Affine(lo_coef, lo_val, up_coef, up_val, lower, upper))
    i, f, g, o = (_rows(gates, k * hidden, (k + 1) * hidden) for k in range(4))
    c_new = _add(mccormick(f, c, conc), mccormick(i, g, conc), conc)
    h_new = mccormick(o, _activation("tanh", c_new), conc)
    return h_new, c_new


def _rows(a: Affine, start: int, stop: int) -> Affine:
    return Affine(a.lo_coef[start:stop], a.lo_val[start:stop], a.up_coef[start:stop], a.up_val[start:stop],
                  a.lower[start:stop], a.upper[start:stop])


def _pool(p: _Pooled) -> Affine:
    """Bounds of ``max_t h_t`` per unit from the pooled steps."""
    best = p.best
    others = p.uppers.scatter(0, p.index.unsqueeze(0), float("-inf"))
    # a unit whose best step's lower bound reaches every other step's upper bound: max_t h_t = h_t*
    single = (others <= best.lower.unsqueeze(0)).all(dim=0)
    top = p.uppers.max(dim=0).values
    col = single.unsqueeze(1)
    up_coef = torch.where(col, best.up_coef, torch.zeros_like(best.up_coef))
    up_val = torch.where(single, best.up_val, top)
    return Affine(best.lo_coef, best.lo_val, up_coef, up_val, best.lower, top)


def lstm_linear_margin_lower(model: nn.Module, region: Region, label: int,
                             mask: torch.Tensor | None = None) -> torch.Tensor:
    """Lower bounds ``[L]`` of ``logit_label - logit_c`` over ``region`` (0 at ``c = label``)
    for a zoo :class:`~textrobust.zoo.lstm.LstmClassifier` in float64 (one text,
    ``region.center`` ``[T, D]``).

    ``mask``: ``[T]`` bool, the real words (a prefix, as the model's packed sequences
    assume; default all). Perturbed positions must be real words."""
    lstm = model.lstm
    if not isinstance(lstm, nn.LSTM) or lstm.num_layers != 1 or not lstm.batch_first or lstm.proj_size:
        raise NotImplementedError("The linear LSTM bound covers the zoo's one-layer batch-first LSTM only.")
    length = region.center.shape[0]
    real = list(range(length)) if mask is None else [t for t in range(length) if bool(mask[t])]
    if not real or real != list(range(len(real))):
        raise ValueError("The mask must mark a non-empty prefix of real words.")
    if any(p >= len(real) for p in region.positions):
        raise ValueError(f"Perturbed positions {region.positions} must be real words (the first {len(real)}).")
    conc = _Concretiser(region)
    parts = [_pool(_direction(lstm, "", region, real, conc))]
    if lstm.bidirectional:
        parts.append(_pool(_direction(lstm, "_reverse", region, real[::-1], conc)))
    feats = Affine(*(torch.cat([getattr(p, name) for p in parts]) for name in
                     ("lo_coef", "lo_val", "up_coef", "up_val", "lower", "upper")))
    out = last_layer(model)
    w = out.weight.to(torch.float64)
    b = out.bias.to(torch.float64) if out.bias is not None else w.new_zeros(w.shape[0])
    lam = w[label].unsqueeze(0) - w  # [L, F]
    bias = b[label] - b
    pos = lam >= 0
    coef = torch.where(pos.unsqueeze(2), lam.unsqueeze(2) * feats.lo_coef, lam.unsqueeze(2) * feats.up_coef).sum(1)
    value = torch.where(pos, lam * feats.lo_val, lam * feats.up_val).sum(1) + bias
    linear = conc.lower(coef, value)
    mid, rad = (feats.lower + feats.upper) / 2, (feats.upper - feats.lower) / 2
    interval = lam @ mid - lam.abs() @ rad + bias
    bound = torch.maximum(linear, interval)
    bound[label] = 0.0
    return bound
