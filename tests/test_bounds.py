"""Soundness of bound propagation (textrobust.bounds), on tiny random zoo models.

(a) the CROWN and IBP margin bounds never exceed the exact minimum margin of a MILP
    (SciPy's HiGHS) built independently from the model's weights;
(b) projected gradient ascent and random sampling inside Ball(x, eps_l) never change the
    class, and IBP's margin bounds contain every sampled margin;
(c) the CROWN bound is never looser than IBP's.
Plus exactness checks of the padding conventions: a zero-width box reproduces the model's
own logits, alone or in a padded batch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

from textrobust.bounds.certify import MARGIN_TOL, Verifier
from textrobust.bounds.ibp import margin_lower_ibp
from textrobust.bounds.region import EmbeddingScale, Norm, ball, hull
from textrobust.bounds.support import UnsupportedArchitecture
from textrobust.zoo.bow import BowClassifier, BowConfig
from textrobust.zoo.cnn import CnnClassifier, CnnConfig
from textrobust.zoo.lstm import LstmClassifier, LstmConfig
from textrobust.zoo.transformer import TransformerClassifier, TransformerConfig

VOCAB = 12


def _cnn(seed: int, dim: int = 3, filters: int = 2, widths: tuple[int, ...] = (2, 3), labels: int = 2) -> CnnClassifier:
    torch.manual_seed(seed)
    return CnnClassifier(CnnConfig(embed_dim=dim, filters=filters, widths=widths), VOCAB, labels).eval()


def _bow(seed: int, dim: int = 3, hidden: int = 4, labels: int = 2) -> BowClassifier:
    torch.manual_seed(seed)
    return BowClassifier(BowConfig(embed_dim=dim, hidden=hidden), VOCAB, labels).eval()


def _lstm(seed: int, dim: int = 3, hidden: int = 3, labels: int = 2) -> LstmClassifier:
    torch.manual_seed(seed)
    return LstmClassifier(LstmConfig(embed_dim=dim, hidden=hidden), VOCAB, labels).eval()


# ---- (a) the exact MILP oracle ----------------------------------------------------------------------
def _milp_min_margin(value, coef, xl, xu, groups, lam, bias) -> float:
    """min over x in [xl, xu] of lam . pool(relu(value + coef x)) + bias, exactly (big-M MILP).

    ``groups[p]``: the neurons pooled (max) into feature ``p``. Variables: x, h, r, z
    (ReLU phase), pooled, s (argmax choice)."""
    n, nx = coef.shape
    # valid pre-activation bounds for big-M, by plain interval arithmetic (numpy, independent)
    mid, rad = (xl + xu) / 2, (xu - xl) / 2
    hl = value + coef @ mid - np.abs(coef) @ rad - 1e-9
    hu = value + coef @ mid + np.abs(coef) @ rad + 1e-9
    rl, ru = np.maximum(hl, 0), np.maximum(hu, 0)
    p = len(groups)
    g = max(len(gr) for gr in groups)
    ix, ih, ir, iz = 0, nx, nx + n, nx + 2 * n
    ip, is_ = nx + 3 * n, nx + 3 * n + p
    total = is_ + p * g
    rows, lo_, hi_ = [], [], []

    def row(entries, lo, hi):
        r = np.zeros(total)
        for k, v in entries:
            r[k] += v
        rows.append(r)
        lo_.append(lo)
        hi_.append(hi)

    for i in range(n):
        row([(ih + i, 1.0)] + [(ix + j, -coef[i, j]) for j in range(nx)], value[i], value[i])  # h = v + Cx
        row([(ir + i, 1.0), (ih + i, -1.0)], 0.0, np.inf)  # r >= h
        row([(ir + i, 1.0), (ih + i, -1.0), (iz + i, -hl[i])], -np.inf, -hl[i])  # r <= h - l (1 - z)
        row([(ir + i, 1.0), (iz + i, -hu[i])], -np.inf, 0.0)  # r <= u z
    for k, members in enumerate(groups):
        top = max(ru[m] for m in members)
        for j, m in enumerate(members):
            row([(ip + k, 1.0), (ir + m, -1.0)], 0.0, np.inf)  # pooled >= r_m
            big = top - rl[m]
            row([(ip + k, 1.0), (ir + m, -1.0), (is_ + k * g + j, big)], -np.inf, big)  # pooled <= r_m + big (1 - s)
        row([(is_ + k * g + j, 1.0) for j in range(len(members))], 1.0, 1.0)
    lower = np.concatenate([xl, hl, rl, np.zeros(n), np.zeros(p), np.zeros(p * g)])
    upper = np.concatenate([xu, hu, ru, np.ones(n), np.full(p, ru.max() if n else 0.0), np.ones(p * g)])
    integrality = np.zeros(total)
    integrality[iz:iz + n] = 1
    integrality[is_:] = 1
    c = np.zeros(total)
    c[ip:ip + p] = lam
    res = milp(c, constraints=LinearConstraint(np.array(rows), lo_, hi_), bounds=Bounds(lower, upper),
               integrality=integrality, options={"mip_rel_gap": 0.0})
    assert res.status == 0, res.message
    return float(res.fun + bias)


def _linf_box(model, ids, positions, eps):
    """The L-infinity ball of Definition 1 as a box, computed here with numpy."""
    table = model.embedding.weight.detach().double().numpy()[1:]
    low, span = table.min(0), table.max(0) - table.min(0)
    e = model.embedding.weight.detach().double().numpy()[ids]
    z = (e - low) / span
    xl = low + span * np.clip(z - eps, 0, 1)
    xu = low + span * np.clip(z + eps, 0, 1)
    return e, xl[positions].ravel(), xu[positions].ravel()


def _cnn_milp_terms(model: CnnClassifier, e: np.ndarray, positions: list[int]):
    """Each window pre-activation as value + coef . x_I, written from the conv weights."""
    length, dim = e.shape
    values, coefs, groups, offset = [], [], [], 0
    for conv, width in zip(model.convs, model.config.widths):
        w = conv.weight.detach().double().numpy()
        b = conv.bias.detach().double().numpy()
        padded = np.vstack([e, np.zeros((width - 1, dim))])
        for f in range(w.shape[0]):
            members = []
            for t in range(length):
                coef = np.zeros(len(positions) * dim)
                val = b[f]
                for k in range(width):
                    s = t + k
                    if s in positions:
                        j = positions.index(s)
                        coef[j * dim:(j + 1) * dim] = w[f, :, k]
                    else:
                        val += w[f, :, k] @ padded[s]
                values.append(val)
                coefs.append(coef)
                members.append(offset)
                offset += 1
            groups.append(members)
    return np.array(values), np.array(coefs), groups


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), length=st.integers(2, 4), eps=st.floats(0.01, 0.6),
       widths=st.sampled_from([(1, 2), (2, 3), (3,)]), labels=st.integers(2, 3), two=st.booleans())
def test_cnn_bounds_never_exceed_the_exact_milp_minimum(seed, length, eps, widths, labels, two):
    model = _cnn(seed, widths=widths, labels=labels)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, size=length).tolist()
    positions = [0, length - 1] if two else [int(rng.integers(0, length))]
    verifier = Verifier(model)
    label = int(verifier.logits(verifier.embed(ids)).argmax())
    region = verifier.ball(ids, positions, eps, Norm.LINF)
    crown, _ = verifier.margin_lower(region, label, "crown")
    ibp, _ = verifier.margin_lower(region, label, "ibp")
    e, xl, xu = _linf_box(model, ids, positions, eps)
    value, coef, groups = _cnn_milp_terms(model, e, positions)
    w = model.out.weight.detach().double().numpy()
    b = model.out.bias.detach().double().numpy()
    for c in range(labels):
        if c == label:
            continue
        exact = _milp_min_margin(value, coef, xl, xu, groups, w[label] - w[c], b[label] - b[c])
        assert crown[c] <= exact + 1e-6
        assert ibp[c] <= exact + 1e-6
        assert crown[c] >= ibp[c] - 1e-12  # (c)


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 4), eps=st.floats(0.01, 0.8), hidden=st.integers(1, 5))
def test_bow_bounds_never_exceed_the_exact_milp_minimum(seed, length, eps, hidden):
    model = _bow(seed, hidden=hidden)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, size=length).tolist()
    positions = [int(rng.integers(0, length))]
    verifier = Verifier(model)
    label = int(verifier.logits(verifier.embed(ids)).argmax())
    region = verifier.ball(ids, positions, eps, Norm.LINF)
    crown, _ = verifier.margin_lower(region, label, "crown")
    ibp, _ = verifier.margin_lower(region, label, "ibp")
    e, xl, xu = _linf_box(model, ids, positions, eps)
    w1 = model.head[0].weight.detach().double().numpy()
    b1 = model.head[0].bias.detach().double().numpy()
    fixed = np.zeros(e.shape[1]) + sum(e[t] for t in range(length) if t not in positions)
    value = w1 @ (fixed / length) + b1
    coef = w1 / length
    w = model.head[2].weight.detach().double().numpy()
    b = model.head[2].bias.detach().double().numpy()
    other = 1 - label
    exact = _milp_min_margin(value, coef, xl, xu, [[i] for i in range(hidden)], w[label] - w[other], b[label] - b[other])
    assert crown[other] <= exact + 1e-6
    assert ibp[other] <= exact + 1e-6
    assert crown[other] >= ibp[other] - 1e-12


def test_the_milp_oracle_is_exact_on_a_hand_solved_case():
    # one neuron h = x on x in [-1, 2], pooled = relu(h): margin 3 - 2*relu(x) is 3 - 4 = -1 at x = 2
    assert _milp_min_margin(np.zeros(1), np.ones((1, 1)), np.array([-1.0]), np.array([2.0]), [[0]],
                            np.array([-2.0]), 3.0) == pytest.approx(-1.0)
    # max of two neurons x and -x over [-1, 1]: min of max(|x|) is 0
    assert _milp_min_margin(np.zeros(2), np.array([[1.0], [-1.0]]), np.array([-1.0]), np.array([1.0]),
                            [[0, 1]], np.array([1.0]), 0.0) == pytest.approx(0.0, abs=1e-9)


# ---- (b) attacks and sampling inside the certified ball -------------------------------------------
def _sample_ball(center, positions, eps, norm, scale, n, rng):
    """Points of Ball(x, eps) in raw space: random directions and radii, clipped to the cube
    (clipping toward the center never leaves the ball)."""
    z0 = scale.normalise(center)
    k = len(positions) * center.shape[1]
    direction = torch.as_tensor(rng.standard_normal((n, k)))
    if norm is Norm.LINF:
        step = torch.as_tensor(rng.uniform(-1, 1, (n, k))) * eps
    else:
        step = direction / direction.norm(dim=1, keepdim=True) * eps * torch.as_tensor(rng.uniform(0, 1, (n, 1))) ** (1 / k)
    z = z0.unsqueeze(0).repeat(n, 1, 1)
    z[:, list(positions)] = (z0[list(positions)].reshape(1, -1) + step).reshape(n, len(positions), -1).clamp(0, 1)
    return scale.low + scale.span * z


def _pgd(model, center, positions, eps, norm, scale, label, steps=20):
    """Projected gradient ascent on the best wrong logit minus the label's, in the ball."""
    z0 = scale.normalise(center).float()
    idx = list(positions)
    delta = torch.zeros(len(idx), center.shape[1], requires_grad=True)
    low, span = scale.low.float(), scale.span.float()
    for _ in range(steps):
        z = z0.clone()
        z[idx] = (z0[idx] + delta).clamp(0, 1)
        logits = model.forward_embedded((low + span * z).unsqueeze(0), torch.ones(1, center.shape[0], dtype=torch.bool))[0]
        others = torch.cat([logits[:label], logits[label + 1:]])
        loss = others.max() - logits[label]
        (grad,) = torch.autograd.grad(loss, delta)
        with torch.no_grad():
            if norm is Norm.LINF:
                delta += eps / 8 * grad.sign()
                delta.clamp_(-eps, eps)
            else:
                delta += eps / 8 * grad / (grad.norm() + 1e-12)
                size = delta.norm()
                if size > eps:
                    delta *= eps / size
    z = z0.clone()
    z[idx] = (z0[idx] + delta.detach()).clamp(0, 1)
    return (low + span * z).double()


