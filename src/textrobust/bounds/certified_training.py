"""Certified (IBP) training against the convex hull of each word's substitution set.

Jia, Raghunathan, Göksel and Liang (2019), "Certified Robustness to Adversarial Word
Substitutions", and Huang et al. (2019), "Achieving Verified Robustness to Symbol
Substitutions via Interval Bound Propagation". Every word of a training text may be
replaced by any of its substitutes; the embeddings of a word and its substitutes span a
box (the hull's bounding box, :func:`textrobust.bounds.region.hull`); interval bound
propagation (:mod:`textrobust.bounds.ibp`) gives the worst-case margins over all positions
at once, and the loss mixes the clean cross-entropy with the cross-entropy of the
worst-case logits (``-margin_lower``): ``(1 - kappa_t) CE_clean + kappa_t CE_worst``.
As in Jia et al., the box is scaled from zero width to the full hull (``eps_t`` 0 -> 1)
and ``kappa_t`` from 0 to ``kappa`` over ``ramp_epochs``, then held.

Departures, stated: training starts from a normally trained zoo victim (its vocabulary,
GloVe-initialised and trained weights) instead of from scratch, which stands in for Jia
et al.'s clean warm-up epochs; the substitution sets are given by the caller (a mapping
``word -> substitutes``; the benchmark uses GloVe neighbours, Jia et al. counter-fitted
ones); dropout is off in the bound pass. Uses its own small loop rather than
:func:`textrobust.zoo.training.train_victim`, which stays unchanged.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import Field

from textrobust.bounds.ibp import margin_lower_ibp
from textrobust.bounds.support import architecture_of
from textrobust.config import Config
from textrobust.text import Text

__all__ = ["CertifiedTrainingConfig", "EpochLog", "certified_train", "substitution_table"]


class CertifiedTrainingConfig(Config):
    """``kappa``: weight of the worst-case loss once ramped; ``ramp_epochs``: epochs over
    which the box and ``kappa`` grow from 0 (Jia et al.'s schedule, per step)."""

    epochs: int = Field(default=4, ge=1)
    ramp_epochs: int = Field(default=2, ge=0)
    kappa: float = Field(default=0.8, ge=0.0, le=1.0)
    lr: float = Field(default=1e-3, gt=0.0)
    batch_size: int = Field(default=32, ge=1)
    clip: float | None = Field(default=5.0, gt=0.0)
    max_substitutes: int = Field(default=8, ge=1)
    seed: int = 0


@dataclass(frozen=True)
class EpochLog:
    epoch: int
    clean_loss: float
    worst_loss: float
    eps: float
    seconds: float


def substitution_table(vocab: Any, substitutions: Mapping[str, Sequence[str]], max_substitutes: int) -> torch.Tensor:
    """``[V, K]`` token ids: row ``i`` holds token ``i`` then its substitutes' ids (padded
    with ``i`` itself, so a word without substitutes has a zero-width box)."""
    size = len(vocab)
    table = torch.arange(size).unsqueeze(1).repeat(1, max_substitutes + 1)
    for word, subs in substitutions.items():
        i = vocab.id_of(word)
        if i <= 1:  # padding and <unk> keep their own box
            continue
        ids = [j for j in dict.fromkeys(vocab.id_of(s) for s in subs) if j != i][:max_substitutes]
        if ids:
            table[i, 1:1 + len(ids)] = torch.as_tensor(ids)
    return table


def hull_boxes(model: Any, ids: torch.Tensor, table: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The clean embeddings ``[B, T, D]`` and the hull boxes around them, scaled by ``eps``."""
    center = model.embed(ids)
    subs = model.embedding(table[ids])  # [B, T, K, D]
    lower = center + eps * (subs.min(dim=2).values - center)
    upper = center + eps * (subs.max(dim=2).values - center)
    return center, lower, upper


def certified_train(model: Any, vocab: Any, texts: Sequence[Text], labels: Sequence[int],
                    substitutions: Mapping[str, Sequence[str]], config: CertifiedTrainingConfig | None = None,
                    progress: Callable[[EpochLog], None] | None = None) -> list[EpochLog]:
    """Train ``model`` (a zoo CNN, bag of words or LSTM, in place) on ``texts`` with the
    IBP hull loss; returns one log per epoch."""
    config = config or CertifiedTrainingConfig()
    architecture_of(model)  # refuses what IBP does not cover
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    table = substitution_table(vocab, substitutions, config.max_substitutes)
    encoded = vocab.encode(list(texts))
    all_ids = torch.as_tensor(encoded.ids)
    all_mask = torch.as_tensor(encoded.mask)
    y_all = torch.as_tensor(list(labels), dtype=torch.long)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    steps_per_epoch = math.ceil(len(texts) / config.batch_size)
    ramp_steps = config.ramp_epochs * steps_per_epoch
    step = 0
    logs = []
    for epoch in range(config.epochs):
        began = time.perf_counter()
        order = rng.permutation(len(texts))
        clean_sum = worst_sum = 0.0
        for start in range(0, len(order), config.batch_size):
            rows = torch.as_tensor(order[start:start + config.batch_size])
            width = int(all_mask[rows].sum(dim=1).max())
            ids, mask, y = all_ids[rows, :width], all_mask[rows, :width], y_all[rows]
            ramp = 1.0 if ramp_steps == 0 else min(1.0, step / ramp_steps)
            eps, kappa = ramp, config.kappa * ramp
            model.train()
            clean = F.cross_entropy(model(ids, mask), y)
            model.eval()  # the bound pass: dropout off
            _, lower, upper = hull_boxes(model, ids, table, eps)
            worst_logits = -margin_lower_ibp(model, lower, upper, mask, y)
            worst = F.cross_entropy(worst_logits, y)
            loss = (1.0 - kappa) * clean + kappa * worst
            optimiser.zero_grad()
            loss.backward()
            if config.clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
            optimiser.step()
            with torch.no_grad():
                model.embedding.weight[0].zero_()  # the padding row stays zero
            clean_sum += float(clean.detach()) * len(rows)
            worst_sum += float(worst.detach()) * len(rows)
            step += 1
        log = EpochLog(epoch + 1, clean_sum / len(texts), worst_sum / len(texts), eps, time.perf_counter() - began)
        logs.append(log)
        if progress is not None:
            progress(log)
    model.eval()
    return logs
