"""The input sets bound propagation works over, and the sound lower bound of a linear
function over them.

La Malfa et al. (2020), "Assessing Robustness of Text Classification through Maximal Safe
Radius Computation", Definition 1: ``Ball(x, eps)`` holds the embedded texts whose words
at the positions ``I`` move by at most ``eps`` (L2 or L-infinity) in the embedding space
normalised to ``[0, 1]`` per dimension, every other word fixed. The normalisation is the
embedding table's own per-dimension minimum and maximum (padding row left out), so the
normalised space is the cube spanned by the victim's vocabulary; Definition 1's diameter
``d = max_x' ||x_I - x'_I||_p`` (:func:`diameter`: the distance to the farthest corner of
the cube, which depends on the text) gives the normalised radius ``eps / d``. The paper's
tables divide by the diameter of the embedding instead (Table 4: ``sqrt(D)`` in L2, 1 in
L-infinity; :func:`embedding_diameter`), which is 1-2x ``d`` for one word (1.60-1.78x,
mean 1.68, over the words of the first 10 Rotten Tomatoes test texts for the default
CNN), so its normalised numbers are that much smaller; the MSR analysis reports both.

A :class:`Region` is a set of raw embedding matrices ``[T, D]``: a box (always), and for
a ball also the Lp constraint. :func:`lower_linear` bounds ``value + A . (e - center)``
from below over the region by the larger of two sound bounds, one over the box and one
over the ball (each a superset of their intersection), so it is never looser than either.
The hull of a substitution set (Jia et al. 2019) is the box of its word vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import torch

from textrobust.errors import ConfigError

__all__ = ["Norm", "EmbeddingScale", "Region", "ball", "hull", "lower_linear", "diameter", "embedding_diameter"]


class Norm(str, Enum):
    """The norm of the ball (the paper reports L2 and L-infinity)."""

    L2 = "l2"
    LINF = "linf"


@dataclass(frozen=True)
class EmbeddingScale:
    """Per-dimension minimum and span of an embedding table: ``z = (e - low) / span``."""

    low: torch.Tensor  # [D] float64
    span: torch.Tensor  # [D] float64, >= 0 (0 for a constant dimension)

    @classmethod
    def from_table(cls, weight: torch.Tensor) -> EmbeddingScale:
        """From an embedding table ``[V, D]``; row 0 (padding, all zeros) is left out."""
        table = weight.detach().to(torch.float64)
        rows = table[1:] if table.shape[0] > 1 else table
        low = rows.min(dim=0).values
        return cls(low, rows.max(dim=0).values - low)

    def normalise(self, e: torch.Tensor) -> torch.Tensor:
        safe = torch.where(self.span > 0, self.span, torch.ones_like(self.span))
        return torch.where(self.span > 0, (e - self.low) / safe, torch.zeros_like(e)).clamp(0.0, 1.0)

    def distance(self, a: torch.Tensor, b: torch.Tensor, norm: Norm) -> float:
        """The distance of two raw embedding matrices in the normalised space."""
        diff = (self.normalise(a) - self.normalise(b)).flatten()
        return float(diff.abs().max()) if norm is Norm.LINF else float(diff.norm())


@dataclass(frozen=True)
class Region:
    """Raw embedding matrices ``e`` with ``lower <= e <= upper`` (equal outside
    ``positions``), and for a ball also ``||(e - center)_I / span||_p <= eps``."""

    center: torch.Tensor  # [T, D] float64
    lower: torch.Tensor
    upper: torch.Tensor
    positions: tuple[int, ...]
    scale: EmbeddingScale | None = None
    eps: float | None = None
    norm: Norm | None = None


def _check_positions(positions: Sequence[int], length: int) -> tuple[int, ...]:
    kept = tuple(sorted(set(int(p) for p in positions)))
    if not kept or kept[0] < 0 or kept[-1] >= length:
        raise ConfigError(f"Perturbed positions must be a non-empty subset of 0..{length - 1}. Got {list(positions)}.")
    return kept


def ball(center: torch.Tensor, positions: Sequence[int], eps: float, norm: Norm, scale: EmbeddingScale) -> Region:
    """``Ball(x, eps)`` of Definition 1: positions ``I`` move within ``eps`` (normalised
    space, clipped to the cube), the rest stays at ``center``."""
    if not eps >= 0.0:
        raise ConfigError(f"The radius eps must be >= 0. Got {eps!r}.")
    center = center.to(torch.float64)
    kept = _check_positions(positions, center.shape[0])
    z = scale.normalise(center)
    lower, upper = center.clone(), center.clone()
    index = list(kept)
    zl = (z[index] - eps).clamp(0.0, 1.0)
    zu = (z[index] + eps).clamp(0.0, 1.0)
    # the box of the ball: at most eps per coordinate, inside the cube (never shrinks past the center)
    lower[index] = torch.minimum(center[index], scale.low + scale.span * zl)
    upper[index] = torch.maximum(center[index], scale.low + scale.span * zu)
    return Region(center, lower, upper, kept, scale, float(eps), Norm(norm))


def hull(center: torch.Tensor, positions: Sequence[int], vectors: Sequence[torch.Tensor]) -> Region:
    """The box around the convex hull of each position's substitution set (``vectors[k]``:
    ``[n_k, D]`` raw vectors of the words allowed at ``positions[k]``, the original word
    included or not: it is added)."""
    center = center.to(torch.float64)
    if len(vectors) != len(positions):
        raise ConfigError(f"hull needs one vector set per position. Got {len(vectors)} for {len(positions)} positions.")
    lower, upper = center.clone(), center.clone()
    for p, words in zip(positions, vectors):
        words = torch.as_tensor(words, dtype=torch.float64, device=center.device).reshape(-1, center.shape[1])
        if words.shape[0]:
            lower[p] = torch.minimum(lower[p], words.min(dim=0).values)
            upper[p] = torch.maximum(upper[p], words.max(dim=0).values)
    kept = tuple(sorted(set(int(p) for p in positions)))
    return Region(center, lower, upper, kept)


def lower_linear(coef: torch.Tensor, value: torch.Tensor, region: Region) -> torch.Tensor:
    """A sound lower bound of ``value + sum(coef * (e - center)_I)`` over ``region``.

    ``coef``: ``[..., |I|, D]`` on the raw embedding of the positions ``I`` in order
    (float64); ``value``: ``[...]``. The box bound takes each coordinate at its worse end;
    the ball bound is ``-eps`` times the dual norm (L2 for L2, L1 for L-infinity) of
    ``coef`` scaled into the normalised space.
    """
    index = list(region.positions)
    dl = (region.lower - region.center)[index]
    du = (region.upper - region.center)[index]
    box = (torch.minimum(coef * dl, coef * du)).sum(dim=(-1, -2))
    if region.eps is None or region.scale is None:
        return value + box
    scaled = (coef * region.scale.span).flatten(start_dim=-2)
    dual = scaled.abs().sum(dim=-1) if region.norm is Norm.LINF else scaled.norm(dim=-1)
    return value + torch.maximum(box, -region.eps * dual)


def diameter(center: torch.Tensor, positions: Sequence[int], norm: Norm, scale: EmbeddingScale) -> float:
    """``d = max ||x_I - x'_I||_p`` over the cube (the paper's diameter), for this text."""
    z = scale.normalise(center.to(torch.float64))[list(positions)]
    live = (scale.span > 0).to(torch.float64)
    far = torch.maximum(z, 1.0 - z) * live
    return float(far.max()) if Norm(norm) is Norm.LINF else float(far.norm())


def embedding_diameter(norm: Norm | str, scale: EmbeddingScale) -> float:
    """The diameter of the normalised embedding (the paper's Table 4): ``sqrt(D)`` in L2
    over the ``D`` dimensions that vary, 1 in L-infinity (0 when none varies)."""
    live = int((scale.span > 0).sum())
    if not live:
        return 0.0
    return 1.0 if Norm(norm) is Norm.LINF else float(np.sqrt(live))


def as_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()
