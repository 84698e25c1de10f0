"""Soundness and tightness of the LSTM's linear-relaxation bound
(textrobust.bounds.lstm_linear), on tiny random LSTMs built here.

- the sigmoid/tanh lines bound the function on a dense grid of their whole interval and
  touch it (so they are not trivially loose); McCormick's planes contain sampled products;
(a) random and projected-gradient sampling inside the box never gives a margin below the
    bound (bidirectional or not, lengths 1-5, padded or not);
(b) the bound is never looser than IBP, and strictly tighter on most draws;
(c) with one or two perturbed coordinates, the minimum margin over a dense grid of the box
    is never below the bound;
plus exactness (a zero-width box gives the model's own margins, padding ignored) and the
verifier's dispatch. (d), trained zoo LSTMs, is in tests/test_bounds_zoo.py (heavy).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from textrobust.bounds.certify import Verifier
from textrobust.bounds.ibp import margin_lower_ibp
from textrobust.bounds.lstm_linear import Affine, _Concretiser, lstm_linear_margin_lower, mccormick, s_shaped_lines
from textrobust.bounds.region import EmbeddingScale, Norm, Region, ball, hull, lower_linear
from textrobust.zoo.lstm import LstmClassifier, LstmConfig

VOCAB = 12


def _lstm(seed: int, dim: int = 3, hidden: int = 3, labels: int = 2, bidirectional: bool = True) -> LstmClassifier:
    torch.manual_seed(seed)
    model = LstmClassifier(LstmConfig(embed_dim=dim, hidden=hidden, bidirectional=bidirectional), VOCAB, labels)
    return model.double().eval()


def _margins(model: LstmClassifier, points: torch.Tensor, label: int, mask: torch.Tensor | None = None,
             grad: bool = False) -> torch.Tensor:
    """``logit_label - logit_c`` ``[N, L]`` of embedded texts ``[N, T, D]`` (float64)."""
    if mask is None:
        mask = torch.ones(points.shape[:2], dtype=torch.bool)
    else:
        mask = mask.unsqueeze(0).expand(points.shape[0], -1)
    with torch.set_grad_enabled(grad):
        logits = model.forward_embedded(points, mask)
    return logits[:, label:label + 1] - logits


def _box(model: LstmClassifier, ids: list[int], positions: list[int], width: float) -> Region:
    """A box of half-width ``width`` (times each dimension's span) around the words at
    ``positions`` (a substitution hull, no ball)."""
    center = model.embedding(torch.as_tensor(ids)).detach()
    span = EmbeddingScale.from_table(model.embedding.weight).span
    vectors = [torch.stack([center[p] - width * span, center[p] + width * span]) for p in positions]
    return hull(center, positions, vectors)


def _pgd_min_margin(model, region: Region, label: int, mask=None, steps: int = 15) -> torch.Tensor:
    """Projected gradient descent on each margin, inside the box, from the center and from
    the lower corner: ``[L]`` smallest margins found."""
    lo, hi = region.lower, region.upper
    best = torch.full((model.out.out_features,), float("inf"), dtype=torch.float64)
    for c in range(model.out.out_features):
        if c == label:
            continue
        for start in (region.center, lo):
            x = start.clone().requires_grad_(True)
            for _ in range(steps):
                m = _margins(model, x.unsqueeze(0), label, mask, grad=True)[0, c]
                (grad,) = torch.autograd.grad(m, x)
                with torch.no_grad():
                    x -= (hi - lo) / 10 * grad.sign()
                    x.copy_(torch.minimum(torch.maximum(x, lo), hi))
            best[c] = min(best[c], float(_margins(model, x.detach().unsqueeze(0), label, mask)[0, c]))
    return best


def _uniform(region: Region, n: int, rng: np.random.Generator) -> torch.Tensor:
    u = torch.as_tensor(rng.uniform(0, 1, (n, *region.center.shape)))
    corners = torch.as_tensor(rng.integers(0, 2, (n // 4, *region.center.shape))).double()
    u = torch.cat([u, corners])  # vertices of the box too
    return region.lower + (region.upper - region.lower) * u


# ---- the relaxations ---------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["sigmoid", "tanh"]), low=st.floats(-12, 12), width=st.floats(0, 14),
       tiny=st.booleans())
def test_the_s_shaped_lines_bound_the_function_on_a_dense_grid_and_touch_it(kind, low, width, tiny):
    if tiny:
        width *= 1e-8
    l, u = torch.tensor([low], dtype=torch.float64), torch.tensor([low + width], dtype=torch.float64)
    a_lo, b_lo, a_up, b_up = s_shaped_lines(kind, l, u)
    z = torch.linspace(low, low + width, 20_001, dtype=torch.float64)
    f = torch.sigmoid(z) if kind == "sigmoid" else torch.tanh(z)
    below, above = f - (a_lo * z + b_lo), (a_up * z + b_up) - f
    assert below.min() >= 0 and above.min() >= 0
    assert a_lo.item() >= 0 and a_up.item() >= 0
    # each line touches the curve somewhere on the interval (up to the slack and the grid)
    assert below.min() <= 1e-6 and above.min() <= 1e-6


def test_the_s_shaped_lines_take_each_case():
    l = torch.tensor([-3.0, 1.0, -1.0, -3.0], dtype=torch.float64)
    u = torch.tensor([-1.0, 3.0, 4.0, 0.1], dtype=torch.float64)
    a_lo, b_lo, a_up, b_up = s_shaped_lines("tanh", l, u)
    chord = (torch.tanh(u) - torch.tanh(l)) / (u - l)
    assert a_up[0] == pytest.approx(chord[0]) and a_lo[1] == pytest.approx(chord[1])  # convex / concave chords
    assert a_lo[0] == pytest.approx(1 - torch.tanh(torch.tensor(-2.0)) ** 2)  # tangent at the midpoint
    # across 0, wide: the chord would cut the curve; a tangent through (l, tanh l), steeper
    assert a_up[2] > chord[2] and a_up[2] * l[2] + b_up[2] == pytest.approx(torch.tanh(l[2]).item(), abs=1e-6)
    assert a_up[3] == pytest.approx(chord[3])  # across 0, the tangent point past u: the chord
    # per element kinds: True rows are sigmoid
    mixed = s_shaped_lines(torch.tensor([True, False]), torch.tensor([-1.0, -1.0]).double(),
                           torch.tensor([2.0, 2.0]).double())
    assert mixed[2][0] == pytest.approx(s_shaped_lines("sigmoid", l[2:3], u[2:3])[2][0].item())
    assert mixed[2][1] == pytest.approx(a_up[2].item())
    with pytest.raises(ValueError, match="sigmoid"):
        s_shaped_lines("relu", l, u)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_mccormick_planes_contain_every_sampled_product(seed):
    rng = np.random.default_rng(seed)
    n, k = 5, 2  # 5 neurons, 2 input variables x in [-1, 1]^2 (a box region)
    region = Region(torch.zeros(1, k, dtype=torch.float64), -torch.ones(1, k, dtype=torch.float64),
                    torch.ones(1, k, dtype=torch.float64), (0,))
    conc = _Concretiser(region)

    def affine_factor() -> tuple[Affine, torch.Tensor, torch.Tensor]:
        w = torch.as_tensor(rng.normal(size=(n, k)))
        v = torch.as_tensor(rng.normal(size=n))
        lo, up = conc.both(w, v, w, v)
        return Affine(w, v, w, v, lo, up), w, v

    x, wx, vx = affine_factor()
    y, wy, vy = affine_factor()
    prod = mccormick(x, y, conc)
    pts = torch.as_tensor(rng.uniform(-1, 1, (2000, k)))
    true = (pts @ wx.T + vx) * (pts @ wy.T + vy)
    assert (true >= pts @ prod.lo_coef.T + prod.lo_val - 1e-12).all()
    assert (true <= pts @ prod.up_coef.T + prod.up_val + 1e-12).all()
    assert (true >= prod.lower - 1e-12).all() and (true <= prod.upper + 1e-12).all()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), eps=st.floats(0.0, 1.0), linf=st.booleans(), two=st.booleans())
def test_the_concretiser_agrees_with_lower_linear(seed, eps, linf, two):
    model = _lstm(seed)
    ids = [1, 2, 3]
    region = ball(model.embedding(torch.as_tensor(ids)).detach(), [0, 2] if two else [1], eps,
                  Norm.LINF if linf else Norm.L2, EmbeddingScale.from_table(model.embedding.weight))
    coef = torch.as_tensor(np.random.default_rng(seed).normal(size=(4, len(region.positions), 3)))
    value = torch.arange(4, dtype=torch.float64)
    assert torch.allclose(_Concretiser(region).lower(coef.flatten(1), value), lower_linear(coef, value, region))


# ---- (a) sampling and PGD inside the box ------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 5), width=st.floats(0.005, 0.3),
       bidirectional=st.booleans(), labels=st.integers(2, 3), two=st.booleans(), padding=st.integers(0, 2))
def test_no_sampled_or_attacked_point_of_the_box_has_a_margin_below_the_bound(
        seed, length, width, bidirectional, labels, two, padding):
    model = _lstm(seed, labels=labels, bidirectional=bidirectional)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, size=length).tolist() + [0] * padding
    positions = sorted({0, length - 1} if two else {int(rng.integers(0, length))})
    region = _box(model, ids, positions, width)
    mask = torch.as_tensor([i != 0 for i in ids])
    label = int(_margins(model, region.center.unsqueeze(0), 0, mask)[0].argmin())  # the predicted class
    bound = lstm_linear_margin_lower(model, region, label, mask)
    margins = _margins(model, _uniform(region, 400, rng), label, mask)
    margins[:, label] = float("inf")
    assert (margins >= bound.unsqueeze(0) - 1e-9).all()
    attacked = _pgd_min_margin(model, region, label, mask)
    assert (attacked >= bound - 1e-9).all()


# ---- (b) never looser than IBP, usually tighter -------------------------------------------------------------
def test_the_bound_is_never_looser_than_ibp_and_tighter_on_most_draws():
    tighter = draws = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        model = _lstm(seed, dim=3, hidden=4, labels=2 + seed % 2, bidirectional=seed % 3 != 0)
        length = int(rng.integers(2, 7))
        ids = rng.integers(1, VOCAB, size=length).tolist()
        positions = sorted(set(rng.integers(0, length, size=1 + seed % 2).tolist()))
        region = _box(model, ids, positions, float(rng.uniform(0.02, 0.3)))
        label = int(_margins(model, region.center.unsqueeze(0), 0)[0].argmin())
        mask = torch.ones(1, length, dtype=torch.bool)
        linear = lstm_linear_margin_lower(model, region, label)
        ibp = margin_lower_ibp(model, region.lower.unsqueeze(0), region.upper.unsqueeze(0), mask,
                               torch.tensor([label]))[0]
        others = [c for c in range(len(linear)) if c != label]
        assert (linear[others] >= ibp[others] - 1e-12).all()
        draws += len(others)
        tighter += int((linear[others] > ibp[others] + 1e-9).sum())
    assert tighter / draws >= 0.8


# ---- (c) a dense grid over one or two coordinates ------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 4), width=st.floats(0.02, 0.5),
       bidirectional=st.booleans(), two_words=st.booleans())
def test_the_bound_is_below_the_minimum_margin_over_a_dense_grid(seed, length, width, bidirectional, two_words):
    """Two perturbed coordinates: one word of a 2-d embedding, or two words of a 1-d one."""
    two_words = two_words and length >= 2
    model = _lstm(seed, dim=1 if two_words else 2, hidden=3, bidirectional=bidirectional)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, size=length).tolist()
    positions = [0, length - 1] if two_words else [int(rng.integers(0, length))]
    region = _box(model, ids, positions, width)
    label = int(_margins(model, region.center.unsqueeze(0), 0)[0].argmin())
    bound = lstm_linear_margin_lower(model, region, label)
    axis = torch.linspace(0, 1, 161, dtype=torch.float64)
    a, b = torch.meshgrid(axis, axis, indexing="ij")
    grid = region.center.unsqueeze(0).repeat(a.numel(), 1, 1)
    lo, hi = region.lower, region.upper
    if two_words:
        p, q = positions
        grid[:, p, 0] = lo[p, 0] + (hi[p, 0] - lo[p, 0]) * a.flatten()
        grid[:, q, 0] = lo[q, 0] + (hi[q, 0] - lo[q, 0]) * b.flatten()
    else:
        (p,) = positions
        grid[:, p, 0] = lo[p, 0] + (hi[p, 0] - lo[p, 0]) * a.flatten()
        grid[:, p, 1] = lo[p, 1] + (hi[p, 1] - lo[p, 1]) * b.flatten()
    margin = _margins(model, grid, label)[:, 1 - label].min()
    assert margin >= bound[1 - label] - 1e-9
    # the grid's minimum is attained: the bound is a real bound, not -inf
    assert torch.isfinite(bound).all()


# ---- exactness and padding -----------------------------------------------------------------------------------
@pytest.mark.parametrize("bidirectional", [True, False])
def test_a_zero_width_box_gives_the_models_own_margins_and_padding_is_ignored(bidirectional):
    model = _lstm(4, labels=3, bidirectional=bidirectional)
    ids = [3, 5, 7, 2]
    padded = ids + [0, 0]
    mask = torch.as_tensor([i != 0 for i in padded])
    for label in range(3):
        point = _box(model, padded, [1], 0.0)
        exact = _margins(model, point.center.unsqueeze(0), label, mask)[0]
        assert torch.allclose(lstm_linear_margin_lower(model, point, label, mask), exact, atol=1e-9)
        # the same box, padded or not, gives the same bound
        wide_alone = _box(model, ids, [1, 3], 0.1)
        wide_padded = _box(model, padded, [1, 3], 0.1)
        assert torch.allclose(lstm_linear_margin_lower(model, wide_alone, label),
                              lstm_linear_margin_lower(model, wide_padded, label, mask), atol=1e-12)


def test_masks_and_models_it_does_not_cover_are_refused():
    model = _lstm(1)
    region = _box(model, [1, 2, 0], [0], 0.1)
    with pytest.raises(ValueError, match="prefix"):
        lstm_linear_margin_lower(model, region, 0, torch.tensor([True, False, True]))
    with pytest.raises(ValueError, match="real words"):
        lstm_linear_margin_lower(model, _box(model, [1, 2, 0], [2], 0.1), 0, torch.tensor([True, True, False]))
    two_layers = LstmClassifier(LstmConfig(embed_dim=3, hidden=3), VOCAB, 2).double()
    two_layers.lstm = torch.nn.LSTM(3, 3, num_layers=2, batch_first=True).double()
    with pytest.raises(NotImplementedError, match="one-layer"):
        lstm_linear_margin_lower(two_layers, region, 0)


# ---- the verifier ----------------------------------------------------------------------------------------------
def test_the_verifier_uses_the_linear_bound_for_the_lstm_and_keeps_ibp_selectable():
    model = _lstm(7, hidden=4)
    verifier = Verifier(model)
    ids = [2, 4, 6, 8]
    label = int(verifier.logits(verifier.embed(ids)).argmax())
    region = verifier.ball(ids, [1], 0.05, Norm.L2)
    linear, used = verifier.margin_lower(region, label, "crown")
    ibp, used_ibp = verifier.margin_lower(region, label, "ibp")
    assert (used, used_ibp) == ("linear", "ibp")
    assert (linear >= ibp).all() and linear[label] == float("inf")
    tight = verifier.lower_radius(ids, [1], norm="l2")
    loose = verifier.lower_radius(ids, [1], norm="l2", method="ibp")
    assert (tight.method, tight.method_used, loose.method_used) == ("crown", "linear", "ibp")
    assert tight.eps >= loose.eps * (1 - 2e-3) and tight.eps > loose.eps
    assert verifier.method_used("crown") == "linear" and verifier.method_used("ibp") == "ibp"
