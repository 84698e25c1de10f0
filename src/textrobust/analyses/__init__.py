"""The analyses: one question about a victim each, all on one protocol
(:mod:`textrobust.analyses.protocol`).

:data:`ANALYSES` maps a name (the CLI command and the report section) to its
:class:`~textrobust.analyses.protocol.Analysis` class. Adding an analysis is one module and
one line here.

>>> ANALYSES.names()
['attack', 'evaluate']
"""

from __future__ import annotations

from textrobust.analyses.protocol import Analysis
from textrobust.registry import Registry

__all__ = ["ANALYSES", "Analysis"]

#: name -> Analysis class (imported when looked up: the classes pull in the engine).
ANALYSES: Registry[type[Analysis]] = Registry("analysis")


def _register() -> None:
    from textrobust.analyses.attacks import AttackAnalysis
    from textrobust.analyses.evaluation import EvaluateAnalysis

    for cls in (EvaluateAnalysis, AttackAnalysis):
        ANALYSES.add(cls.name, cls, cls.title)


_register()