@pytest.mark.parametrize("make", [_cnn, _bow, _lstm, lambda s: _bow(s, hidden=0)])
@pytest.mark.parametrize("norm", [Norm.L2, Norm.LINF])
@settings(max_examples=5)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 5), multi=st.booleans())
def test_attacks_and_samples_inside_the_certified_ball_keep_the_class(make, norm, seed, length, multi):
    model = make(seed)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, size=length).tolist()
    positions = sorted(set(rng.integers(0, length, size=3 if multi else 1).tolist()))
    verifier = Verifier(model)
    center = verifier.embed(ids)
    label = int(verifier.logits(center).argmax())
    bound = verifier.lower_radius(ids, positions, norm=norm)
    assert 0.0 <= bound.eps <= bound.diameter
    if bound.eps == 0.0:
        return
    points = _sample_ball(center, positions, bound.eps, norm, verifier.scale, 100, rng)
    points = torch.cat([points, _pgd(model, center, positions, bound.eps, norm, verifier.scale, label).unsqueeze(0)])
    with torch.no_grad():
        logits = model.forward_embedded(points.float(), torch.ones(points.shape[:2], dtype=torch.bool))
    assert (logits.argmax(dim=1) == label).all()


@pytest.mark.parametrize("make", [_cnn, _bow, _lstm])
@settings(max_examples=10)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 5), eps=st.floats(0.0, 1.0))
def test_margin_bounds_contain_every_sampled_margin(make, seed, length, eps):
    model = make(seed)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, size=length).tolist()
    positions = [int(rng.integers(0, length))]
    verifier = Verifier(model)
    center = verifier.embed(ids)
    label = int(verifier.logits(center).argmax())
    region = verifier.ball(ids, positions, eps, Norm.L2)
    for method in ("crown", "ibp"):
        bound, _ = verifier.margin_lower(region, label, method)
        points = _sample_ball(center, positions, eps, Norm.L2, verifier.scale, 100, rng)
        logits = verifier.logits(points)
        margins = logits[:, label:label + 1] - logits
        margins[:, label] = float("inf")
        assert (margins >= bound.unsqueeze(0) - 1e-9).all()


