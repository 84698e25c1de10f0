"""Robustness radius: PDP upper bounds, an exhaustive prover for lower bounds, and the
PAC-style robustness metric PR.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt).

- :mod:`~textrobust.attack.space`: the perturbation space ``Omega_r(X)``, exact sizes,
  lazy enumeration, exact uniform sampling; :class:`SpaceSource` for the engine's searches.
- :mod:`~textrobust.attack.candidates.wordnet_cosine`: ``S(X, p)``, WordNet synonyms cleaned by
  counter-fitted cosine (HowNet is not available offline).
- :mod:`~textrobust.attack.searches.pdp`: Algorithm 1 (PDP) as a Search.
- :mod:`~textrobust.attack.searches.exhaustive`: the simple prover and its Search form.
- :mod:`~textrobust.analyses.radius.pr`: PR_hat with Hoeffding's guarantee.
- :mod:`~textrobust.analyses.radius.settings`: the settings of the ``radius`` and ``pr``
  analyses, which the per-example classes of ``method`` take as they are.
- :mod:`~textrobust.analyses.radius.method`: the per-example analysis and its typed results,
  Tables 2-3 and Figure 4-5 data as pure functions of them (the ``radius`` and ``pr``
  analyses of :mod:`textrobust.analyses.radius.analysis` run them over a data set).
- :mod:`~textrobust.analyses.radius.plots`: the figures (matplotlib, Agg).

>>> from textrobust.analyses.radius import PerturbationSpace, hoeffding_samples
>>> from textrobust.text import Text
>>> space = PerturbationSpace(Text.from_string("a good film"), (1, 2), (("fine", "nice"), ("movie",)))
>>> space.size(1), hoeffding_samples(0.025, 0.005)
(4, 4794)

Nothing heavy is imported here: WordNet, vectors and matplotlib load on first use.
"""

from __future__ import annotations

from textrobust.analyses.radius.method import (
    Bounds,
    BoundsSummary,
    MethodOutcome,
    MethodRow,
    OptimalityRow,
    PRAnalysis,
    PRResult,
    PRStats,
    ProverOutcome,
    RadiusAnalysis,
    RadiusResult,
    RadiusRow,
    RadiusVerdict,
    SpaceInfo,
    Throughput,
    YieldCurves,
    attack_table,
    bounds_summary,
    certified_table,
    falsified_share,
    optimality_table,
    pr_summary,
    raw_forward_speed,
    throughput_summary,
    yield_curves,
)
from textrobust.attack.cap import ModificationCap, modification_cap
from textrobust.attack.searches.pdp import PDPConfig, PseudoDynamicProgramming
from textrobust.analyses.radius.settings import METHODS, PRMetricSettings, RadiusBoundsSettings
from textrobust.analyses.radius.pr import (PRConfig, PREstimate, PRSample, PRSwap, estimate_pr, hoeffding_epsilon,
                                        hoeffding_samples, pr_radius)
from textrobust.attack.searches.exhaustive import (
    ExhaustiveProver,
    ExhaustiveSearch,
    ExhaustiveSearchConfig,
    Proof,
    ProverConfig,
    Sensitivity,
    Verdict,
    sensitivity_order,
)
from textrobust.attack.space import PerturbationSpace, SpaceSource, build_space, space_from_problem, space_rng
from textrobust.attack.candidates.wordnet_cosine import CleanedSynonyms, CleanedSynonymsConfig

__all__ = [
    "METHODS",
    "SEARCH_ENTRIES",
    "Bounds",
    "BoundsSummary",
    "CleanedSynonyms",
    "CleanedSynonymsConfig",
    "ExhaustiveProver",
    "ExhaustiveSearch",
    "ExhaustiveSearchConfig",
    "MethodOutcome",
    "MethodRow",
    "ModificationCap",
    "OptimalityRow",
    "PDPConfig",
    "PRAnalysis",
    "PRConfig",
    "PREstimate",
    "PRMetricSettings",
    "PRResult",
    "PRSample",
    "PRStats",
    "PRSwap",
    "PerturbationSpace",
    "Proof",
    "ProverConfig",
    "ProverOutcome",
    "PseudoDynamicProgramming",
    "RadiusAnalysis",
    "RadiusBoundsSettings",
    "RadiusResult",
    "RadiusRow",
    "RadiusVerdict",
    "Sensitivity",
    "SpaceInfo",
    "SpaceSource",
    "Throughput",
    "Verdict",
    "YieldCurves",
    "attack_table",
    "bounds_summary",
    "build_space",
    "certified_table",
    "estimate_pr",
    "falsified_share",
    "hoeffding_epsilon",
    "hoeffding_samples",
    "modification_cap",
    "optimality_table",
    "pr_radius",
    "pr_summary",
    "raw_forward_speed",
    "sensitivity_order",
    "space_from_problem",
    "space_rng",
    "throughput_summary",
    "yield_curves",
]

#: (name, factory, summary) of the searches this package adds, for the engine's SEARCHES
#: registry: ``for e in SEARCH_ENTRIES: SEARCHES.add(*e)``.
SEARCH_ENTRIES = (
    ("pdp", PseudoDynamicProgramming, "pseudo-dynamic programming: few-substitution attacks (Yang et al. 2022)"),
    ("exhaustive", ExhaustiveSearch, "exhaustive search by layers: a minimal adversarial example (Yang et al. 2022)"),
)
