"""The searches of the attack engine, and the registry that names them.

Every search has one verb, ``search(start, problem) -> SearchOutcome``, takes its
settings as a frozen :class:`~textrobust.config.Config`, uses only the
:class:`~textrobust.attack.problem.Problem` API, scores each step's texts in one batch,
and returns the best text so far with ``budget_exhausted=True`` when the query budget
runs out. Build one by name::

    >>> search = SEARCHES.get("beam")(beam_width=2)
    >>> search
    BeamSearch(beam_width=2, max_depth=None)

Contract tests for any search live in :mod:`textrobust.attack.searches.search_testing`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textrobust.attack.problem import Search
from textrobust.attack.searches.base import BaseSearch
from textrobust.attack.searches.beam import BeamConfig, BeamSearch
from textrobust.attack.searches.exhaustive import ExhaustiveSearch
from textrobust.attack.searches.genetic import GeneticConfig, GeneticSearch
from textrobust.attack.searches.greedy import GreedyConfig, GreedySearch
from textrobust.attack.searches.mcts import MCTSConfig, MCTSSearch
from textrobust.attack.searches.pdp import PseudoDynamicProgramming
from textrobust.attack.searches.pso import ParticleSwarmSearch, PSOConfig
from textrobust.attack.searches.ranking import Ranking, WordImportance, rank_positions
from textrobust.attack.searches.tea import TEAConfig, TEASearch
from textrobust.attack.searches.tea import tef as _tef
from textrobust.registry import Registry

__all__ = [
    "ATTRIBUTION_SEARCHES",
    "SEARCHES",
    "BaseSearch",
    "BeamConfig",
    "BeamSearch",
    "ExhaustiveSearch",
    "PseudoDynamicProgramming",
    "GeneticConfig",
    "GeneticSearch",
    "GreedyConfig",
    "GreedySearch",
    "MCTSConfig",
    "MCTSSearch",
    "PSOConfig",
    "ParticleSwarmSearch",
    "Ranking",
    "TEAConfig",
    "TEASearch",
    "WordImportance",
    "rank_positions",
]

#: name -> factory taking the search's settings as keywords (``SEARCHES.get("pso")(seed=3)``).
SEARCHES: Registry[Callable[..., Search]] = Registry("search")

_ENTRIES: tuple[tuple[str, Callable[..., Any], str], ...] = (
    ("greedy", GreedySearch, "greedy substitution in word-importance order (delete/unk/gradient/random)"),
    ("beam", BeamSearch, "beam search over one-word edits; width 1 is plain greedy"),
    ("genetic", GeneticSearch, "genetic search (Alzantot et al. 2018)"),
    ("pso", ParticleSwarmSearch, "particle swarm search (Zang et al. 2020)"),
)
for _name, _factory, _summary in _ENTRIES:
    SEARCHES.add(_name, _factory, _summary)


# The searches of the robustness-radius work (Yang et al. 2022): PDP bounds the radius from
# above, the exhaustive search proves it from below.
SEARCHES.add("pdp", PseudoDynamicProgramming, "pseudo-dynamic programming: few-substitution attacks (Yang et al. 2022)")
# The upper bound of the maximal safe radius (La Malfa et al. 2020): every success and the closest.
SEARCHES.add("mcts", MCTSSearch, "Monte Carlo tree search (UCT) over word-position sets (La Malfa et al. 2020)")
SEARCHES.add("exhaustive", ExhaustiveSearch, "exhaustive search by layers: a minimal adversarial example (Yang et al. 2022)")

#: The attribution attacks (Ivankay et al. 2022): searches that need an AttributionGoal
#: (move the explanation, keep the prediction), so they are not misclassification searches.
ATTRIBUTION_SEARCHES: Registry[Callable[..., Search]] = Registry("attribution search")
ATTRIBUTION_SEARCHES.add("tea", TEASearch, "TEA: change the explanation, keep the prediction (Ivankay et al. 2022)")
ATTRIBUTION_SEARCHES.add("tef", _tef, "TEF: TEA's loop without batch masking, for embedding neighbours (Ivankay et al. 2021)")

