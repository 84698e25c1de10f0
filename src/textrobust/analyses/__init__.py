"""The analyses: one question about a victim each, all on one protocol
(:mod:`textrobust.analyses.protocol`).

:data:`ANALYSES` maps a name (the CLI command and the report section) to its
:class:`~textrobust.analyses.protocol.Analysis` class. Adding an analysis is one module and
one line here.

>>> ANALYSES.names()
['accs', 'attack', 'attribution', 'bias', 'evaluate', 'msr', 'pr', 'radius', 'second-order']
"""

from __future__ import annotations

from textrobust.analyses.protocol import Analysis, AnyAnalysis
from textrobust.registry import Registry

__all__ = ["ANALYSES", "Analysis", "AnyAnalysis"]

#: name -> Analysis class (imported when looked up: the classes pull in the engine).
ANALYSES: Registry[type[AnyAnalysis]] = Registry("analysis")


def _register() -> None:
    from textrobust.analyses.accs.analysis import AccsAnalysis
    from textrobust.analyses.attack.analysis import AttackAnalysis
    from textrobust.analyses.attribution.analysis import AttributionAnalysis
    from textrobust.analyses.bias.analysis import BiasAnalysis
    from textrobust.analyses.evaluate.analysis import EvaluateAnalysis
    from textrobust.analyses.msr.analysis import MsrAnalysis
    from textrobust.analyses.radius.analysis import PRMetricAnalysis, RadiusBoundsAnalysis
    from textrobust.analyses.second_order.analysis import SecondOrderAnalysis

    for cls in (EvaluateAnalysis, AttackAnalysis, AccsAnalysis, RadiusBoundsAnalysis, PRMetricAnalysis,
                SecondOrderAnalysis, BiasAnalysis, AttributionAnalysis, MsrAnalysis):
        ANALYSES.add(cls.name, cls, cls.title)


_register()