# ---- (c) CROWN against IBP, over balls of both norms ------------------------------------------------
@pytest.mark.parametrize("make", [_cnn, _bow])
@settings(max_examples=10)
@given(seed=st.integers(0, 10_000), length=st.integers(1, 6), eps=st.floats(0.0, 1.5), linf=st.booleans())
def test_crown_is_never_looser_than_ibp(make, seed, length, eps, linf):
    model = make(seed)
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, size=length).tolist()
    verifier = Verifier(model)
    label = int(verifier.logits(verifier.embed(ids)).argmax())
    region = verifier.ball(ids, [int(rng.integers(0, length))], eps, Norm.LINF if linf else Norm.L2)
    crown, used = verifier.margin_lower(region, label, "crown")
    ibp, _ = verifier.margin_lower(region, label, "ibp")
    assert used == "crown"
    assert (crown >= ibp).all()
    assert verifier.lower_radius(ids, region.positions, method="crown").eps >= verifier.lower_radius(
        ids, region.positions, method="ibp").eps * (1 - 2e-3)


# ---- padding conventions -----------------------------------------------------------------------------
@pytest.mark.parametrize("make", [_cnn, _bow, _lstm])
def test_a_zero_width_box_gives_the_models_own_margins_in_a_padded_batch(make):
    model = make(3).double()
    rng = np.random.default_rng(3)
    lengths = [1, 4, 2]
    ids = torch.zeros(3, 5, dtype=torch.long)
    for row, n in enumerate(lengths):
        ids[row, :n] = torch.as_tensor(rng.integers(1, VOCAB, size=n))
    mask = ids != 0
    emb = model.embedding(ids).detach()
    logits = model.forward_embedded(emb, mask).detach()
    labels = torch.tensor([0, 1, 0])
    lower = margin_lower_ibp(model, emb, emb, mask, labels)
    expected = logits[torch.arange(3), labels].unsqueeze(1) - logits
    assert torch.allclose(lower, expected, atol=1e-10)
    # the same text alone (no padding) gives the same bound
    alone = margin_lower_ibp(model, emb[1:2, :4], emb[1:2, :4], mask[1:2, :4], labels[1:2])
    assert torch.allclose(alone, lower[1:2], atol=1e-10)


