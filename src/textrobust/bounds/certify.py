"""Certified lower bounds of the maximal safe radius, by bisection on bound propagation.

La Malfa et al. (2020), Section 2.3: ``eps_l`` is the largest radius for which every text
of ``Ball(x, eps_l)`` (Definition 1, over the positions ``I``) keeps the network's class.
:class:`Verifier` bounds the margin ``logit_y - logit_c`` from below over a region
(CROWN for CNN and bag of words, forward-mode linear relaxation for the LSTM, IBP as the
cheap alternative) and
:meth:`Verifier.lower_radius` bisects on ``eps`` in ``[0, d]`` (``d`` the diameter over
``I``) until the bracket ``[lo, hi]`` is at most ``tolerance * hi`` wide (relative, so the
small radii of recurrent models keep their digits), returning its certified end.

Soundness margins (departures from exact arithmetic, stated): bounds are computed in
float64 on a float64 copy of the model while the victim runs in float32, so a region
counts as certified only when every margin's lower bound exceeds :data:`MARGIN_TOL`
(1e-4 logits), far above the float32 rounding of these small models. The reported CROWN
bound is the larger of CROWN's and IBP's (both sound), so it is never looser than IBP.
The LSTM's linear bound (:mod:`textrobust.bounds.lstm_linear`, POPQORN's setting, its
``method_used`` is ``"linear"``) is likewise the larger of it and IBP; its departures
from POPQORN (forward mode, McCormick planes instead of optimised ones) are stated there.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any

import torch

from textrobust.bounds.crown import affine_preactivations, crown_margin_lower
from textrobust.bounds.ibp import margin_lower_ibp
from textrobust.bounds.lstm_linear import lstm_linear_margin_lower
from textrobust.bounds.region import EmbeddingScale, Norm, Region, ball, diameter
from textrobust.bounds.support import architecture_of
from textrobust.errors import ConfigError

__all__ = ["MARGIN_TOL", "BoundMethod", "RadiusBound", "Verifier"]

#: A region is certified when every margin's lower bound exceeds this many logits.
MARGIN_TOL = 1e-4
#: Radii below this share of the diameter are reported as 0.
_SMALLEST = 1e-9


@contextmanager
def _one_thread() -> Iterator[None]:
    """Bound propagation is many tiny tensor operations: on a shared machine, torch's
    intra-op threads cost more than they save (measured 8x slower under load). One
    thread while bounding; the caller's setting is restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class BoundMethod(str, Enum):
    """``crown``: linear relaxation (CROWN for the CNN and bag of words, the forward-mode
    relaxation of :mod:`textrobust.bounds.lstm_linear` for the LSTM); ``ibp``: intervals."""

    CROWN = "crown"
    IBP = "ibp"


@dataclass(frozen=True)
class RadiusBound:
    """A certified lower bound of the MSR over one position set."""

    positions: tuple[int, ...]
    eps: float  # in the normalised space
    diameter: float
    method: str  # the method asked for
    method_used: str  # what ran: "crown" (CNN, bag of words), "linear" (LSTM) or "ibp"
    bisection_steps: int

    @property
    def normalised(self) -> float:
        """``eps / d``; 1.0 means no substitution of the words at ``I`` changes the class."""
        return self.eps / self.diameter if self.diameter > 0 else 0.0


