"""SO-Beam: the beam-search second-order attack (Algorithm 2).

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3.2 and Algorithm 2: start from
``{x0}``; each iteration takes Neighbor_1 of every text in the beam, stops if one of them
is vulnerable (``F != 0``), else keeps the ``beam_width = 20`` texts with the smallest
loss of Eq. 4; at most ``k = 6`` iterations.

That is exactly the engine's :class:`~textrobust.attack.searches.beam.BeamSearch` run on
the second-order problem: its candidate source is Neighbor_1 one position at a time
(:class:`~textrobust.fill_in.neighbourhood.NeighbourSource`) and its goal is
:class:`~textrobust.analyses.second_order.goal.SecondOrderGoal`, whose score ``exp(-L)`` orders
texts as ``L`` does. So SO-Beam is built here, not written again. Like the released code
(``BeamSearchPlus``), texts already visited are not proposed again.
"""

from __future__ import annotations

from textrobust.attack.searches.beam import BeamSearch
from textrobust.errors import ConfigError

__all__ = ["so_beam"]


def so_beam(*, beam_width: int = 20, max_k: int = 6) -> BeamSearch:
    """SO-Beam's search: a beam of ``beam_width`` texts, at most ``max_k`` changed words
    (Algorithm 2: beta = 20, k = 6).

    >>> so_beam()
    BeamSearch(beam_width=20, max_depth=6)
    """
    for name, value in (("beam_width", beam_width), ("max_k", max_k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"The '{name}' parameter of so_beam must be an int >= 1. Got {value!r} instead.")
    return BeamSearch(beam_width=beam_width, max_depth=max_k)
