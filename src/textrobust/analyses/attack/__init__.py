"""The ``attack`` analysis: a first-order attack recipe (TextFooler, PWWS, ...) over the
examples. Each recipe cites its own paper (:mod:`textrobust.attack.recipes`); the
metrics are those of Morris et al. 2020 (TextAttack). The engine is :mod:`textrobust.attack`; this package only runs it on the
analysis protocol: :mod:`~textrobust.analyses.attack.analysis`.
"""

from textrobust.analyses.attack.analysis import AttackAnalysis, AttackRecord, AttackSettings, AttackSummary

__all__ = ["AttackAnalysis", "AttackRecord", "AttackSettings", "AttackSummary"]
