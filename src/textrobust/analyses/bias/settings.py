"""The settings of the ``bias`` analysis: one class, whose fields are the options of
``textrobust bias`` (and the keys stored with a run), taken as they are by
:func:`~textrobust.analyses.bias.counterfactual.measure_anchor`.

Zhang, Zhao, Zhang, Chang and Hsieh, "Double Perturbation: On the Robustness of Robustness
and Counterfactual Bias Evaluation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 4.
"""

from __future__ import annotations

from pydantic import Field

from textrobust.analyses.protocol import Settings
from textrobust.fill_in.registry import DEFAULT_FILL_IN, FILL_IN_HELP

__all__ = ["BiasSettings"]


class BiasSettings(Settings):
    """Counterfactual token bias: the first ``n`` examples, the protected ``group`` s, the
    largest neighbourhood distance ``max_k`` (the paper: 3), Neighbor_k enumerated up to
    ``exact_up_to`` and ``samples`` random walks per sentence above it (default 1, so the
    command takes seconds per anchor; the paper's 2 enumerates Neighbor_2, minutes per
    anchor on two cores), the X_filter threshold ``eps``, the class ``label`` of f_soft,
    ``both_directions``, the ``fill_in`` model and Algorithm 1's ``kappa`` and ``delta``.
    The samples' seed is the run's (``measure_anchor`` takes it)."""

    n: int | None = Field(default=50, ge=0, description="Only the first n examples (about 10 gender anchors per 50 "
                                                          "Rotten Tomatoes sentences, 10-20 s each).")
    group: tuple[str, ...] = Field(default=("gender",),
                                   description="Protected group(s): gender, nationality, religion, sexual_orientation "
                                               "or all (repeatable; default gender).")
    max_k: int = Field(default=3, ge=0, description="Largest neighbourhood distance k (the paper: 3).")
    exact_up_to: int = Field(default=1, ge=0, description="Enumerate Neighbor_k in full up to this k, sample above. "
                                                          "The paper's 2 enumerates Neighbor_2: 3-8 minutes per anchor "
                                                          "instead of ~10 s.")
    samples: int = Field(default=200, ge=1, description="Random walks per test sentence for a sampled k.")
    eps: float = Field(default=0.005, gt=0, description="X_filter: |F_soft(x0)| below this.")
    label: int | None = Field(default=None, ge=0, description="Class index of f_soft (default: the last label).")
    both_directions: bool = Field(default=False, description="Also use sentences holding the second word.")
    fill_in: str = Field(default=DEFAULT_FILL_IN, description=FILL_IN_HELP)
    kappa: int = Field(default=20, ge=1, description="Neighbourhood: at most kappa words per position.")
    delta: float = Field(default=3.0, ge=0.0, description="Neighbourhood: keep words within delta of the best score.")