def test_the_hull_of_a_substitution_set_is_its_bounding_box():
    center = torch.zeros(3, 2, dtype=torch.float64)
    region = hull(center, [1], [torch.tensor([[1.0, -2.0], [0.5, 3.0]])])
    assert region.lower[1].tolist() == [0.0, -2.0] and region.upper[1].tolist() == [1.0, 3.0]
    assert region.lower[0].tolist() == [0.0, 0.0] and region.eps is None


def test_the_ball_box_stays_in_the_cube_and_grows_with_eps():
    scale = EmbeddingScale.from_table(torch.tensor([[0.0, 0.0], [0.0, 1.0], [2.0, -1.0]]))
    center = torch.tensor([[0.0, 1.0]], dtype=torch.float64)
    small, large = (ball(center, [0], e, Norm.L2, scale) for e in (0.1, 5.0))
    assert large.lower[0].tolist() == [0.0, -1.0] and large.upper[0].tolist() == [2.0, 1.0]
    assert (small.lower >= large.lower).all() and (small.upper <= large.upper).all()


def test_unsupported_architectures_are_refused_clearly():
    model = TransformerClassifier(TransformerConfig(), VOCAB, 2)
    with pytest.raises(UnsupportedArchitecture, match="not supported for this architecture"):
        Verifier(model)


def test_a_certified_radius_is_a_certified_ball():
    model = _cnn(5)
    verifier = Verifier(model)
    ids = [2, 3, 4]
    bound = verifier.lower_radius(ids, [1], norm="l2", tolerance=1e-3)
    label = int(verifier.logits(verifier.embed(ids)).argmax())
    assert verifier.certifies(verifier.ball(ids, [1], bound.eps, "l2"), label)
    if 0 < bound.eps < bound.diameter:  # the bracket's other end is not certified
        assert not verifier.certifies(verifier.ball(ids, [1], bound.eps * (1 + 2e-3), "l2"), label)
    assert MARGIN_TOL > 0


def test_the_package_exports_its_names_lazily():
    import subprocess
    import sys

    import textrobust.bounds as bounds

    for name in bounds.__all__:
        assert getattr(bounds, name) is not None
    code = "import sys, textrobust.bounds; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
