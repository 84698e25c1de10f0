"""Constraint robustness: second-order attacks on the similarity model, curves and ACCS.

Implements Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt). A word-substitution attack
that keeps a swap only when a similarity model S says the text is still similar counts
every success as a flaw of the victim; some are flaws of S (*second-order* adversarial
examples: the meaning changed, S did not notice). For each constraint model S and each
threshold epsilon the analysis runs

- the first-order attack against the victim, S >= epsilon as the constraint (true
  positives), and
- the second-order attack against S itself: three antonym swaps that S still scores
  >= epsilon (false positives),

draws the constraint robustness curve (first- against second-order success rate) and
reports ACCS, its normalised area.

The modules: :mod:`~textrobust.analyses.accs.curve` (curves and ACCS, pure),
:mod:`~textrobust.analyses.accs.settings` (the analysis's settings, which the attacks take as
they are), :mod:`~textrobust.analyses.accs.sweep` (the two attacks and the shared caches of a
threshold sweep), :mod:`~textrobust.attack.constraints.left_context_lm` (the LM constraint),
:mod:`~textrobust.analyses.accs.scorers` (the constraint models),
:mod:`~textrobust.analyses.accs.measures` (units, the typed record, measures over
records), :mod:`~textrobust.analyses.accs.report` (the report section) and
:mod:`~textrobust.analyses.accs.analysis` (:class:`AccsAnalysis`, the protocol adapter,
registered as ``accs``).

>>> from textrobust.analyses.accs import accs
>>> accs([0.3], [0.7], interpolation="trapezoid")   # the paper's toy curve
0.5
"""

from __future__ import annotations

from textrobust.analyses.accs.analysis import AccsAnalysis, AccsSummary, analyse_task
from textrobust.analyses.accs.curve import (
    Interpolation,
    RobustnessCurve,
    accs,
    curve_area,
    epsilon_grid,
    monotone_search,
    normalised_area,
)
from textrobust.analyses.accs.measures import (
    AccsRecord,
    AccsRow,
    AccsTask,
    Bootstrap,
    Shortcut,
    accs_tasks,
    bootstrap_accs,
    curves,
    shortcut_distance,
)
from textrobust.analyses.accs.scorers import (
    CONSTRAINT_MODELS,
    SimilarityMemo,
    build_constraint_model,
    parse_constraint_model,
)
from textrobust.analyses.accs.settings import AccsAnalysisSettings, LMMode, SweepMode
from textrobust.analyses.accs.sweep import AccsComponents, PointResult

__all__ = [
    "CONSTRAINT_MODELS",
    "AccsAnalysis",
    "AccsAnalysisSettings",
    "AccsComponents",
    "AccsRecord",
    "AccsRow",
    "AccsSummary",
    "AccsTask",
    "Bootstrap",
    "Interpolation",
    "LMMode",
    "PointResult",
    "RobustnessCurve",
    "Shortcut",
    "SimilarityMemo",
    "SweepMode",
    "accs",
    "accs_tasks",
    "analyse_task",
    "bootstrap_accs",
    "build_constraint_model",
    "curve_area",
    "curves",
    "epsilon_grid",
    "monotone_search",
    "normalised_area",
    "parse_constraint_model",
    "shortcut_distance",
]
