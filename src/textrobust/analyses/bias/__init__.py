"""Counterfactual token bias over the neighbourhoods of a test set (double perturbation).

Zhang, Zhao, Zhang, Chang and Hsieh, "Double Perturbation: On the Robustness of Robustness
and Counterfactual Bias Evaluation", NAACL 2021, Section 4 (../shared/papers/double-
perturbation-second-order-robustness-and-bias.txt).

- :mod:`~textrobust.analyses.bias.pairs`: protected groups (gender after Zhao et al. 2018,
  nationality, religion, sexual orientation) and their pairs;
- :mod:`~textrobust.analyses.bias.settings`: the settings of the ``bias`` analysis, which the
  measurement takes as they are;
- :mod:`~textrobust.analyses.bias.counterfactual`: F_soft, B_{p,k} (Eq. 5-6), X_filter, sampling;
- :mod:`~textrobust.analyses.bias.report`: tables (Table 5), histograms and B-against-k figures;
- :mod:`~textrobust.analyses.bias.augment`: gender-swap augmentation for a debiased zoo victim.

Nothing heavy is imported here.
"""

from textrobust.analyses.bias.augment import GenderSwap, gender_swap
from textrobust.analyses.bias.counterfactual import (
    Anchor,
    AnchorMeasure,
    AnchorScan,
    PairMeasure,
    SoftStats,
    find_anchors,
    histogram_edges,
    measure_anchor,
    scan_anchors,
    stored_bias_records,
)
from textrobust.analyses.bias.pairs import (
    NATIONALITY_WORDS,
    PROTECTED_GROUPS,
    RELIGION_WORDS,
    SEXUAL_ORIENTATION_WORDS,
    ProtectedGroup,
    ProtectedPair,
    protected_groups,
    protected_words,
)
from textrobust.analyses.bias.report import PairRow, bias_table, markdown_table, pair_histogram, write_bias_report
from textrobust.analyses.bias.settings import BiasSettings

__all__ = [
    "NATIONALITY_WORDS",
    "PROTECTED_GROUPS",
    "RELIGION_WORDS",
    "SEXUAL_ORIENTATION_WORDS",
    "Anchor",
    "AnchorMeasure",
    "AnchorScan",
    "BiasSettings",
    "GenderSwap",
    "PairMeasure",
    "PairRow",
    "ProtectedGroup",
    "ProtectedPair",
    "SoftStats",
    "bias_table",
    "find_anchors",
    "gender_swap",
    "histogram_edges",
    "markdown_table",
    "measure_anchor",
    "pair_histogram",
    "protected_groups",
    "protected_words",
    "scan_anchors",
    "stored_bias_records",
    "write_bias_report",
]
