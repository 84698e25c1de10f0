"""Soundness on real zoo victims (GloVe-initialised, trained on Rotten Tomatoes): projected
gradient ascent and random sampling inside Ball(x, eps_l) never change the class, for the
CNN, the bag of words and the biLSTM, single- and multi-word, L2 and L-infinity."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from textrobust.bounds.certify import Verifier
from textrobust.bounds.region import Norm

pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module", params=["cnn", "bow", "lstm"])
def victim(request, tmp_path_factory):
    from textrobust.zoo.training import train_victim

    out = tmp_path_factory.mktemp(request.param)
    trained = train_victim(request.param, "rotten_tomatoes", out=out / "victim", epochs=1,
                           training={"max_train_examples": 400, "extra_words": 0})
    return trained.victim


@pytest.mark.parametrize("norm", [Norm.L2, Norm.LINF])
def test_no_attack_or_sample_inside_the_certified_ball_changes_the_class(victim, norm):
    from test_bounds import _pgd, _sample_ball
    from textrobust.data import load_dataset

    verifier = Verifier(victim.module)
    model = victim.module.eval()
    rng = np.random.default_rng(0)
    checked = 0
    for example in load_dataset("rotten_tomatoes", split="test").take(4):
        ids_t, mask, _ = victim.encode([example.text])
        ids = ids_t[0][mask[0]].tolist()
        center = verifier.embed(ids)
        label = int(verifier.logits(center).argmax())
        for positions in ([0], [len(ids) // 2], [0, 1, 2][: len(ids)]):
            bound = verifier.lower_radius(ids, positions, norm=norm)
            if bound.eps == 0.0:
                continue
            points = _sample_ball(center, positions, bound.eps, norm, verifier.scale, 100, rng)
            points = torch.cat([points, _pgd(model, center, positions, bound.eps, norm, verifier.scale, label)[None]])
            with torch.no_grad():
                logits = model.forward_embedded(points.float(), torch.ones(points.shape[:2], dtype=torch.bool))
            assert (logits.argmax(dim=1) == label).all()
            checked += 1
    assert checked > 0
