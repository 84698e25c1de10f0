"""Sound bound propagation over the zoo's word models: the certified lower bound of the
maximal safe radius (La Malfa et al. 2020, Section 2.3), and IBP for certified training.

Written for this project because auto_LiRPA cannot be installed here (its PyPI release 0.3
pins torch<1.13 and numpy 1 APIs) and PyPI's ``bound-propagation`` is GPL-3 and
feed-forward only. Covered: the embedding box/ball on the positions ``I`` (normalised to
[0, 1] per dimension), Conv1d with the zoo's padding, ReLU, max-pool over time with masks,
mean pooling, linear layers (CROWN and IBP), and the bidirectional LSTM over real
positions only (POPQORN's setting: linear lines for sigmoid/tanh and McCormick planes for
their products, in forward mode, :mod:`~textrobust.bounds.lstm_linear`; and IBP).
Soundness is tested against an exact MILP, a dense grid, projected gradient attacks and
sampling (``tests/test_bounds*.py``).

Importing this package does not import torch; the modules below do.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BoundMethod", "Norm", "RadiusBound", "UnsupportedArchitecture", "Verifier", "supported"]


def __getattr__(name: str) -> Any:
    if name in ("BoundMethod", "RadiusBound", "Verifier"):
        from textrobust.bounds import certify

        return getattr(certify, name)
    if name == "Norm":
        from textrobust.bounds.region import Norm

        return Norm
    if name in ("UnsupportedArchitecture", "supported"):
        from textrobust.bounds import support

        return getattr(support, name)
    raise AttributeError(f"module 'textrobust.bounds' has no attribute {name!r}")