class Verifier:
    """Bound propagation over one zoo word model (a float64 copy of it, on the model's
    device: every tensor of a bound is created there).

    ``model``: a :class:`~textrobust.zoo.cnn.CnnClassifier`, ``BowClassifier`` or
    ``LstmClassifier``; anything else raises :class:`~textrobust.bounds.support.
    UnsupportedArchitecture`.
    """

    def __init__(self, model: Any) -> None:
        self.kind = architecture_of(model)
        self.model = copy.deepcopy(model).to(torch.float64).eval()
        self.device = next(self.model.parameters()).device
        self.scale = EmbeddingScale.from_table(self.model.embedding.weight)

    def __repr__(self) -> str:
        return f"Verifier(kind={self.kind!r})"

    # ---- points --------------------------------------------------------------------------------
    def embed(self, ids: Sequence[int]) -> torch.Tensor:
        """The raw embedding ``[T, D]`` (float64) of one text's token ids."""
        with torch.no_grad():
            return self.model.embedding(torch.as_tensor(list(ids), dtype=torch.long, device=self.device))

    def logits(self, embedded: torch.Tensor) -> torch.Tensor:
        """The float64 logits of one embedded text ``[T, D]`` (or a batch ``[B, T, D]``)."""
        batch = embedded if embedded.dim() == 3 else embedded.unsqueeze(0)
        mask = torch.ones(batch.shape[:2], dtype=torch.bool, device=self.device)
        with torch.no_grad():
            out = self.model.forward_embedded(batch.to(torch.float64), mask)
        return out if embedded.dim() == 3 else out[0]

    # ---- bounds ---------------------------------------------------------------------------------
    def margin_lower(self, region: Region, label: int, method: BoundMethod | str = BoundMethod.CROWN,
                     pre: Any = None) -> tuple[torch.Tensor, str]:
        """Lower bounds ``[L]`` of ``logit_label - logit_c`` over ``region`` (``+inf`` at
        ``c = label``), and the method that produced them. ``pre``: the CROWN
        pre-activations of this center and these positions, when already computed."""
        method = BoundMethod(method)
        with torch.no_grad(), _one_thread():
            lower = region.lower.unsqueeze(0)
            upper = region.upper.unsqueeze(0)
            mask = torch.ones(lower.shape[:2], dtype=torch.bool, device=self.device)
            ibp = margin_lower_ibp(self.model, lower, upper, mask, torch.tensor([label], device=self.device))[0]
            used = "ibp"
            bound = ibp
            if method is BoundMethod.CROWN and self.kind in ("cnn", "bow"):
                bound = torch.maximum(crown_margin_lower(self.model, self.kind, region, label, pre), ibp)
                used = "crown"
            elif method is BoundMethod.CROWN:  # the LSTM
                bound = torch.maximum(lstm_linear_margin_lower(self.model, region, label), ibp)
                used = "linear"
        bound = bound.clone()
        bound[label] = float("inf")
        return bound, used

    def method_used(self, method: BoundMethod | str = BoundMethod.CROWN) -> str:
        """What runs for ``method`` on this model: ``"ibp"``, ``"crown"`` (CNN, bag of words)
        or ``"linear"`` (the LSTM's forward-mode linear relaxation)."""
        if BoundMethod(method) is BoundMethod.IBP:
            return "ibp"
        return "linear" if self.kind == "lstm" else "crown"

    def certifies(self, region: Region, label: int, method: BoundMethod | str = BoundMethod.CROWN,
                  pre: Any = None) -> bool:
        """True when no point of ``region`` can change the class from ``label``."""
        bound, _ = self.margin_lower(region, label, method, pre)
        return bool(bound.min() > MARGIN_TOL)

    def ball(self, ids: Sequence[int], positions: Sequence[int], eps: float, norm: Norm | str) -> Region:
        return ball(self.embed(ids), positions, eps, Norm(norm), self.scale)

    def lower_radius(
        self,
        ids: Sequence[int],
        positions: Sequence[int],
        *,
        norm: Norm | str = Norm.L2,
        method: BoundMethod | str = BoundMethod.CROWN,
        tolerance: float = 1e-3,
        label: int | None = None,
    ) -> RadiusBound:
        """The certified ``eps_l`` for the words at ``positions`` of the text ``ids``.

        ``label``: the class to keep (default: the float64 model's prediction). ``d``
        certified: ``d``; otherwise halve from ``d`` until certified (below ``1e-9 d``: 0),
        then bisect until the bracket ``[lo, hi]`` is at most ``tolerance * hi`` wide (a
        relative tolerance: the answer is within ``tolerance`` of the radius at which the
        method stops certifying)."""
        if not 0.0 < tolerance < 1.0:
            raise ConfigError(f"The 'tolerance' parameter of lower_radius must be in (0, 1). Got {tolerance!r}.")
        norm, method = Norm(norm), BoundMethod(method)
        center = self.embed(ids)
        positions = tuple(sorted(set(int(p) for p in positions)))
        d = diameter(center, positions, norm, self.scale)
        if label is None:
            label = int(self.logits(center).argmax())
        used = self.method_used(method)

        pre = None
        if used == "crown":
            with torch.no_grad():
                pre = affine_preactivations(self.model, self.kind, ball(center, positions, 0.0, norm, self.scale))

        def certified(eps: float) -> bool:
            return self.certifies(ball(center, positions, eps, norm, self.scale), label, method, pre)

        with _one_thread():
            return self._bisect(certified, positions, d, method, used, tolerance)

    @staticmethod
    def _bisect(certified: Any, positions: tuple[int, ...], d: float, method: BoundMethod, used: str,
                tolerance: float) -> RadiusBound:
        steps = 0
        if d <= 0 or not certified(0.0):
            return RadiusBound(positions, 0.0, d, method.value, used, steps)
        if certified(d):
            return RadiusBound(positions, d, d, method.value, used, steps)
        lo, hi = 0.0, d
        while lo == 0.0:  # halve until certified: small radii keep their digits
            mid = hi / 2
            steps += 1
            if mid < d * _SMALLEST:
                return RadiusBound(positions, 0.0, d, method.value, used, steps)
            if certified(mid):
                lo = mid
            else:
                hi = mid
        while hi - lo > tolerance * hi:
            mid = (lo + hi) / 2
            steps += 1
            if certified(mid):
                lo = mid
            else:
                hi = mid
        return RadiusBound(positions, lo, d, method.value, used, steps)
