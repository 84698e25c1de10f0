"""Second-order robustness: neighbourhoods of test sentences and second-order attacks.

Zhang, Zhao, Zhang, Chang and Hsieh, "Double Perturbation: On the Robustness of Robustness
and Counterfactual Bias Evaluation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt).

- :class:`Neighbourhood`: Neighbor_k(x) from any fill-in model (Algorithm 1);
- :class:`PatchFinder` / :class:`Patch`: the synonym pair ``p`` whose substitution is
  studied, chosen per sentence by the victim's single-word prediction difference;
- :class:`SecondOrderGoal`: ``x`` and ``x (+) p`` get different labels (Eq. 2-4, with the
  multi-class generalisation documented in :mod:`textrobust.analyses.second_order.goal`);
- searches: :func:`so_beam` (Algorithm 2), :class:`SOEnum`, :class:`RandomBaseline`;
- :class:`SecondOrderAttack` to run them (over a data set: the ``second-order`` analysis).

Counterfactual token bias (Section 4) lives in :mod:`textrobust.analyses.bias`. Nothing heavy is
imported here.
"""

from textrobust.analyses.second_order.method import (
    SECOND_ORDER_SEARCHES,
    SecondOrderAttack,
    SecondOrderResult,
    add_perplexity,
    summary,
)
from textrobust.analyses.second_order.goal import SecondOrderGoal, labels_differ, second_order_loss, soft_difference
from textrobust.fill_in.neighbourhood import (
    Neighbourhood,
    NeighbourhoodConfig,
    NeighbourSource,
    keep_by_logit,
    masked_key,
)
from textrobust.analyses.second_order.patch import Patch, PatchFinder, default_synonyms, prediction_difference
from textrobust.analyses.second_order.random_baseline import RandomBaseline, RandomBaselineConfig
from textrobust.analyses.second_order.so_beam import so_beam
from textrobust.analyses.second_order.so_enum import SOEnum, SOEnumConfig

__all__ = [
    "SECOND_ORDER_SEARCHES",
    "NeighbourSource",
    "Neighbourhood",
    "NeighbourhoodConfig",
    "Patch",
    "PatchFinder",
    "RandomBaseline",
    "RandomBaselineConfig",
    "SOEnum",
    "SOEnumConfig",
    "SecondOrderAttack",
    "SecondOrderGoal",
    "SecondOrderResult",
    "add_perplexity",
    "default_synonyms",
    "keep_by_logit",
    "labels_differ",
    "masked_key",
    "prediction_difference",
    "second_order_loss",
    "so_beam",
    "soft_difference",
    "summary",
]
