"""The maximum modification ratio tau of Yang et al. (2022), as one rule shared by PDP,
the baselines and the PR metric.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Algorithm 1, line 8:
an adversarial example counts only if ``||X' - X||_0 <= tau * n``. Here ``n`` is the
number of modifiable words of the original (for a premise/hypothesis pair, the
hypothesis), so the cap is ``floor(tau * n)``; a text shorter than ``1 / tau`` words
therefore admits no substitution at all. The engine's
:class:`~textrobust.attack.constraints.MaxModificationRate` rounds up instead (and allows
at least one word), so the baselines of the radius analysis use :class:`ModificationCap`,
which applies exactly this rule, to compare every method under the same constraint.
"""

from __future__ import annotations

import math

from pydantic import Field

from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["ModificationCap", "ModificationCapConfig", "modification_cap"]


def modification_cap(text: Text, tau: float) -> int:
    """``floor(tau * n)`` with ``n = len(text.modifiable)``: the most words an adversarial
    example of ``text`` may change (``tau * n`` is rounded to 9 decimals first, so
    ``0.25 * 12`` gives 3 and not 2 by floating-point accident).

    >>> from textrobust.analyses.radius import modification_cap
    >>> from textrobust.text import Text
    >>> modification_cap(Text.from_string("one two three four five six seven eight"), 0.25)
    2
    """
    if not 0.0 < tau <= 1.0:
        raise ConfigError(f"The 'tau' parameter must be in (0, 1]. Got {tau} instead.")
    return math.floor(round(tau * len(text.modifiable), 9))


class ModificationCapConfig(Config):
    tau: float = Field(default=0.25, gt=0.0, le=1.0)


class ModificationCap:
    """Position constraint: no position may change once ``floor(tau * n)`` words differ
    from the original (see :func:`modification_cap`).

    >>> from textrobust.analyses.radius import ModificationCap
    >>> from textrobust.text import Text
    >>> t = Text.from_string("one two three four five six seven eight")
    >>> ModificationCap(0.25).allowed(t, t.replace({0: "x", 1: "y"}), frozenset({2, 3}))
    frozenset()
    """

    def __init__(self, tau: float = 0.25) -> None:
        self.config = ModificationCapConfig(tau=tau)

    def allowed(self, original: Text, current: Text, positions: frozenset[int]) -> frozenset[int]:
        if original.l0(current) >= modification_cap(original, self.config.tau):
            return frozenset()
        return frozenset(positions)

    def __repr__(self) -> str:
        return f"ModificationCap(tau={self.config.tau})"
